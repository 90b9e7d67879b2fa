#include "perf/collective_flow_bound.h"

#include <algorithm>
#include <cmath>

#include "perf/mesh_rings.h"

namespace trainsim::perf {
namespace {

double flowsOf(CollectiveAlgorithm algorithm, const CollectiveShape& shape) {
  const auto n = static_cast<double>(shape.gpus);
  // NcclTuner::channels: one per NIC across nodes, at most the group's GPUs on a node.
  int64_t most = shape.most_per_node;
  if (shape.nics_per_node) most = std::min(most, *shape.nics_per_node);
  const double channels = shape.multi_node ? static_cast<double>(std::max<int64_t>(1, most)) : 1.0;
  const double ring_channels =
      shape.mesh ? meshRingChannels(static_cast<int>(shape.most_per_node), static_cast<int>(channels)) : channels;
  switch (algorithm) {
    case CollectiveAlgorithm::kRing: return ring_channels * (shape.op == CollectiveOp::kBroadcast ? n - 1.0 : n);
    case CollectiveAlgorithm::kPat: return channels * n;
    case CollectiveAlgorithm::kTree: return 4.0 * channels * std::max(0.0, n - 1.0);
    case CollectiveAlgorithm::kNvls: return 2.0 * n;
    // NVLS on every node, and two trees per local index with an edge each way per node but
    // the root: 2 x 2 x (n - most_per_node) flows between nodes.
    case CollectiveAlgorithm::kNvlsTree:
      return 2.0 * n + 4.0 * std::max(0.0, n - static_cast<double>(shape.most_per_node));
    // All-to-all: one bundle per ordered pair of nodes, and inside a node holding two GPUs
    // of the group one per hop class, NVLink and PCIe (collective_direct.cpp). A group of
    // n GPUs, at most most_per_node on a node, spans at most 1 + ceil((n - 1) / most_per_node)
    // nodes when it may straddle node boundaries.
    case CollectiveAlgorithm::kDirect: {
      if (shape.op != CollectiveOp::kAllToAll) return n;
      const auto per_node = static_cast<double>(std::max<int64_t>(1, std::min(shape.most_per_node, shape.gpus)));
      const double nodes = shape.multi_node ? std::min(n, 1.0 + std::ceil((n - 1.0) / per_node)) : 1.0;
      return nodes * (nodes - 1.0) + (per_node > 1.0 ? 2.0 * nodes : 0.0);
    }
  }
  return 0.0;
}

}  // namespace

double collectivePairRoutes(const CollectiveShape& shape) {
  if (shape.op != CollectiveOp::kAllToAll) return 0.0;
  const auto n = static_cast<double>(shape.gpus);
  return n * (n - 1.0);
}

bool meshFabric(const topology::ClusterSpec& spec) {
  return spec.intra_node.fabric == topology::IntraNodeFabric::kNvLinkMesh && !spec.explicit_graph;
}

std::optional<int64_t> channelLimit(const topology::ClusterSpec& spec) {
  if (spec.explicit_graph) return std::nullopt;
  if (!spec.inter_node || spec.inter_node->topology == topology::NetworkTopology::kTorus) return 0;
  return std::min<int64_t>(spec.inter_node->nics_per_node, spec.gpus_per_node);
}

double collectiveFlowBound(const CollectiveShape& shape) {
  if (shape.algorithm) return flowsOf(*shape.algorithm, shape);
  switch (shape.op) {
    case CollectiveOp::kAllReduce: {
      // NcclTuner::candidates: ring always, tree and NVLS_TREE across nodes, NVLS inside a node.
      double flows = std::max(flowsOf(CollectiveAlgorithm::kRing, shape), flowsOf(CollectiveAlgorithm::kNvls, shape));
      if (shape.multi_node) {
        flows = std::max(
            {flows, flowsOf(CollectiveAlgorithm::kTree, shape), flowsOf(CollectiveAlgorithm::kNvlsTree, shape)});
      }
      return flows;
    }
    case CollectiveOp::kAllGather:
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kBroadcast: return flowsOf(CollectiveAlgorithm::kRing, shape);
    case CollectiveOp::kAllToAll:
    case CollectiveOp::kSendRecv: return flowsOf(CollectiveAlgorithm::kDirect, shape);
  }
  return 0.0;
}

}  // namespace trainsim::perf
