// What trainsim-calib-gemm will run, decided before touching a GPU: the precision, the GEMM
// shapes (the experiments' per-GPU shapes first, then the reference set) and the copy sizes
// of the memory-bandwidth test.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/expected.h"
#include "calibrate/harness/gemm_shape_list.h"
#include "calibrate/harness/harness_options.h"
#include "topology/gpu_spec.h"

namespace trainsim::harness {

struct GemmHarnessPlan {
  topology::Precision precision = topology::Precision::kBf16;
  std::vector<HarnessGemmShape> shapes;
  std::vector<int64_t> memory_bytes;  // empty with --no-memory
};

// Loads every --experiment (with the --set overrides) from `options.config_dir`, or from
// `built_in_config_dir` when that is empty. The precision is --precision, else the
// experiments' training precision (an error when they differ), else bf16. Errors are the
// experiment loader's (file:line:col, exit 2).
[[nodiscard]] Expected<GemmHarnessPlan> planGemmHarness(const GemmHarnessOptions& options,
                                                        const std::string& built_in_config_dir);

// The plan as text (--dry-run): the precision, one line per shape with its FLOPs and source,
// the copy sizes.
[[nodiscard]] std::string describeGemmPlan(const GemmHarnessPlan& plan);

}  // namespace trainsim::harness
