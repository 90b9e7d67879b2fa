// Predicted vs published GEMM throughput: the accuracy table of the compute model's GEMM
// timing (`trainsim validate gemm`).
#pragma once

#include <string>
#include <vector>

#include "base/config_paths.h"
#include "base/expected.h"
#include "sim/compute_parameters.h"
#include "validate/gemm_measurements.h"

namespace trainsim::validate {

struct GemmComparison {
  MeasuredGemm measured;
  double predicted_tflops = 0.0;
  double error = 0.0;  // predicted / published - 1
  // The model's plan for the shape: tile, tiles and waves on the whole GPU.
  int64_t tile_m = 0;
  int64_t tile_n = 0;
  int64_t waves = 0;
};

struct GemmSourceAccuracy {
  MeasuredGemmSource source;  // its rows are those of `rows`
  std::vector<GemmComparison> rows;
  double mape = 0.0;  // mean |error| over the rows
};

// Times every published shape on the GPU and precision it was measured on with
// sim::ComputeModel (`parameters`: the defaults, or a calibration's), the kernel's memory
// traffic included: its inputs and output at the precision's element sizes.
[[nodiscard]] Expected<std::vector<GemmSourceAccuracy>> compareGemms(const ConfigPaths& paths,
                                                                     const sim::ComputeParameters& parameters);

}  // namespace trainsim::validate
