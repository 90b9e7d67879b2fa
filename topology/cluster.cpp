#include "topology/cluster.h"

#include <cassert>
#include <utility>

namespace trainsim::topology {

DeviceId Cluster::addDevice(Device device) {
  const auto id = static_cast<DeviceId>(devices_.size());
  if (isAccelerator(device.kind)) {
    device.rank = static_cast<int32_t>(accelerators_.size());
    accelerators_.push_back(id);
  }
  if (device.kind == DeviceKind::kNic) nics_.push_back(id);
  devices_.push_back(std::move(device));
  return id;
}

LinkId Cluster::addLinkPair(DeviceId a, DeviceId b, LinkType type, double bandwidth_Bps, int64_t latency_ps) {
  assert(a != b && a < devices_.size() && b < devices_.size() && bandwidth_Bps > 0.0);
  const auto forward = static_cast<LinkId>(links_.size());
  links_.push_back(Link{a, b, type, bandwidth_Bps, latency_ps, forward + 1});
  links_.push_back(Link{b, a, type, bandwidth_Bps, latency_ps, forward});
  return forward;
}

LinkId Cluster::addTrunkPair(DeviceId a, DeviceId b, LinkType type, double bandwidth_Bps) {
  const LinkId forward = addLinkPair(a, b, type, bandwidth_Bps, 0);
  links_[forward].trunk = true;
  links_[forward + 1].trunk = true;
  return forward;
}

void Cluster::finalize() {
  std::vector<std::pair<std::size_t, std::size_t>> endpoints;
  std::vector<LinkRef> properties;
  endpoints.reserve(links_.size());
  properties.reserve(links_.size());
  for (LinkId id = 0; id < links_.size(); ++id) {
    if (links_[id].trunk) continue;
    endpoints.emplace_back(links_[id].from, links_[id].to);
    properties.push_back(LinkRef{id});
  }
  // The unsorted constructor sorts edges by source with a stable counting sort, so the
  // out-edge order of each device is the order links were added: deterministic.
  graph_ = ClusterGraph(boost::edges_are_unsorted_multi_pass, endpoints.begin(), endpoints.end(), properties.begin(),
                        devices_.size());
  links_by_edge_index_.assign(links_.size(), 0);
  auto [edge, edges_end] = boost::edges(graph_);
  for (; edge != edges_end; ++edge) {
    links_by_edge_index_[boost::get(boost::edge_index, graph_, *edge)] = graph_[*edge].id;
  }
}

int Cluster::nicsPerNode() const {
  if (!spec_.inter_node || spec_.explicit_graph || spec_.inter_node->topology == NetworkTopology::kTorus) return 0;
  const int nics = spec_.inter_node->nics_per_node;
  return nics > spec_.gpus_per_node ? spec_.gpus_per_node : nics;
}

DeviceId Cluster::nic(int node, int index) const {
  return nics_[static_cast<std::size_t>(node) * static_cast<std::size_t>(nicsPerNode()) +
               static_cast<std::size_t>(index)];
}

std::span<const LinkId> Cluster::outLinks(DeviceId device) const {
  auto [begin, end] = boost::out_edges(static_cast<ClusterGraph::vertex_descriptor>(device), graph_);
  if (begin == end) return {};
  const std::size_t first = boost::get(boost::edge_index, graph_, *begin);
  return {links_by_edge_index_.data() + first, static_cast<std::size_t>(std::distance(begin, end))};
}

}  // namespace trainsim::topology
