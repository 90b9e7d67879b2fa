// The sweep's analytical screen: a closed-form estimate of one iteration's time, cheap
// enough to run on every plan that fits in memory, used only to decide which plans to
// event-simulate (and in what order). It prices the same work the iteration builder
// schedules, from the same models, without building or running a task graph:
//   - per model chunk, forward and backward time of its layers (the ComputeModel of
//     `simulate`, recomputation included) plus their tensor/context/expert-parallel
//     collectives at the NCCL tuner's closed-form estimate (CollectiveBuilder::choose);
//   - the pipeline as m micro-batches of the slowest stage plus a (pp - 1) / v bubble, with
//     a pipeline send per chunk boundary and micro-batch in each direction;
//   - data parallelism: gradient reduction (all-reduce, or reduce-scatter with ZeRO) exposed
//     in full, or only beyond the last backward when it overlaps; the optimizer step; and
//     the ZeRO parameter all-gather (one bucket exposed when it overlaps).
// Link contention between concurrent collectives is not priced: the simulation does that.
#pragma once

#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "parallelism/experiment.h"
#include "parallelism/iteration_simulation.h"
#include "sim/compute_model.h"
#include "sim/task_graph.h"
#include "topology/cluster.h"
#include "topology/router.h"

namespace trainsim::sweep {

// One per thread and cluster: it caches routes and collective estimates.
class IterationEstimator {
 public:
  // Builds the cluster graph of `spec`; throws InputError when it cannot be built.
  IterationEstimator(const topology::ClusterSpec& spec, topology::Precision precision,
                     const parallelism::SimulationOptions& options);

  // Estimated iteration time in seconds of a resolved, valid plan on this cluster.
  [[nodiscard]] double iterationSeconds(const parallelism::Experiment& experiment);

 private:
  [[nodiscard]] double collectiveSeconds(sim::CollectiveOp op, const std::vector<int64_t>& ranks, double bytes);

  std::unique_ptr<topology::Cluster> cluster_;
  std::unique_ptr<topology::Router> router_;
  sim::ComputeModel compute_;
  const parallelism::SimulationOptions& options_;
  sim::TaskGraph scratch_graph_;  // CollectiveBuilder wants one; choose() adds nothing to it
  std::map<std::tuple<int, std::vector<int64_t>, double>, double> collective_cache_;
};

}  // namespace trainsim::sweep
