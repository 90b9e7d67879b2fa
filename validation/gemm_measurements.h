// Published GEMM throughput that the compute model's GEMM timing (perf::ComputeModel: tile and
// wave quantization under a per-GPU ceiling) is checked against (`trainsim validate gemm`),
// read with its citations from <config dir>/validation/gemm.yaml (configs/validation/README.md
// describes the schema). A source's rows are either transcribed in that file or read from a
// trainsim-calib-gemm results file beside it (calibrate/harness_results_reader.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/config_paths.h"
#include "base/expected.h"
#include "calibrate/gemm_traffic.h"
#include "topology/gpu_spec.h"

namespace trainsim::validation {

struct MeasuredGemm {
  std::string gpu;  // GPU catalog key (configs/gpus.yaml)
  topology::Precision precision;
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  int64_t batch = 1;    // equal products in one kernel (grouped experts); harness rows only
  double tflops = 0.0;  // published: 2 m n k batch / time
  // What the shape stands for: the harness's label (the experiment or suite row whose workload
  // runs it, or "reference"); empty for transcribed rows.
  std::string label;
};

struct MeasuredGemmSource {
  std::string id;
  std::string title;
  std::string source;
  // False when the model's matmul ceilings (perf::ComputeParameters::matmul_ceilings) were
  // taken from this source's best rows: those rows check that the tile/wave model reaches its
  // ceiling, not that it predicts an independent measurement.
  bool independent = true;
  // The trainsim-calib-gemm results file the rows were read from, as gemm.yaml names it
  // (relative to its directory), or empty.
  std::string harness_results;
  std::vector<MeasuredGemm> rows;
};

// The file's path: <config dir>/validation/gemm.yaml.
[[nodiscard]] std::string gemmMeasurementsPath(const ConfigPaths& paths);

// All sources of the suite, in the file's order. Errors (file:line:col and key) for an unknown
// or missing key, a value of the wrong type, a precision the catalog does not name, a source
// without rows or an id given twice, a source with both `rows` and `harness_results`, and a
// harness file that does not read or holds no GEMM rows. The GPU keys are checked where the suite looks them up.
[[nodiscard]] Expected<std::vector<MeasuredGemmSource>> loadGemmSources(const ConfigPaths& paths);

}  // namespace trainsim::validation
