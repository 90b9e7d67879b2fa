// Predicted vs published GEMM throughput: the accuracy table of the compute model's GEMM
// timing (`trainsim validate gemm`).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/config_paths.h"
#include "base/expected.h"
#include "perf/compute_parameters.h"
#include "validation/gemm_measurements.h"

namespace trainsim::validation {

struct GemmComparison {
  MeasuredGemm measured;
  double predicted_tflops = 0.0;
  double error = 0.0;  // predicted / published - 1
  // The model's plan for the shape: tile, tiles and waves on the whole GPU.
  int64_t tile_m = 0;
  int64_t tile_n = 0;
  int64_t waves = 0;
  // Harness sources only (0 elsewhere): the rate with the model calibrated on the source's
  // other labels (calibrate/gemm_fit.h), and calibrated on all of its rows.
  double held_out_tflops = 0.0;
  double in_sample_tflops = 0.0;
};

// Errors of a set of rows, each predicted / measured rate - 1 (+ = the model too fast).
struct GemmErrors {
  double mape = 0.0;  // mean |error|
  double bias = 0.0;  // mean signed error
  // The whole set as one workload: its measured time over its predicted time - 1, the error of
  // the set's throughput, where the long GEMMs weigh by their time as in a training step.
  double throughput_error = 0.0;
};

struct GemmSourceAccuracy {
  MeasuredGemmSource source;  // its rows are those of `rows`
  std::vector<GemmComparison> rows;
  double mape = 0.0;  // mean |error| over the rows
  GemmErrors errors;  // the model with the parameters given (defaults or a calibration)
  // Harness sources (measured with trainsim-calib-gemm, labelled by the workload each shape
  // belongs to): the calibration `trainsim calibrate --harness` fits, validated leave-one-
  // label-out (fitted on the other labels' shapes, it predicts each label's), and in sample.
  std::optional<GemmErrors> held_out;
  std::optional<GemmErrors> in_sample;
  int labels = 0;  // distinct labels of a harness source
};

// Times every published shape on the GPU and precision it was measured on with
// perf::ComputeModel (`parameters`: the defaults, or a calibration's), the kernel's memory
// traffic included: its inputs and output at the precision's element sizes. A harness source
// is also calibrated on its own rows, leave-one-label-out and in sample (GemmSourceAccuracy).
[[nodiscard]] Expected<std::vector<GemmSourceAccuracy>> compareGemms(const ConfigPaths& paths,
                                                                     const perf::ComputeParameters& parameters);

}  // namespace trainsim::validation
