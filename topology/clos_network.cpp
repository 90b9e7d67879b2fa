// Folded-Clos (fat-tree) construction over NICs.
//
// Tier 1 (leaf) switches take `down` NICs each and have `up` uplinks, with down:up set by
// that tier's oversubscription (radix 64 at 1:1 is 32 down / 32 up; at 2:1, 42 / 21).
// Above, blocks are built recursively: a block of tier l groups `down_l` blocks of tier
// l-1; for every uplink "plane" p of the sub-blocks there is one tier-l switch joined to
// uplink p of each sub-block. When all remaining blocks fit under one switch (count <=
// radix), the top tier uses every port downward and the recursion stops. With radix k and
// 1:1 this gives the textbook 3-tier fat tree of k^3/4 hosts; more tiers are added as needed.
//
// Rail-optimized differs only in which NICs share a leaf: NIC r of the nodes of one
// scalable unit (SU) share rail r's leaf (NVIDIA DGX SuperPOD), so GPU r of every node is
// one switch hop from GPU r of any other node in the SU.
#include <algorithm>
#include <string>

#include "base/error.h"
#include "topology/builders.h"

namespace trainsim::topology::detail {
namespace {

struct Block {
  std::vector<DeviceId> uplink_owner;  // the switch owning each uplink plane of the block
};

struct TierPorts {
  int down = 0;
  int up = 0;
};

// Down/up port split for a tier with the given down:up oversubscription.
TierPorts splitPorts(int radix, double oversubscription) {
  TierPorts ports;
  ports.up = std::max(1, static_cast<int>(radix / (1.0 + oversubscription)));
  ports.down = std::min(radix - ports.up, static_cast<int>(ports.up * oversubscription + 0.5));
  return ports;
}

DeviceKind switchKind(int tier) {
  if (tier == 1) return DeviceKind::kLeafSwitch;
  if (tier == 2) return DeviceKind::kSpineSwitch;
  return DeviceKind::kCoreSwitch;
}

std::string switchName(int tier, int index) {
  if (tier == 1) return "leaf" + std::to_string(index);
  if (tier == 2) return "spine" + std::to_string(index);
  if (tier == 3) return "core" + std::to_string(index);
  return "core" + std::to_string(tier - 2) + "." + std::to_string(index);
}

LinkType networkLinkType(NetworkProtocol protocol) {
  switch (protocol) {
    case NetworkProtocol::kInfiniBand: return LinkType::kInfiniBand;
    case NetworkProtocol::kRoce: return LinkType::kRoce;
    case NetworkProtocol::kEfa:
    case NetworkProtocol::kEthernet: return LinkType::kEthernet;
  }
  return LinkType::kInfiniBand;
}

// What every step of the construction shares: the cluster being built, the link type,
// bandwidth and latency of every switch port, and how many switches each tier has so far
// (they number the switches' names).
struct SwitchCabling {
  Cluster& cluster;
  LinkType type;
  double port_Bps;
  int64_t hop_latency_ps;
  std::vector<int> switch_count_by_tier = std::vector<int>(2, 0);

