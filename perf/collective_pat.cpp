// NCCL's PAT (Parallel Aggregated Trees, NCCL 2.23+): all-gather and reduce-scatter across
// nodes of one GPU each. Its steps pair ranks at distances 1, 2, 4, ... and aggregate what
// they forward, so its latency grows with log2 of the nodes where the ring's grows with their
// number; each rank still sends and receives (n - 1) / n of the buffer, which NCCL prices
// at pat_bandwidth_factor of the ring's bus bandwidth. The flows carry that: each rank's
// bytes to the next rank over its own NIC (one GPU per node: the same links and load on
// every NIC as the pairs at other distances on a non-blocking network), at the PAT factor,
// after PAT's latency (detail::patLatencySeconds, NCCL's tuning.cc).
#include <algorithm>
#include <optional>

#include "perf/collective_algorithms.h"

namespace trainsim::perf::detail {

void buildPat(const AlgorithmContext& context) {
  CollectiveBuilder& builder = context.builder;
  const auto& ranks = context.request.ranks;
  const auto n = static_cast<double>(ranks.size());
  const auto& parameters = builder.parameters();
  const double payload = (n - 1.0) / n * context.request.bytes;
  const double per_channel =
      wireBytes(parameters, CollectiveAlgorithm::kPat, Protocol::kSimple, payload / context.choice.channels) /
      parameters.pat_bandwidth_factor;

  std::vector<CollectiveBuilder::Edge> edges;
  std::optional<double> network_excess;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const CollectiveBuilder::Edge edge{ranks[i], ranks[(i + 1) % ranks.size()]};
    const double excess = builder.latencyExcessSeconds(edge.from_rank, edge.to_rank);
    network_excess = network_excess ? std::max(*network_excess, excess) : excess;
    edges.push_back(edge);
  }
  const double latency = patLatencySeconds(parameters, context.layout.nodes(), n, network_excess.value_or(0.0));
  for (int channel = 0; channel < context.choice.channels; ++channel) {
    builder.addFlows(edges, per_channel, latency, context.group, context.start);
  }
}

}  // namespace trainsim::perf::detail
