// The goodput of a simulated training run: its failure-free time to train (with slow GPUs
// when the cluster has them) turned into the expected time, GPU-hours and cost with failures,
// checkpoints and restarts, and optionally their spread by Monte Carlo. What `simulate`
// reports under "goodput" and `sweep --goodput` ranks by.
#pragma once

#include <cstdint>
#include <optional>

#include "base/expected.h"
#include "goodput/checkpoint_cost.h"
#include "goodput/goodput_model.h"
#include "goodput/goodput_monte_carlo.h"
#include "goodput/job_exposure.h"
#include "parallelism/experiment.h"
#include "parallelism/iteration_simulation.h"
#include "topology/reliability_spec.h"

namespace trainsim::goodput {

struct GoodputOptions {
  int64_t draws = 0;       // Monte Carlo draws; 0: the analytic estimate only
  uint64_t seed = 1;       // for the Monte Carlo draws and the slow GPUs
  bool stragglers = true;  // simulate the step again with the slow GPUs the cluster has
};

struct StragglerEffect {
  int64_t slow_gpus = 0;
  double iteration_time_s = 0.0;  // the step with them, simulated at full per-rank fidelity
};

struct GoodputReport {
  JobDevices devices;
  JobFailureRates rates;
  CheckpointCost checkpoint;
  std::optional<StragglerEffect> stragglers;  // set when the cluster has slow GPUs
  double iteration_time_s = 0.0;              // what the run proceeds at (with stragglers)
  double useful_s = 0.0;                      // failure-free time to train at that pace
  std::optional<GoodputEstimate> estimate;    // unset: failures come too fast to make progress
  std::optional<MonteCarloSummary> monte_carlo;
  std::optional<double> time_to_train_s;  // the estimate's wall time
  std::optional<double> gpu_hours;
  std::optional<double> cost_usd;
};

// What the goodput model needs of `experiment` on a cluster of `reliability`, for any
// iteration time (set by withIterationTime); nullopt without training.tokens.
[[nodiscard]] std::optional<GoodputInputs> goodputInputs(const parallelism::Experiment& experiment,
                                                         const topology::ReliabilitySpec& reliability);
// `inputs` for a run whose iterations take `iteration_time_s`: `iterations` of them are the
// failure-free time; a checkpoint interval given in seconds becomes whole iterations.
[[nodiscard]] GoodputInputs withIterationTime(GoodputInputs inputs, const parallelism::Experiment& experiment,
                                              double iteration_time_s);

// The goodput of `experiment` at `iteration_time_s` per iteration on a cluster of
// `reliability` (topology::clusterReliability), without simulating stragglers (the sweep's
// ranking); nullopt without training.tokens.
[[nodiscard]] std::optional<GoodputReport> goodputAt(const parallelism::Experiment& experiment,
                                                     const topology::ReliabilitySpec& reliability,
                                                     double iteration_time_s, const GoodputOptions& options);

// The same for a simulated iteration: with slow GPUs in the cluster (and options.stragglers),
// the iteration is simulated again at full fidelity with them, drawn with options.seed.
[[nodiscard]] Expected<std::optional<GoodputReport>> goodputOf(const parallelism::Experiment& experiment,
                                                               const topology::ReliabilitySpec& reliability,
                                                               const parallelism::IterationResult& result,
                                                               const parallelism::SimulationOptions& simulation,
                                                               const GoodputOptions& options);

}  // namespace trainsim::goodput
