// Ring collectives (NCCL's ring): all-reduce = reduce-scatter then all-gather around the
// ring, 2(n-1) steps; all-gather and reduce-scatter n-1 steps; broadcast a pipeline chain
// from the root. Across nodes each channel enters a node at one GPU and leaves from
// another (the node's GPUs rotated by the channel index), so with one channel per NIC
// every NIC carries one channel in each direction, as NCCL's DGX rings do.
#include <algorithm>

#include "sim/collective_algorithms.h"

namespace trainsim::sim::detail {

void buildRing(const AlgorithmContext& context) {
  CollectiveBuilder& builder = context.builder;
  const GroupLayout& layout = context.layout;
  const CollectiveOp op = context.request.op;
  const auto n = static_cast<double>(layout.size);
  const int channels = context.choice.channels;
  const double size = context.request.bytes;

  double steps = n - 1.0;
  double payload = (n - 1.0) / n * size;  // bytes each ring edge carries in total
  if (op == CollectiveOp::kAllReduce) {
    steps = 2.0 * (n - 1.0);
    payload = 2.0 * (n - 1.0) / n * size;
  } else if (op == CollectiveOp::kBroadcast) {
    payload = size;
  }
  const double per_channel = wireBytes(builder.parameters(), context.choice.protocol, payload / channels);

  for (int channel = 0; channel < channels; ++channel) {
    std::vector<int64_t> order;
    if (layout.singleNode()) {
      order = context.request.ranks;
    } else {
      for (const auto& node : layout.ranks_by_node) {
        const std::size_t shift = static_cast<std::size_t>(channel) % node.size();
        order.insert(order.end(), node.begin() + static_cast<std::ptrdiff_t>(shift), node.end());
        order.insert(order.end(), node.begin(), node.begin() + static_cast<std::ptrdiff_t>(shift));
      }
    }
    if (op == CollectiveOp::kBroadcast) {
      // The chain starts at the root (the communicator's first rank).
      std::rotate(order.begin(), std::find(order.begin(), order.end(), context.request.ranks.front()), order.end());
    }
    std::vector<CollectiveBuilder::Edge> edges;
    const std::size_t count = op == CollectiveOp::kBroadcast ? order.size() - 1 : order.size();
    HopClass intra = HopClass::kNvLink;
    for (std::size_t i = 0; i < count; ++i) {
      const CollectiveBuilder::Edge edge{order[i], order[(i + 1) % order.size()]};
      if (builder.hopClass(edge.from_rank, edge.to_rank) == HopClass::kPcie) intra = HopClass::kPcie;
      edges.push_back(edge);
    }
    // NCCL's step accounting: of the steps, those that cross nodes scale with nodes - 1.
    const double network_steps = steps / std::max(1.0, n - 1.0) * (layout.nodes() - 1.0);
    const double per_step = op == CollectiveOp::kBroadcast ? size : size / n;
    const double latency = stepLatencySeconds(builder.parameters(), CollectiveAlgorithm::kRing, context.choice.protocol,
                                              intra, steps - network_steps, network_steps, !layout.singleNode()) +
                           pipelineFillSeconds(builder.parameters(), context.choice.protocol, steps, per_step);
    builder.addFlows(edges, per_channel, latency, context.group, context.start);
  }
}

}  // namespace trainsim::sim::detail
