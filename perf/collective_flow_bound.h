// How many flows a collective expands into at most, from its shape alone (no cluster built):
// what the memory estimate (memory_budget.h) counts before a simulation is built. Mirrors
// the algorithm files (collective_*.cpp) and NcclTuner::channels: a ring is one flow per
// edge and channel, with one channel inside a node and, across nodes, as many as the
// group's GPUs on a node or the node's NICs, whichever is fewer; the double binary tree
// 2 trees x channels x 2 directions x (n - 1) edges; NVLS a flow to and from the switch per
// GPU; all-to-all a bundle per ordered pair of nodes and per hop class inside a node,
// send/recv n.
#pragma once

#include <cstdint>
#include <optional>

#include "perf/collective.h"
#include "topology/cluster_spec.h"

namespace trainsim::perf {

struct CollectiveShape {
  CollectiveOp op = CollectiveOp::kAllReduce;
  int64_t gpus = 0;
  // The most GPUs of the group on one node (an upper bound is enough).
  int64_t most_per_node = 1;
  // Whether the group may span nodes (false only when it surely sits on one node).
  bool multi_node = true;
  // The NICs of a node, which cap the channels across nodes (NcclTuner::channels,
  // channelLimit); unset: not known, the group's GPUs on a node bound them.
  std::optional<int64_t> nics_per_node;
  // The nodes' GPUs form a full mesh (fabric nvlink_mesh): rings run meshRingChannels.
  bool mesh = false;
  // The algorithm when it is forced (--algo); otherwise the largest candidate counts.
  std::optional<CollectiveAlgorithm> algorithm;
};

[[nodiscard]] double collectiveFlowBound(const CollectiveShape& shape);

// The GPU pairs whose routes a collective looks up one by one beyond its flows' own: an
// all-to-all's n (n - 1), of which its bundles are made (the router keeps each pair's route
// for the run); 0 for the other collectives.
[[nodiscard]] double collectivePairRoutes(const CollectiveShape& shape);

// Whether the cluster's nodes are full meshes (CollectiveShape::mesh).
[[nodiscard]] bool meshFabric(const topology::ClusterSpec& spec);

// The NICs per node of the cluster `spec` describes, as Cluster::nicsPerNode counts them
// (0 without a switched network: one channel), for CollectiveShape::nics_per_node; unset
// for an explicit graph, whose nodes may differ.
[[nodiscard]] std::optional<int64_t> channelLimit(const topology::ClusterSpec& spec);

}  // namespace trainsim::perf
