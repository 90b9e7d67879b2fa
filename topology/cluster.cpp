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
  // A stable counting sort of the links by source (trunks are left out): each device's
  // out-links stay in the order they were added, so routes and their ties are deterministic.
  out_offsets_.assign(devices_.size() + 1, 0);
  for (const Link& link : links_) {
    if (!link.trunk) ++out_offsets_[link.from + 1];
  }
  for (std::size_t device = 0; device < devices_.size(); ++device) out_offsets_[device + 1] += out_offsets_[device];
  out_links_.assign(out_offsets_.back(), 0);
  std::vector<std::size_t> next(out_offsets_.begin(), out_offsets_.end() - 1);
  for (LinkId id = 0; id < links_.size(); ++id) {
    if (!links_[id].trunk) out_links_[next[links_[id].from]++] = id;
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
  const std::size_t first = out_offsets_[device];
  return {out_links_.data() + first, out_offsets_[device + 1] - first};
}

}  // namespace trainsim::topology
