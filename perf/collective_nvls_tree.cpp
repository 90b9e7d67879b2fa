// NCCL's NVLS_TREE all-reduce across nodes: inside each node the GPUs reduce and multicast
// through the NVSwitch (NVLS, perf/collective_nvls.cpp), and the GPUs of one local index,
// each holding 1/ppn of the node's partial result, run NCCL's double binary tree between the
// nodes over their own NICs (two complementary trees, each carrying half of that share,
// perf/collective_tree.cpp). Both parts are pipelined, so their flows run together.
#include <cmath>
#include <optional>
#include <utility>
#include <vector>

#include "perf/collective_algorithms.h"

namespace trainsim::perf::detail {

void buildNvlsTree(const AlgorithmContext& context) {
  CollectiveBuilder& builder = context.builder;
  const GroupLayout& layout = context.layout;
  const auto& parameters = builder.parameters();
  const int nodes = layout.nodes();
  const auto per_node = static_cast<std::size_t>(layout.max_per_node);
  const double size = context.request.bytes;

  std::vector<NvlsPaths> node_paths;
  double intra_excess = 0.0;
  for (const auto& node : layout.ranks_by_node) {
    node_paths.push_back(nvlsPaths(builder, node));
    intra_excess = std::max(intra_excess, node_paths.back().excess_s.value_or(0.0));
  }
  // Each tree carries half of a local index's share, up and down at once (both directions).
  std::vector<CollectiveBuilder::Edge> edges;
  std::optional<double> network_excess;
  for (int tree = 0; tree < kTrees; ++tree) {
    for (std::size_t local = 0; local < per_node; ++local) {
      for (int k = 0; k < nodes; ++k) {
        // Tree 1 is tree 0 mirrored: node k takes the place of node nodes-1-k.
        const int index = tree == 0 ? k : nodes - 1 - k;
        if (index == 0) continue;
        const int parent_index = (index - 1) / 2;
        const int parent = tree == 0 ? parent_index : nodes - 1 - parent_index;
        const int64_t child_gpu = layout.ranks_by_node[static_cast<std::size_t>(k)][local];
        const int64_t parent_gpu = layout.ranks_by_node[static_cast<std::size_t>(parent)][local];
        for (const auto& [from, to] : {std::pair{child_gpu, parent_gpu}, std::pair{parent_gpu, child_gpu}}) {
          const double excess = builder.latencyExcessSeconds(from, to);
          network_excess = std::max(network_excess.value_or(excess), excess);
          edges.push_back({from, to});
        }
      }
    }
  }
  const double depth = std::floor(std::log2(static_cast<double>(nodes)));
  const double latency =
      stepLatencySeconds(parameters, CollectiveAlgorithm::kNvlsTree, Protocol::kSimple, HopClass::kNvLink, 1.0,
                         2.0 * depth, true, {intra_excess, network_excess.value_or(0.0)}) +
      pipelineFillSeconds(parameters, Protocol::kSimple, 2.0 + 2.0 * depth, size / static_cast<double>(per_node));
  // Both parts reach NCCL's size correction of its trees' bandwidth.
  const double correction = treeSizeCorrection(parameters, CollectiveAlgorithm::kNvlsTree, Protocol::kSimple, size);
  for (const NvlsPaths& paths : node_paths) {
    addNvlsFlows(builder, paths, size / correction, latency, context.group, context.start, true, size, nodes);
  }
  const double per_edge = size / static_cast<double>(per_node) / kTrees / correction;
  builder.addFlows(edges, per_edge, latency, context.group, context.start);
}

}  // namespace trainsim::perf::detail
