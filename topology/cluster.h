// The cluster as a graph of devices and directed links (out-links in compressed sparse row
// form), built once from a ClusterSpec and immutable afterwards, so simulations on several
// threads can share it. Plain vectors rather than a Boost.Graph type: this header is in most
// of the project's sources, and Boost.Graph's headers were most of their compile time.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "base/expected.h"
#include "topology/clos_fabric.h"
#include "topology/cluster_spec.h"
#include "topology/device.h"
#include "topology/link.h"

namespace trainsim::topology {

class Cluster {
 public:
  // Expands the spec into devices and links (see cluster_builder.cpp for the structures).
  // Fails (InvalidInput) when the network cannot be built, e.g. too many nodes for the switch radix.
  [[nodiscard]] static Expected<Cluster> build(const ClusterSpec& spec);

  [[nodiscard]] const ClusterSpec& spec() const { return spec_; }
  [[nodiscard]] const std::vector<Device>& devices() const { return devices_; }
  [[nodiscard]] const std::vector<Link>& links() const { return links_; }
  [[nodiscard]] const Device& device(DeviceId id) const { return devices_[id]; }
  [[nodiscard]] const Link& link(LinkId id) const { return links_[id]; }

  // Accelerators in rank order: node by node, GPU 0..k-1 inside a node.
  [[nodiscard]] const std::vector<DeviceId>& accelerators() const { return accelerators_; }
  [[nodiscard]] int64_t acceleratorCount() const { return static_cast<int64_t>(accelerators_.size()); }
  [[nodiscard]] DeviceId accelerator(int64_t rank) const { return accelerators_[static_cast<std::size_t>(rank)]; }
  // NICs per node after folding (see node_builder.cpp); 0 without an inter-node network.
  [[nodiscard]] int nicsPerNode() const;
  // NIC `index` of `node` (index < nicsPerNode()).
  [[nodiscard]] DeviceId nic(int node, int index) const;
  // The folded-Clos structure of the network, when the cluster has one.
  [[nodiscard]] const std::optional<ClosFabric>& closFabric() const { return clos_; }
  void setClosFabric(ClosFabric fabric) { clos_ = std::move(fabric); }
  // Directed links leaving a device, in the order they were added.
  [[nodiscard]] std::span<const LinkId> outLinks(DeviceId device) const;

  // Construction API for the builder: adds a device / a pair of directed links.
  DeviceId addDevice(Device device);
  LinkId addLinkPair(DeviceId a, DeviceId b, LinkType type, double bandwidth_Bps, int64_t latency_ps);
  // Adds a trunk pair (Link::trunk): up from a to b and down from b to a, left out of the graph.
  LinkId addTrunkPair(DeviceId a, DeviceId b, LinkType type, double bandwidth_Bps);
  // Builds the out-link index; call once after the last add.
  void finalize();

 private:
  explicit Cluster(ClusterSpec spec) : spec_(std::move(spec)) {}

  ClusterSpec spec_;
  std::vector<Device> devices_;
  std::vector<Link> links_;
  std::vector<DeviceId> accelerators_;
  std::vector<DeviceId> nics_;
  std::optional<ClosFabric> clos_;  // node-major, in the order the builder added them
  // Out-links in compressed sparse row form: device d's are
  // out_links_[out_offsets_[d] .. out_offsets_[d + 1]), in the order they were added.
  std::vector<std::size_t> out_offsets_;
  std::vector<LinkId> out_links_;
};

}  // namespace trainsim::topology
