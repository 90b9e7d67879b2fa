// Point-to-point collectives. all_to_all: every rank sends 1/n of its buffer to every other
// rank at once (NCCL's grouped send/recv). send_recv: as nccl-tests' sendrecv_perf, each
// rank sends its buffer to the next rank and receives from the previous one.
#include <algorithm>

#include "perf/collective_algorithms.h"

namespace trainsim::perf::detail {

void buildDirect(const AlgorithmContext& context) {
  CollectiveBuilder& builder = context.builder;
  const auto& ranks = context.request.ranks;
  const auto n = static_cast<int64_t>(ranks.size());
  const Protocol protocol = context.choice.protocol;
  const bool all_to_all = context.request.op == CollectiveOp::kAllToAll;
  const double payload = all_to_all ? context.request.bytes / static_cast<double>(n) : context.request.bytes;
  const double wire = wireBytes(builder.parameters(), CollectiveAlgorithm::kDirect, protocol, payload);
  const bool multi_node = !context.layout.singleNode();

  // The same collective on the same group takes the same routes: they are built once.
  const std::vector<sim::RouteId>& routes = builder.memoizedRoutes(context.request, context.choice, [&] {
    std::vector<CollectiveBuilder::Edge> by_class[3];
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        if (i == j || (!all_to_all && j != (i + 1) % n)) continue;
        const CollectiveBuilder::Edge edge{ranks[static_cast<std::size_t>(i)], ranks[static_cast<std::size_t>(j)]};
        by_class[static_cast<std::size_t>(builder.hopClass(edge.from_rank, edge.to_rank))].push_back(edge);
      }
    }
    std::vector<sim::RouteId> built;
    for (HopClass hop : {HopClass::kNvLink, HopClass::kPcie, HopClass::kNetwork}) {
      const auto& edges = by_class[static_cast<std::size_t>(hop)];
      if (edges.empty()) continue;
      const bool network = hop == HopClass::kNetwork;
      // The slowest pair of the class sets its step's latency beyond the defaults.
      double slowest = builder.latencyExcessSeconds(edges.front().from_rank, edges.front().to_rank);
      for (const auto& edge : edges) {
        slowest = std::max(slowest, builder.latencyExcessSeconds(edge.from_rank, edge.to_rank));
      }
      const StepLatencyExcess excess = network ? StepLatencyExcess{0.0, slowest} : StepLatencyExcess{slowest, 0.0};
      const double latency = stepLatencySeconds(builder.parameters(), CollectiveAlgorithm::kDirect, protocol,
                                                network ? HopClass::kNvLink : hop, network ? 0.0 : 1.0,
                                                network ? 1.0 : 0.0, multi_node, excess);
      // An all-to-all's flows between two nodes run as one bundle: n (n - 1) flows would
      // cost the flow solver more than the rest of a training step together.
      if (all_to_all) {
        const std::vector<sim::RouteId> bundles = builder.bundleRoutes(edges, latency);
        built.insert(built.end(), bundles.begin(), bundles.end());
      } else {
        for (const auto& edge : edges) built.push_back(builder.edgeRoute(edge, latency));
      }
    }
    return built;
  });
  for (const sim::RouteId route : routes) builder.addFlow(route, wire, context.group, context.start);
}

}  // namespace trainsim::perf::detail
