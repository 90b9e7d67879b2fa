#include "topology/rank_placement.h"

namespace trainsim::topology {

RankPlacement placeRanks(const Cluster& cluster, int64_t gpus, int64_t per_node) {
  RankPlacement placement;
  const ClusterSpec& spec = cluster.spec();
  const int64_t node_size = spec.gpus_per_node;
  const int64_t total = cluster.acceleratorCount();
  if (gpus < 2) {
    placement.problem = "expected at least 2 GPUs, found " + std::to_string(gpus);
    return placement;
  }
  if (per_node < 0) {
    placement.per_node_at_fault = true;
    placement.problem = "expected a positive number of GPUs per node, found " + std::to_string(per_node);
    return placement;
  }
  if (per_node == 0) {
    if (gpus > total) {
      placement.problem = std::to_string(gpus) + " GPUs asked but the cluster has " + std::to_string(total) +
                          "; add nodes with --set nodes=N";
      return placement;
    }
    for (int64_t rank = 0; rank < gpus; ++rank) placement.ranks.push_back(rank);
    return placement;
  }
  if (per_node > node_size || gpus % per_node != 0) {
    placement.per_node_at_fault = true;
    placement.problem = "expected a divisor of the GPU count that is at most the " + std::to_string(node_size) +
                        " GPUs of a node, found " + std::to_string(per_node);
    return placement;
  }
  const int64_t nodes = gpus / per_node;
  if (nodes > spec.nodes) {
    placement.problem = std::to_string(nodes) + " nodes needed but the cluster has " + std::to_string(spec.nodes) +
                        "; add nodes with --set nodes=N";
    return placement;
  }
  for (int64_t node = 0; node < nodes; ++node) {
    for (int64_t local = 0; local < per_node; ++local) placement.ranks.push_back(node * node_size + local);
  }
  return placement;
}

}  // namespace trainsim::topology
