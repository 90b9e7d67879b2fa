#include "topology/cluster_metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/push_relabel_max_flow.hpp>

namespace trainsim::topology {

ClusterMetrics measureCluster(const Cluster& cluster) {
  ClusterMetrics metrics;
  for (const Device& device : cluster.devices()) ++metrics.devices_by_kind[std::string(deviceKindName(device.kind))];
  for (std::size_t id = 0; id < cluster.links().size(); id += 2) {
    if (cluster.links()[id].trunk) continue;
    ++metrics.links_by_type[std::string(linkTypeName(cluster.links()[id].type))];
  }

  std::map<int32_t, double> network_by_node;
  std::map<int32_t, int> gpus_by_node;
  double smallest_scale_up = std::numeric_limits<double>::infinity();
  for (DeviceId gpu : cluster.accelerators()) {
    ++gpus_by_node[cluster.device(gpu).node];
    double scale_up = 0.0;
    for (LinkId id : cluster.outLinks(gpu)) {
      const Link& link = cluster.link(id);
      if (link.type == LinkType::kNvLink || link.type == LinkType::kIci) scale_up += link.bandwidth_Bps;
    }
    smallest_scale_up = std::min(smallest_scale_up, scale_up);
  }
  metrics.scale_up_bandwidth_per_gpu_Bps = cluster.accelerators().empty() ? 0.0 : smallest_scale_up;

  for (DeviceId id = 0; id < cluster.devices().size(); ++id) {
    if (cluster.device(id).kind != DeviceKind::kNic) continue;
    for (LinkId link_id : cluster.outLinks(id)) {
      const Link& link = cluster.link(link_id);
      const DeviceKind peer = cluster.device(link.to).kind;
      if (peer == DeviceKind::kLeafSwitch || peer == DeviceKind::kSpineSwitch || peer == DeviceKind::kCoreSwitch) {
        network_by_node[cluster.device(id).node] += link.bandwidth_Bps;
      }
    }
  }
  if (!network_by_node.empty()) {
    double smallest = std::numeric_limits<double>::infinity();
    for (const auto& [node, gpus] : gpus_by_node) {
      smallest = std::min(smallest, network_by_node[node] / gpus);
    }
    metrics.network_injection_per_gpu_Bps = smallest;
  }
  return metrics;
}

double bisectionBandwidth(const Cluster& cluster) {
  using Traits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
  using FlowGraph = boost::adjacency_list<
      boost::vecS, boost::vecS, boost::directedS, boost::no_property,
      boost::property<boost::edge_capacity_t, int64_t,
                      boost::property<boost::edge_residual_capacity_t, int64_t,
                                      boost::property<boost::edge_reverse_t, Traits::edge_descriptor>>>>;
  const auto& accelerators = cluster.accelerators();
  if (accelerators.size() < 2) return 0.0;

  // Capacities in MB/s so that the solver works on exact integers.
  constexpr double kUnit = 1e6;
  const std::size_t devices = cluster.devices().size();
  FlowGraph graph(devices + 2);
  const auto source = static_cast<Traits::vertex_descriptor>(devices);
  const auto sink = static_cast<Traits::vertex_descriptor>(devices + 1);
  auto capacity = boost::get(boost::edge_capacity, graph);
  auto reverse = boost::get(boost::edge_reverse, graph);
  auto addArc = [&](std::size_t from, std::size_t to, int64_t cap) {
    auto forward = boost::add_edge(from, to, graph).first;
    auto backward = boost::add_edge(to, from, graph).first;
    capacity[forward] = cap;
    capacity[backward] = 0;
    reverse[forward] = backward;
    reverse[backward] = forward;
  };
  for (const Link& link : cluster.links()) {
    if (link.trunk) continue;
    addArc(link.from, link.to, std::llround(link.bandwidth_Bps / kUnit));
  }
  // GPUs can inject without limit: only the fabric between the halves counts.
  const int64_t unlimited = std::numeric_limits<int64_t>::max() / 1024;
  const std::size_t half = accelerators.size() / 2;
  for (std::size_t rank = 0; rank < accelerators.size(); ++rank) {
    if (rank < half) {
      addArc(source, accelerators[rank], unlimited);
    } else if (rank < 2 * half) {
      addArc(accelerators[rank], sink, unlimited);
    }
  }
  const int64_t flow = boost::push_relabel_max_flow(graph, source, sink);
  return static_cast<double>(flow) * kUnit;
}

}  // namespace trainsim::topology
