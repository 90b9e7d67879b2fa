#include "sim/collective_builder.h"

#include "sim/collective_algorithms.h"

namespace trainsim::sim {

using topology::DeviceId;

namespace detail {

double wireBytes(const CommunicationParameters& parameters, Protocol protocol, double payload) {
  return payload / parameters.protocol_bandwidth_factor[static_cast<std::size_t>(protocol)];
}

}  // namespace detail

CollectiveBuilder::CollectiveBuilder(const topology::Cluster& cluster, topology::Router& router, TaskGraph& graph,
                                     const CommunicationParameters& parameters)
    : cluster_(cluster), router_(router), graph_(graph), parameters_(parameters), tuner_(cluster, router, parameters) {}

std::vector<double> CollectiveBuilder::effectiveCapacities(const topology::Cluster& cluster,
                                                           const CommunicationParameters& parameters) {
  std::vector<double> capacities;
  capacities.reserve(cluster.links().size());
  for (const auto& link : cluster.links()) {
    capacities.push_back(link.bandwidth_Bps * parameters.linkEfficiency(link.type, cluster.spec().gpu.key));
  }
  return capacities;
}

void CollectiveBuilder::addFlows(const std::vector<Edge>& edges, double bytes, double latency_s, TaskId group,
                                 TaskId after, double rate_cap_Bps) {
  const SimTime latency = secondsToSimTime(latency_s);
  for (const Edge& edge : edges) {
    const DeviceId from = cluster_.accelerator(edge.from_rank);
    const DeviceId to = cluster_.accelerator(edge.to_rank);
    RouteId id = 0;
    if (edge.via_rank < 0) {
      id = graph_.addRoute(router_.route(from, to).links, latency);
    } else {
      const DeviceId via = cluster_.accelerator(edge.via_rank);
      std::vector<topology::LinkId> links = router_.route(from, via).links;
      const auto& rest = router_.route(via, to).links;
      links.insert(links.end(), rest.begin(), rest.end());
      id = graph_.addRoute(links, latency);
    }
    graph_.addFlow(id, bytes, {after}, TaskOptions{kNoStream, group, 0}, rate_cap_Bps);
  }
}

void CollectiveBuilder::addDeviceFlow(DeviceId from, DeviceId to, double bytes, double latency_s, TaskId group,
                                      TaskId after) {
  const auto& route = router_.route(from, to);
  const RouteId id = graph_.addRoute(route.links, secondsToSimTime(latency_s));
  graph_.addFlow(id, bytes, {after}, TaskOptions{kNoStream, group, 0});
}

TaskId CollectiveBuilder::add(const CollectiveRequest& request, const CollectiveChoice& choice, TaskIds dependencies,
                              TaskOptions options) {
  const GroupLayout group_layout = layout(request.ranks);
  const TaskId group = graph_.addGroup(dependencies, options);
  // Launch overhead and the algorithm's fixed latency, before any byte moves.
  const double fixed_us =
      parameters_.launch_overhead_us +
      parameters_
          .base_latency_us[static_cast<std::size_t>(choice.algorithm)][static_cast<std::size_t>(choice.protocol)];
  const TaskId start = graph_.addCompute(secondsToSimTime(fixed_us * 1e-6), {}, TaskOptions{kNoStream, group, 0});
  const detail::AlgorithmContext context{*this, request, group_layout, choice, group, start};
  switch (choice.algorithm) {
    case CollectiveAlgorithm::kRing: detail::buildRing(context); break;
    case CollectiveAlgorithm::kTree: detail::buildTree(context); break;
    case CollectiveAlgorithm::kNvls: detail::buildNvls(context); break;
    case CollectiveAlgorithm::kDirect: detail::buildDirect(context); break;
    case CollectiveAlgorithm::kNvlsTree: detail::buildNvlsTree(context); break;
  }
  return group;
}

}  // namespace trainsim::sim
