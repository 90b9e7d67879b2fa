// NCCL's double binary tree all-reduce: two complementary binary trees over the nodes
// (a node that is a leaf in one is interior in the other), each reducing and then
// broadcasting half of the data, pipelined so that the up and down phases run together.
// Inside a node the GPUs form a chain below the node's head GPU. Each channel uses a
// different head GPU (so a different NIC).
#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "perf/collective_algorithms.h"

namespace trainsim::perf::detail {

void buildTree(const AlgorithmContext& context) {
  CollectiveBuilder& builder = context.builder;
  const GroupLayout& layout = context.layout;
  const int nodes = layout.nodes();
  const int channels = context.choice.channels;
  const auto& parameters = builder.parameters();
  // NCCL's tree runs at tree_bandwidth_factor of the links and at most its bus-bandwidth
  // cap (NCCL's channels x its per-channel cap, NcclTuner::treeMaxBusBandwidth); algorithm
  // bandwidth = cap x tree_algorithm_bandwidth_ratio, shared by the two trees' flows of every
  // channel into each head GPU.
  // NCCL's cap on the protocol's bus bandwidth (LL's, LL128's) bounds the payload as well: on
  // the wire, protocol_max_bus / the protocol's factor.
  const double per_edge =
      wireBytes(parameters, CollectiveAlgorithm::kTree, context.choice.protocol,
                context.request.bytes / 2.0 / channels) /
      parameters.tree_bandwidth_factor /
      treeSizeCorrection(parameters, CollectiveAlgorithm::kTree, context.choice.protocol, context.request.bytes);
  const double flows_per_head = kTrees / parameters.tree_algorithm_bandwidth_ratio * channels;
  double max_bus = context.choice.tree_max_bus_Bps;
  if (context.choice.protocol_max_bus_Bps > 0.0) {
    max_bus =
        std::min(max_bus, context.choice.protocol_max_bus_Bps /
                              parameters.protocolBandwidthFactor(CollectiveAlgorithm::kTree, context.choice.protocol));
  }
  const double rate_cap = max_bus / parameters.tree_bandwidth_factor / flows_per_head;
  const double depth = std::floor(std::log2(static_cast<double>(nodes)));

  for (int tree = 0; tree < kTrees; ++tree) {
    for (int channel = 0; channel < channels; ++channel) {
      std::vector<std::vector<int64_t>> chains;
      for (const auto& node : layout.ranks_by_node) {
        std::vector<int64_t> chain;
        const std::size_t shift = channelEntryIndex(channel, channels, node.size());
        for (std::size_t i = 0; i < node.size(); ++i) chain.push_back(node[(i + shift) % node.size()]);
        chains.push_back(std::move(chain));
      }
      std::vector<CollectiveBuilder::Edge> edges;
      HopClass intra = HopClass::kNvLink;
      // The slowest chain hop sets every intra-node step's latency beyond the defaults, the
      // slowest tree edge between nodes every network step's.
      std::optional<double> intra_excess;
      std::optional<double> network_excess;
      auto addBothWays = [&](int64_t child, int64_t parent) {
        edges.push_back({child, parent});
        edges.push_back({parent, child});
      };
      for (const auto& chain : chains) {
        for (std::size_t i = 1; i < chain.size(); ++i) {
          if (builder.hopClass(chain[i], chain[i - 1]) == HopClass::kPcie) intra = HopClass::kPcie;
          for (const auto& [from, to] : {std::pair{chain[i], chain[i - 1]}, std::pair{chain[i - 1], chain[i]}}) {
            const double excess = builder.latencyExcessSeconds(from, to);
            intra_excess = intra_excess ? std::max(*intra_excess, excess) : excess;
          }
          addBothWays(chain[i], chain[i - 1]);
        }
      }
      for (int k = 0; k < nodes; ++k) {
        // Tree 1 is tree 0 mirrored: node k takes the place of node nodes-1-k.
        const int index = tree == 0 ? k : nodes - 1 - k;
        if (index == 0) continue;
        const int parent_index = (index - 1) / 2;
        const int parent = tree == 0 ? parent_index : nodes - 1 - parent_index;
        const int64_t child_head = chains[static_cast<std::size_t>(k)].front();
        const int64_t parent_head = chains[static_cast<std::size_t>(parent)].front();
        for (const auto& [from, to] : {std::pair{child_head, parent_head}, std::pair{parent_head, child_head}}) {
          const double excess = builder.latencyExcessSeconds(from, to);
          network_excess = network_excess ? std::max(*network_excess, excess) : excess;
        }
        addBothWays(child_head, parent_head);
      }
      const double steps = layout.max_per_node - 1.0 + depth;
      const double latency =
          2.0 * stepLatencySeconds(parameters, CollectiveAlgorithm::kTree, context.choice.protocol, intra,
                                   layout.max_per_node - 1.0, depth, true,
                                   {intra_excess.value_or(0.0), network_excess.value_or(0.0)}) +
          pipelineFillSeconds(parameters, context.choice.protocol, 2.0 * steps, context.request.bytes / 2.0);
      builder.addFlows(edges, per_edge, latency, context.group, context.start, rate_cap);
    }
  }
}

}  // namespace trainsim::perf::detail
