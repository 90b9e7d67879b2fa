// `trainsim calibrate` without the command line: from measured collectives (nccl-tests logs,
// trainsim-calib-nccl results), GEMM / memory-bandwidth results (trainsim-calib-gemm) and
// attention benchmarks (cudnn-frontend sdpa) to a Calibration of one cluster, with every fit's
// quality.
//
//   1. Every measured curve gets its alpha-beta summary (latency_bandwidth_fit.h).
//   2. The communication parameters the curves constrain are fitted with the simulator in
//      the loop (communication_fit.h), starting from the defaults.
//   3. GEMM results give the matmul ceiling, per-shape-class efficiencies and the memory
//      efficiency (gemm_fit.h).
//   4. cudnn-frontend sdpa benchmark CSVs give the forward and backward attention full rates
//      and fixed costs per CTA of the cluster's GPU (attention_fit.h), over all the files.
//   5. Measured training steps give the fraction of the kernels' rates reached inside a
//      step (training_step_fit.h), simulated with everything fitted before it.
#pragma once

#include <optional>
#include <vector>

#include "base/expected.h"
#include "calibrate/attention_benchmark_csv.h"
#include "calibrate/attention_fit.h"
#include "calibrate/calibration.h"
#include "calibrate/communication_fit.h"
#include "calibrate/gemm_fit.h"
#include "calibrate/measured_collective.h"
#include "calibrate/training_step_fit.h"
#include "topology/cluster.h"

namespace trainsim::calibrate {

struct CalibrationInputs {
  std::vector<MeasuredCollective> collectives;
  std::vector<GemmResults> gemm;              // one per trainsim-calib-gemm file
  std::vector<AttentionBenchmark> attention;  // one per sdpa benchmark CSV
  std::vector<MeasuredTrainingStep> training_steps;
  std::vector<CalibrationSource> sources;
};

struct CalibrationOptions {
  CommunicationFitOptions communication;
  // The parameters the fits start from (the shipped defaults, perf/default_parameters.h).
  perf::CommunicationParameters communication_start;
  perf::ComputeParameters compute_start;
  // The workload and memory models' constants the training-step fit runs with (the shipped
  // defaults, parallelism/default_model_constants.h).
  parallelism::FlopsOptions workload_start;
  parallelism::MemoryOptions memory_start;
};

struct CalibrationResult {
  Calibration calibration;
  std::optional<CommunicationFit> communication_fit;  // absent without collective measurements
  std::vector<GemmFit> gemm_fits;                     // one per GEMM results input
  std::vector<AttentionFit> attention_fits;           // one per attention benchmark input
  std::optional<AttentionCalibration> attention;      // the tile model over all of them
  std::optional<TrainingStepFit> training_step_fit;   // absent without measured steps
};

[[nodiscard]] Expected<CalibrationResult> runCalibration(const topology::Cluster& cluster,
                                                         const CalibrationInputs& inputs,
                                                         const CalibrationOptions& options);

}  // namespace trainsim::calibrate
