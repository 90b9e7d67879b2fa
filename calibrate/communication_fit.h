// Fitting perf::CommunicationParameters to measured collectives with the simulator in the
// loop, so that a calibration carries over to group sizes and layouts nobody measured.
//
// Each measured curve is replayed by perf::CollectiveSimulator on the cluster, with the
// group placed as the measurement placed it (placeMeasuredGroup: node i of the
// measurement on node i of the cluster, its GPUs 0..k-1), and the simulator chooses the
// algorithm and protocol as NCCL's tuner would. The parameters the measurements constrain
// (constrainedParameters) are fitted by Levenberg-Marquardt on the residuals
// log(t_simulated / t_measured) (relative error, symmetric in over- and under-prediction),
// with a central finite-difference Jacobian in a transformed space that keeps every value
// in its range (efficiencies through a logistic map onto (0, 1), the others through log),
// and made robust like the alpha-beta fits: Huber weights (k = 1.345 x 1.4826 MAD, floor
// 1%) re-estimated at every iteration, so a point the model cannot follow (a protocol
// switch NCCL makes at another size than the simulator) does not drag the rest. A weak
// prior (0.01 per unit of the transformed value) holds a parameter the data do not
// constrain at its default, and log-mapped values stay within two decades of it.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/expected.h"
#include "calibrate/measured_collective.h"
#include "perf/communication_parameters.h"
#include "topology/cluster.h"

namespace trainsim::calibrate {

struct CommunicationFitOptions {
  // Names (perf/parameter_names.h) to fit; empty: constrainedParameters(). A per-GPU
  // parameter is fitted for the cluster's GPU.
  std::vector<std::string> parameters;
  // Only samples of at least this many bytes enter the fit (all are still predicted).
  double min_bytes = 0.0;
  int max_iterations = 40;
};

struct FittedValue {
  std::string name;
  double before = 0.0;
  double after = 0.0;
  std::string gpu_key;  // the GPU a per-GPU parameter (nvlink_efficiency) was fitted for
  // Moved by the fit onto its hard bound (two decades from the start, or an efficiency at
  // 0.001 / 0.999): the model follows the measurements only with a value no cluster has
  // there, so the calibration describes the curves, not the machine.
  bool at_bound = false;
};

struct CurvePrediction {
  const MeasuredCollective* curve = nullptr;
  std::vector<double> before_us;  // simulated time per sample, starting parameters
  std::vector<double> after_us;   // simulated time per sample, fitted parameters
};

struct CommunicationFit {
  perf::CommunicationParameters parameters;  // the starting parameters with the fitted values set
  std::vector<FittedValue> values;
  std::vector<CurvePrediction> curves;     // one per measured curve, in order
  double rms_relative_error_before = 0.0;  // over the samples that entered the fit
  double rms_relative_error_after = 0.0;
  int points = 0;
  int iterations = 0;
  int simulations = 0;
};

// The cluster ranks of a measured group: node i of the measurement on cluster node i, its
// GPUs 0..k-1, node by node (NCCL builds its rings node by node whatever the rank order).
// Fails when the cluster has too few nodes or too few GPUs per node.
[[nodiscard]] Expected<std::vector<int64_t>> placeMeasuredGroup(const topology::Cluster& cluster,
                                                                const MeasuredCollective& curve);

// What the curves constrain: the efficiency of each link class some curve's bottleneck
// runs on (the intra-node fabric for single-node groups, the network for multi-node
// ones), the per-call launch overhead, and the pipeline-fill channel bandwidth.
[[nodiscard]] std::vector<std::string> constrainedParameters(const topology::Cluster& cluster,
                                                             std::span<const MeasuredCollective> curves);

// Simulated time (us) of every sample of `curve`.
[[nodiscard]] Expected<std::vector<double>> simulateCurve(const topology::Cluster& cluster,
                                                          const perf::CommunicationParameters& parameters,
                                                          const MeasuredCollective& curve);

[[nodiscard]] Expected<CommunicationFit> fitCommunicationParameters(const topology::Cluster& cluster,
                                                                    std::span<const MeasuredCollective> curves,
                                                                    const perf::CommunicationParameters& start,
                                                                    const CommunicationFitOptions& options = {});

}  // namespace trainsim::calibrate
