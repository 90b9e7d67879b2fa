// How many flows a collective expands into at most, from its shape alone (no cluster built):
// what the memory estimate (memory_budget.h) counts before a simulation is built. Mirrors
// the algorithm files (collective_*.cpp) and NcclTuner::channels: a ring is one flow per
// edge and channel, channels at most the group's GPUs on a node across nodes and 1 inside
// one; the double binary tree 2 trees x channels x 2 directions x (n - 1) edges; NVLS a
// flow to and from the switch per GPU; all-to-all n (n - 1), send/recv n.
#pragma once

#include <cstdint>
#include <optional>

#include "sim/collective.h"

namespace trainsim::sim {

struct CollectiveShape {
  CollectiveOp op = CollectiveOp::kAllReduce;
  int64_t gpus = 0;
  // The most GPUs of the group on one node (an upper bound is enough).
  int64_t most_per_node = 1;
  // Whether the group may span nodes (false only when it surely sits on one node).
  bool multi_node = true;
  // The algorithm when it is forced (--algo); otherwise the largest candidate counts.
  std::optional<CollectiveAlgorithm> algorithm;
};

[[nodiscard]] double collectiveFlowBound(const CollectiveShape& shape);

}  // namespace trainsim::sim
