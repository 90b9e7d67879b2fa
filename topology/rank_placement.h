// Where the ranks of a collective run sit on a cluster, as a launcher places them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "topology/cluster.h"

namespace trainsim::topology {

struct RankPlacement {
  std::vector<int64_t> ranks;      // cluster GPU ranks in communicator order; empty when refused
  std::string problem;             // why the run cannot be placed; empty when it can
  bool per_node_at_fault = false;  // the problem is the per-node count, not the GPU count
};

// The first `gpus` GPUs in rank order (`per_node` 0), or `per_node` GPUs on each of the
// first gpus / per_node nodes (mpirun -npernode). Refused: fewer than 2 GPUs, more GPUs or
// nodes than the cluster has, a per-node count that does not divide `gpus` or exceeds a node.
[[nodiscard]] RankPlacement placeRanks(const Cluster& cluster, int64_t gpus, int64_t per_node);

}  // namespace trainsim::topology