  DeviceId addSwitch(int tier) {
    if (static_cast<int>(switch_count_by_tier.size()) <= tier) switch_count_by_tier.resize(tier + 1, 0);
    const int index = switch_count_by_tier[tier]++;
    return cluster.addDevice(Device{switchKind(tier), -1, index, -1, switchName(tier, index)});
  }
  void connect(DeviceId a, DeviceId b) { cluster.addLinkPair(a, b, type, port_Bps, hop_latency_ps); }
};

// The NICs in the order they are cabled to leaves, `nics_per_leaf` to a leaf; -1 marks a
// leaf port left empty.
std::vector<DeviceId> leafCablingOrder(const std::vector<std::vector<DeviceId>>& nics_by_node, bool rail_optimized,
                                       int nics_per_leaf) {
  const int nodes = static_cast<int>(nics_by_node.size());
  const int nics_per_node = nics_by_node.empty() ? 0 : static_cast<int>(nics_by_node.front().size());
  std::vector<DeviceId> cabling_order;
  cabling_order.reserve(static_cast<std::size_t>(static_cast<int64_t>(nodes) * nics_per_node));
  if (!rail_optimized) {
    for (const auto& nics : nics_by_node) cabling_order.insert(cabling_order.end(), nics.begin(), nics.end());
    return cabling_order;
  }
  const int nodes_per_unit = nics_per_leaf;  // one leaf per rail per scalable unit
  for (int unit_start = 0; unit_start < nodes; unit_start += nodes_per_unit) {
    const int unit_end = std::min(nodes, unit_start + nodes_per_unit);
    for (int rail = 0; rail < nics_per_node; ++rail) {
      for (int node = unit_start; node < unit_end; ++node) cabling_order.push_back(nics_by_node[node][rail]);
      // A partial scalable unit still gets its own leaf per rail.
      const int used = unit_end - unit_start;
      if (used < nodes_per_unit && rail + 1 < nics_per_node) {
        for (int pad = used; pad < nodes_per_unit; ++pad) cabling_order.push_back(DeviceId(-1));
      }
    }
  }
  return cabling_order;
}

// Tier 1: fills leaves with the NICs in cabling order and adds the tier to the fabric.
// Returns one block per leaf, the leaf owning all of its uplink planes.
std::vector<Block> buildLeafTier(SwitchCabling& cabling, const std::vector<DeviceId>& cabling_order,
                                 const TierPorts& leaf_ports, ClosFabric& fabric) {
  std::vector<Block> blocks;
  const DeviceId first_leaf = static_cast<DeviceId>(cabling.cluster.devices().size());
  for (std::size_t start = 0; start < cabling_order.size(); start += static_cast<std::size_t>(leaf_ports.down)) {
    const DeviceId leaf = cabling.addSwitch(1);
    const std::size_t end = std::min(cabling_order.size(), start + static_cast<std::size_t>(leaf_ports.down));
    for (std::size_t i = start; i < end; ++i) {
      if (cabling_order[i] != DeviceId(-1)) cabling.connect(cabling_order[i], leaf);
    }
    blocks.push_back(Block{std::vector<DeviceId>(static_cast<std::size_t>(leaf_ports.up), leaf)});
  }
  fabric.tiers.push_back(ClosTier{first_leaf, static_cast<int64_t>(blocks.size()), 1, 1, leaf_ports.up, {}});
  return blocks;
}

// Groups the blocks `group` at a time under new switches of `tier`, one switch per uplink
// plane of the group, each with `up_ports` uplinks of its own. Returns the new blocks; sets
// first_upper[b] to the switch that plane 0 of block b joins.
std::vector<Block> joinBlocks(SwitchCabling& cabling, const std::vector<Block>& blocks, std::size_t group, int tier,
                              int up_ports, std::vector<DeviceId>& first_upper) {
  const std::size_t planes = blocks.front().uplink_owner.size();
  std::vector<Block> next;
  for (std::size_t start = 0; start < blocks.size(); start += group) {
    const std::size_t end = std::min(blocks.size(), start + group);
    Block block;
    for (std::size_t plane = 0; plane < planes; ++plane) {
      const DeviceId upper = cabling.addSwitch(tier);
      for (std::size_t b = start; b < end; ++b) {
        cabling.connect(blocks[b].uplink_owner[plane], upper);
        if (plane == 0) first_upper[b] = upper;
      }
      for (int u = 0; u < up_ports; ++u) block.uplink_owner.push_back(upper);
    }
    next.push_back(std::move(block));
  }
  return next;
}

// Adaptive routing spreads the traffic leaving a block over all of the block's uplinks, so
// routes use them as one trunk: one per block, recorded in the blocks' tier (lower).
void addUplinkTrunks(SwitchCabling& cabling, const std::vector<Block>& blocks, const std::vector<DeviceId>& first_upper,
                     ClosTier& lower) {
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    const double trunk_Bps = static_cast<double>(blocks[b].uplink_owner.size()) * cabling.port_Bps;
    lower.up_trunks.push_back(
        cabling.cluster.addTrunkPair(blocks[b].uplink_owner.front(), first_upper[b], cabling.type, trunk_Bps));
  }
}

}  // namespace

