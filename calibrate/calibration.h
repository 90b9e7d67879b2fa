// A calibration: model parameters fitted to measurements of one cluster (`trainsim
// calibrate`), written as calib.yaml (calibrate/calibration_file.h, schema in
// docs/calibration.md) and applied by `--calibration` over the shipped defaults of
// perf::CommunicationParameters and perf::ComputeParameters, and of the workload and memory
// models' constants (parallelism::FlopsOptions, MemoryOptions) (configs/defaults/). The per-curve
// summary fits and the fit quality ride along for the record; only the parameter values
// change a simulation.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "calibrate/collective_correction.h"
#include "calibrate/latency_bandwidth_fit.h"
#include "parallelism/iteration_simulation.h"
#include "perf/communication_parameters.h"
#include "perf/compute_parameters.h"
#include "perf/parameter_sections.h"

namespace trainsim::calibrate {

struct CalibrationSource {
  std::string file;     // the name as given to `trainsim calibrate` (a record, need not exist)
  std::string kind;     // "nccl-tests", "trainsim-calib-nccl", "trainsim-calib-gemm" or "cudnn-sdpa-benchmark"
  int64_t entries = 0;  // runs / collectives / GEMM shapes / benchmark rows read from it
};

// A communication parameter's value (perf/parameter_names.h), with its GPU for a per-GPU one.
using CommunicationValue = perf::ParameterValue;

// How well the simulator with the fitted values reproduces the measurements it was fitted to.
struct CommunicationFitQuality {
  int points = 0;
  int iterations = 0;
  double rms_relative_error_before = 0.0;  // with the defaults
  double rms_relative_error_after = 0.0;   // with the calibration
};

// The alpha-beta summary of one measured (operation, group layout) and how the calibrated
// simulator does on it.
struct CollectiveCurveRecord {
  std::string op;      // perf::collectiveOpName
  std::string layout;  // intra_node | one_per_node | multi_node | the harness's name
  int64_t group_size = 0;
  int64_t nodes = 0;
  int64_t gpus_per_node = 0;  // the most on one node
  std::string source;
  LatencyBandwidthFit fit;
  // Simulator with the calibration vs this curve: RMS relative error over every size, and
  // the largest |error| at sizes >= 1 MiB (0 when the curve has none).
  double model_rms_relative_error = 0.0;
  double model_max_relative_error_from_1MiB = 0.0;
};

using GemmClassRecord = perf::GemmClassRecord;
// The `compute:` section (perf/parameter_sections.h): per-GPU rows that replace the rows of the
// same GPU (and precision, shape class), lists that replace the whole list, named scalars.
// Fitted: matmul_ceilings, memory_efficiency, gemm_efficiency (--harness), attention_rates
// and attention_tile_overheads (--attention), training_rate_fraction (--training-step); by
// hand: collective_sms and every other key.
using ComputeCalibration = perf::ComputeSection;

// How well the simulator reproduces the measured training steps it was fitted to: RMS of
// simulated / measured - 1 over the steps.
struct TrainingStepFitQuality {
  int steps = 0;
  double rms_relative_error_before = 0.0;  // with the kernels at their full rates
  double rms_relative_error_after = 0.0;   // with the fitted fraction
};

struct Calibration {
  std::string file;     // where it was loaded from (empty for one built in memory)
  std::string cluster;  // the cluster it was measured on (its name)
  std::string gpu;      // that cluster's GPU catalog key
  std::vector<CalibrationSource> sources;
  std::vector<CommunicationValue> communication;
  std::optional<CommunicationFitQuality> communication_fit;
  ComputeCalibration compute;
  // The `workload:` and `memory:` sections (parallelism/model_constant_sections.h): constants
  // of the workload and memory models, set by hand.
  std::vector<perf::ParameterValue> workload;
  std::vector<perf::ParameterValue> memory;
  std::optional<TrainingStepFitQuality> training_step_fit;
  std::vector<CollectiveCurveRecord> collectives;
  // Per measured (op, group layout): what the calibrated parameters still miss there.
  std::vector<CollectiveCorrection> corrections;
};

// Replace the defaults the calibration covers.
void applyCalibration(const Calibration& calibration, perf::CommunicationParameters& parameters);
void applyCalibration(const Calibration& calibration, perf::ComputeParameters& parameters);
// Also the workload and memory constants (options.iteration.flops, options.memory).
void applyCalibration(const Calibration& calibration, parallelism::SimulationOptions& options);

// The correction factor of a calibration for a collective on a group (collective_correction.h).
[[nodiscard]] std::optional<double> calibrationCorrection(const Calibration& calibration, perf::CollectiveOp op,
                                                          int64_t group_size, int64_t nodes, int64_t gpus_per_node,
                                                          double bytes);

// "calib.yaml (measured on azure-nd-a100-v4, a100-sxm-40gb: 4 communication parameters,
// 2 matmul ceilings)": what commands print after "calibration in force: ".
[[nodiscard]] std::string describeCalibration(const Calibration& calibration);
// A warning when the calibration was measured on another cluster or GPU than `cluster`
// (empty when they match).
[[nodiscard]] std::string calibrationMismatch(const Calibration& calibration, const topology::ClusterSpec& cluster);

}  // namespace trainsim::calibrate
