// ComputeParameters from trainsim-calib-gemm results (calibrate/harness_results_reader.h):
//
//   - matmul ceiling: the best rate over the measured shapes (the "maximum achievable matmul
//     FLOPS" definition the default table uses), as a MeasuredRate of the GPU and precision;
//   - per shape class (perf::gemmShapeClass): the efficiency, as a fraction of the catalog peak,
//     at which the class's shapes, each run once, take their measured total time: their FLOPs
//     over their summed times net of the compute model's per-kernel launch overhead (time -
//     launch_overhead_us, at least half the time; the model adds that overhead to every
//     kernel). A training step's time is such a sum, where the long GEMMs weigh by their time;
//     on one H100 these run slower than the short ones (the board at its power limit lowers
//     the clock), and the median shape's efficiency overstated the measured sets' throughput
//     by 6-8% (configs/validation/gemm.yaml, harness-h100-*; docs/calibration.md);
//   - memory efficiency: the median GB/s of the memory-bandwidth rows of at least 256 MiB
//     (well beyond any L2 cache: 40-60 MB on A100/H100, 126 MB on B200) over the catalog's
//     peak; the largest transfer alone when none is that big.
//
// Rates above the catalog peak are kept at the peak and reported (a wrong --cluster GPU, or
// clocks above the spec's).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/expected.h"
#include "calibrate/harness_results_reader.h"
#include "perf/compute_parameters.h"
#include "topology/gpu_spec.h"

namespace trainsim::calibrate {

struct GemmClassFit {
  std::string shape_class;
  double efficiency = 0.0;  // the class's FLOPs over its net time, fraction of peak
  int shapes = 0;
};

struct GemmShapeCheck {
  GemmSample sample;
  std::string shape_class;
  double default_time_us = 0.0;     // compute model with the starting parameters
  double calibrated_time_us = 0.0;  // compute model with the fitted ones
};

struct GemmFit {
  std::string gpu_key;
  topology::Precision precision = topology::Precision::kBf16;
  double peak_tflops = 0.0;
  std::optional<double> ceiling_tflops;  // absent without GEMM rows
  std::vector<GemmClassFit> classes;
  std::optional<double> memory_efficiency;  // absent without memory rows
  std::vector<GemmShapeCheck> checks;
  std::vector<std::string> warnings;
};

// Fits `results` for `gpu` (the --cluster's GPU); an error when it has no peak at the
// results' precision or no memory bandwidth.
[[nodiscard]] Expected<GemmFit> fitGemm(const topology::GpuSpec& gpu, const GemmResults& results,
                                        const perf::ComputeParameters& start);

// `start` with the fit's rows in place of those of the same GPU / precision / class.
[[nodiscard]] perf::ComputeParameters applyGemmFit(const GemmFit& fit, perf::ComputeParameters start);

}  // namespace trainsim::calibrate
