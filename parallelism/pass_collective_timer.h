// How long one call of a pass's tensor- or context-parallel collective takes on the plan's
// groups, as the iteration builder prices what the collectives beside a pass's compute leave
// exposed (pass_work.h). The groups of one kind are symmetric, so each call is timed once
// and cached:
//   - tensor-parallel: the tuner's closed-form estimate for one group alone (inside a node
//     the groups do not share links);
//   - context-parallel: every ring of the first pipeline stage running the exchange at
//     once, in a flow simulation of its own (its own engine and flow network over the
//     cluster's effective link capacities): rings that cross nodes share the NICs and the
//     fabric, which the tuner's estimate for one ring alone does not see.
// It only measures: the iteration's task graph is neither read nor changed.
#pragma once

#include <map>
#include <tuple>
#include <vector>

#include "parallelism/rank_layout.h"
#include "parallelism/transformer_workload.h"
#include "perf/communication_parameters.h"
#include "topology/cluster.h"
#include "topology/router.h"

namespace trainsim::parallelism {

class PassCollectiveTimer {
 public:
  PassCollectiveTimer(const ParallelPlan& plan, const topology::Cluster& cluster, topology::Router& router,
                      const perf::CommunicationParameters& communication);

  // One call of `comm` (its own bytes) on a group of its kind.
  [[nodiscard]] double seconds(const Communication& comm) const;

 private:
  // One group's call as NCCL's tuner estimates it: the tensor-, expert- or
  // expert-tensor-parallel group of rank 0.
  [[nodiscard]] double oneGroupSeconds(const Communication& comm) const;
  [[nodiscard]] double concurrentContextSeconds(const Communication& comm) const;

  RankLayout layout_;
  const topology::Cluster& cluster_;
  topology::Router& router_;
  const perf::CommunicationParameters& communication_;
  // (group, op, bytes) -> seconds.
  mutable std::map<std::tuple<int, int, double>, double> seconds_;
  mutable std::vector<double> context_capacities_;  // effective link capacities, for the rings' flow network
};

}  // namespace trainsim::parallelism
