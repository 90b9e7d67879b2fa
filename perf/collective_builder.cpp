#include "perf/collective_builder.h"

#include <algorithm>
#include <cassert>
#include <map>
#include <utility>

#include "perf/collective_algorithms.h"

namespace trainsim::perf {

using topology::DeviceId;

namespace detail {

std::size_t channelEntryIndex(int channel, int channels, std::size_t gpus) {
  const auto index = static_cast<std::size_t>(channel);
  const auto count = static_cast<std::size_t>(channels);
  if (count >= gpus) return index % gpus;
  return index * gpus / count;
}

double wireBytes(const CommunicationParameters& parameters, CollectiveAlgorithm algorithm, Protocol protocol,
                 double payload) {
  return payload / parameters.protocolBandwidthFactor(algorithm, protocol);
}

}  // namespace detail

CollectiveBuilder::CollectiveBuilder(const topology::Cluster& cluster, topology::Router& router, sim::TaskGraph& graph,
                                     const CommunicationParameters& parameters)
    : cluster_(cluster),
      router_(router),
      graph_(graph),
      parameters_(forHostCpu(parameters, cluster.spec().pcie.host_cpu)),
      tuner_(cluster, router, parameters) {}

std::vector<double> CollectiveBuilder::effectiveCapacities(const topology::Cluster& cluster,
                                                           const CommunicationParameters& parameters) {
  std::vector<double> capacities;
  capacities.reserve(cluster.links().size());
  for (const auto& link : cluster.links()) {
    capacities.push_back(link.bandwidth_Bps * parameters.linkEfficiency(link.type, cluster.spec()));
  }
  return capacities;
}

void CollectiveBuilder::appendEdgeLinks(const Edge& edge, std::vector<topology::LinkId>& links) {
  DeviceId from = cluster_.accelerator(edge.from_rank);
  if (edge.via_rank >= 0) {
    const DeviceId via = cluster_.accelerator(edge.via_rank);
    const auto& first = router_.route(from, via).links;
    links.insert(links.end(), first.begin(), first.end());
    from = via;
  }
  const auto& rest = router_.route(from, cluster_.accelerator(edge.to_rank)).links;
  links.insert(links.end(), rest.begin(), rest.end());
}

sim::RouteId CollectiveBuilder::edgeRoute(const Edge& edge, double latency_s) {
  const sim::SimTime latency = sim::secondsToSimTime(latency_s);
  if (edge.via_rank < 0) {
    return graph_.addRoute(
        router_.route(cluster_.accelerator(edge.from_rank), cluster_.accelerator(edge.to_rank)).links, latency);
  }
  std::vector<topology::LinkId> links;
  appendEdgeLinks(edge, links);
  return graph_.addRoute(links, latency);
}

void CollectiveBuilder::addFlow(sim::RouteId route, double bytes, sim::TaskId group, sim::TaskId after,
                                double rate_cap_Bps) {
  graph_.addFlow(route, bytes, {after}, sim::TaskOptions{sim::kNoStream, group, 0}, rate_cap_Bps);
}

void CollectiveBuilder::addFlows(const std::vector<Edge>& edges, double bytes, double latency_s, sim::TaskId group,
                                 sim::TaskId after, double rate_cap_Bps) {
  for (const Edge& edge : edges) addFlow(edgeRoute(edge, latency_s), bytes, group, after, rate_cap_Bps);
}

std::vector<sim::RouteId> CollectiveBuilder::bundleRoutes(const std::vector<Edge>& edges, double latency_s) {
  const sim::SimTime latency = sim::secondsToSimTime(latency_s);
  // The node pairs in order of first appearance, each with its edges in the given order.
  auto nodeOf = [&](int64_t rank) { return cluster_.device(cluster_.accelerator(rank)).node; };
  std::map<std::pair<int32_t, int32_t>, std::size_t> index;
  std::vector<std::vector<std::size_t>> pairs;
  for (std::size_t e = 0; e < edges.size(); ++e) {
    const auto [it, added] =
        index.emplace(std::make_pair(nodeOf(edges[e].from_rank), nodeOf(edges[e].to_rank)), pairs.size());
    if (added) pairs.emplace_back();
    pairs[it->second].push_back(e);
  }
  std::vector<sim::RouteId> routes;
  for (const std::vector<std::size_t>& members : pairs) {
    // Every member's links, sorted by LinkId; a link's run length is its multiplicity.
    bundle_links_.clear();
    for (const std::size_t e : members) appendEdgeLinks(edges[e], bundle_links_);
    if (bundle_links_.empty()) continue;
    std::sort(bundle_links_.begin(), bundle_links_.end());
    bundle_multiplicity_.clear();
    std::size_t distinct = 0;
    for (std::size_t i = 0; i < bundle_links_.size(); ++i) {
      if (i > 0 && bundle_links_[i] == bundle_links_[distinct - 1]) {
        ++bundle_multiplicity_.back();
      } else {
        bundle_links_[distinct++] = bundle_links_[i];
        bundle_multiplicity_.push_back(1);
      }
    }
    bundle_links_.resize(distinct);
    routes.push_back(graph_.addBundleRoute(bundle_links_, bundle_multiplicity_, latency));
  }
  return routes;
}

void CollectiveBuilder::addDeviceFlow(DeviceId from, DeviceId to, double bytes, double latency_s, sim::TaskId group,
                                      sim::TaskId after) {
  const auto& route = router_.route(from, to);
  const sim::RouteId id = graph_.addRoute(route.links, sim::secondsToSimTime(latency_s));
  graph_.addFlow(id, bytes, {after}, sim::TaskOptions{sim::kNoStream, group, 0});
}

sim::TaskId CollectiveBuilder::add(const CollectiveRequest& request, const CollectiveChoice& choice,
                                   sim::TaskIds dependencies, sim::TaskOptions options) {
  const GroupLayout group_layout = layout(request.ranks);
  const sim::TaskId group = graph_.addGroup(dependencies, options);
  // Launch overhead and the algorithm's fixed latency, before any byte moves.
  const double fixed_us =
      parameters_.launch_overhead_us +
      parameters_
          .base_latency_us[static_cast<std::size_t>(choice.algorithm)][static_cast<std::size_t>(choice.protocol)];
  const sim::TaskId start =
      graph_.addCompute(sim::secondsToSimTime(fixed_us * 1e-6), {}, sim::TaskOptions{sim::kNoStream, group, 0});
  const detail::AlgorithmContext context{*this, request, group_layout, choice, group, start};
  switch (choice.algorithm) {
    case CollectiveAlgorithm::kRing: detail::buildRing(context); break;
    case CollectiveAlgorithm::kTree: detail::buildTree(context); break;
    case CollectiveAlgorithm::kNvls: detail::buildNvls(context); break;
    case CollectiveAlgorithm::kDirect: detail::buildDirect(context); break;
    case CollectiveAlgorithm::kNvlsTree: detail::buildNvlsTree(context); break;
    case CollectiveAlgorithm::kPat: detail::buildPat(context); break;
  }
  return group;
}

}  // namespace trainsim::perf
