// Command lines of trainsim-calib-nccl and trainsim-calib-gemm (docs/harness.md). Parsing
// needs no GPU: --help works anywhere, and bad options are reported (exit 2) before any
// CUDA, NCCL or MPI call.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/config_node.h"
#include "base/expected.h"
#include "calibrate/harness/group_layouts.h"
#include "perf/collective.h"
#include "topology/gpu_spec.h"

namespace trainsim::harness {

struct NcclHarnessOptions {
  int64_t min_bytes = 8;                                   // -b, nccl-tests' minbytes
  int64_t max_bytes = 1 << 30;                             // -e
  double step_factor = 2.0;                                // -f
  std::vector<perf::CollectiveOp> ops;                     // default: all five measured ops
  std::vector<LayoutKind> layouts;                         // default: every layout
  int warmup = 5;                                          // untimed repetitions per size
  int iterations = 20;                                     // timed repetitions per size
  topology::Precision dtype = topology::Precision::kBf16;  // fp32 | fp16 | bf16
  int tp = 0;                                              // tp_like group size; 0 = GPUs per node
  std::string out = "trainsim-calib-nccl.yaml";
};

struct GemmHarnessOptions {
  std::vector<std::string> experiments;          // presets or files; their per-GPU GEMM shapes are measured
  std::vector<Override> overrides;               // --set, applied to every experiment
  std::string config_dir;                        // --config-dir / TRAINSIM_CONFIG_DIR; "" = the built-in one
  std::optional<topology::Precision> precision;  // default: the experiments' training precision, else bf16
  bool reference_shapes = true;                  // --no-reference turns the reference set off
  bool unfused_attention = false;                // also measure attention score/context matmuls (unfused attention)
  int warmup = 5;
  int iterations = 20;
  int64_t workspace_bytes = int64_t{32} << 20;  // cuBLASLt workspace
  bool memory_bandwidth = true;                 // --no-memory turns the copy test off
  int64_t memory_min_bytes = int64_t{1} << 20;
  int64_t memory_max_bytes = int64_t{4} << 30;
  double memory_step_factor = 4.0;
  std::string out = "trainsim-calib-gemm.yaml";
  bool dry_run = false;  // print what would be measured and exit, without a GPU
};

// The outcome of parsing: options to run with, or text to print and exit 0 (--help).
template <class Options>
struct CommandLine {
  Options options;
  std::optional<std::string> help;  // set for --help / -h: print it, exit 0
};

// `arguments` excludes the program name. Errors (unknown option, bad value) are kInvalidInput.
[[nodiscard]] Expected<CommandLine<NcclHarnessOptions>> parseNcclHarnessArguments(
    const std::vector<std::string>& arguments);
[[nodiscard]] Expected<CommandLine<GemmHarnessOptions>> parseGemmHarnessArguments(
    const std::vector<std::string>& arguments);

// argv[1..argc-1] as strings.
[[nodiscard]] std::vector<std::string> argumentList(int argc, const char* const* argv);

}  // namespace trainsim::harness