void buildClosNetwork(Cluster& cluster, const std::vector<std::vector<DeviceId>>& nics_by_node) {
  const InterNodeSpec& net = *cluster.spec().inter_node;
  const int gpus = cluster.spec().gpus_per_node;
  const int fold = net.nics_per_node > gpus ? net.nics_per_node / gpus : 1;
  const double port_Bps = net.nic_bandwidth_Gbps * 1e9 / 8.0 * fold;
  // Folded NICs use `fold` switch ports each, so the switch has radix / fold logical ports.
  const int radix = std::max(2, net.switch_radix / fold);
  const int64_t hop_latency_ps = picosecondsFromMicroseconds(net.latency_us) / 2;
  SwitchCabling cabling{cluster, networkLinkType(net.protocol), port_Bps, hop_latency_ps};
  auto oversubscriptionOfTier = [&](int tier) {
    const auto index = static_cast<std::size_t>(tier - 1);
    return index < net.oversubscription.size() ? net.oversubscription[index] : net.oversubscription.back();
  };

  const int nodes = static_cast<int>(nics_by_node.size());
  const int nics_per_node = nics_by_node.empty() ? 0 : static_cast<int>(nics_by_node.front().size());
  const int64_t endpoint_count = static_cast<int64_t>(nodes) * nics_per_node;

  ClosFabric fabric;
  // InfiniBand subnet managers enable adaptive routing by default (OpenSM's default routing
  // engine is ar_updn: the switch picks, per packet, the least-loaded port among those on a
  // shortest path; NVIDIA "InfiniBand Cluster Bring-up Procedure", section Adaptive Routing),
  // and NCCL uses it on IB. AWS EFA's SRD transport sprays each flow's packets over many
  // paths (Shalev et al., "A Cloud-Optimized Transport Protocol for Elastic and Scalable
  // HPC", IEEE Micro 2020). RoCE and plain Ethernet fabrics hash each flow onto one path (ECMP).
  fabric.adaptive_routing = net.protocol == NetworkProtocol::kInfiniBand || net.protocol == NetworkProtocol::kEfa;
  // Everything under one switch: a single leaf with all ports facing the NICs.
  if (endpoint_count <= radix) {
    const DeviceId leaf = cabling.addSwitch(1);
    for (const auto& nics : nics_by_node) {
      for (DeviceId nic : nics) cabling.connect(nic, leaf);
    }
    fabric.tiers.push_back(ClosTier{leaf, 1, 1, 1, 0, {}});
    cluster.setClosFabric(std::move(fabric));
    return;
  }

  // Tier 1: the leaves, filled with the NICs in the order they are cabled.
  const TierPorts leaf_ports = splitPorts(radix, oversubscriptionOfTier(1));
  const bool rail_optimized = net.topology == NetworkTopology::kRailOptimized;
  std::vector<Block> blocks =
      buildLeafTier(cabling, leafCablingOrder(nics_by_node, rail_optimized, leaf_ports.down), leaf_ports, fabric);

  // Ports of the tier whose blocks the next loop joins (their uplinks are built there).
  TierPorts lower_ports = leaf_ports;
  for (int tier = 2; blocks.size() > 1; ++tier) {
    if (tier > 6) {
      throwInputError(cluster.spec().source_file, "inter_node.switch_radix",
                      "a fat tree of more than 6 tiers would be needed for " + std::to_string(endpoint_count) +
                          " NICs with switch_radix " + std::to_string(net.switch_radix) + "; raise switch_radix");
    }
    const std::size_t planes = blocks.front().uplink_owner.size();
    const bool top = blocks.size() <= static_cast<std::size_t>(radix);
    const TierPorts ports = top ? TierPorts{radix, 0} : splitPorts(radix, oversubscriptionOfTier(tier));
    const std::size_t group = top ? blocks.size() : static_cast<std::size_t>(ports.down);
    const int64_t leaves_per_block = fabric.tiers.back().leaves_per_block * static_cast<int64_t>(group);
    fabric.tiers.push_back(ClosTier{static_cast<DeviceId>(cluster.devices().size()),
                                    static_cast<int64_t>((blocks.size() + group - 1) / group * planes),
                                    static_cast<int64_t>(planes),
                                    leaves_per_block,
                                    ports.up,
                                    {}});
    std::vector<DeviceId> first_upper(blocks.size());
    std::vector<Block> next = joinBlocks(cabling, blocks, group, tier, ports.up, first_upper);
    // Where the block has as much bandwidth up as down, the trunk carries at most what the
    // NICs below it send and cannot limit a flow: left out.
    if (fabric.adaptive_routing && lower_ports.down > lower_ports.up) {
      addUplinkTrunks(cabling, blocks, first_upper, fabric.tiers[fabric.tiers.size() - 2]);
    }
    lower_ports = ports;
    blocks = std::move(next);
  }
  cluster.setClosFabric(std::move(fabric));
}

}  // namespace trainsim::topology::detail
