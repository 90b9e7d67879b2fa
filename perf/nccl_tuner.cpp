#include "perf/nccl_tuner.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "perf/mesh_rings.h"
#include "perf/torus_rings.h"

namespace trainsim::perf {

using topology::DeviceId;
using topology::LinkType;

namespace detail {

double stepLatencySeconds(const CommunicationParameters& parameters, CollectiveAlgorithm algorithm, Protocol protocol,
                          HopClass intra, double intra_steps, double network_steps, bool multi_node,
                          StepLatencyExcess excess, bool one_gpu_per_node) {
  const auto& table =
      algorithm == CollectiveAlgorithm::kTree ? parameters.tree_step_latency_us : parameters.ring_step_latency_us;
  const auto p = static_cast<std::size_t>(protocol);
  double intra_us = table[static_cast<std::size_t>(intra)][p];
  double network_table_us = table[static_cast<std::size_t>(HopClass::kNetwork)][p];
  // NCCL 2.23+: with one GPU per node every network step is priced at the tree's network
  // latency, whatever the algorithm (tuning.cc: "With ppn=1 latencies are fully exposed").
  if (multi_node && one_gpu_per_node && parameters.ncclAtLeast(kNcclPatVersion)) {
    network_table_us = parameters.tree_step_latency_us[static_cast<std::size_t>(HopClass::kNetwork)][p];
  }
  if (algorithm == CollectiveAlgorithm::kNvls || algorithm == CollectiveAlgorithm::kNvlsTree) {
    intra_us = parameters.ncclAtLeast(kNcclNvls2215Version) ? parameters.nvls_step_latency_us
                                                            : parameters.nvls_step_latency_us_before_2_21_5;
  }
  if (algorithm == CollectiveAlgorithm::kNvlsTree) network_table_us = parameters.nvls_tree_network_step_latency_us;
  // NCCL: LL's intra-node step costs more when the collective spans nodes (tuning.cc).
  if (multi_node && protocol == Protocol::kLL) intra_us *= parameters.ll_multi_node_intra_step_factor;
  // NCCL 2.18+: "Inter-node rings still have to launch nsteps * net overhead" (tuning.cc).
  if (multi_node && algorithm == CollectiveAlgorithm::kRing) {
    const double overhead_us = parameters.ring_net_overhead_us *
                               (protocol == Protocol::kSimple ? parameters.ring_net_overhead_simple_factor : 1.0);
    intra_us = std::max(intra_us, overhead_us);
  }
  // The wire part of the step follows the cluster's links; faster links cannot make a step
  // cost less than nothing.
  intra_us = std::max(0.0, intra_us + excess.intra_s * 1e6);
  const double network_us = std::max(0.0, network_table_us + excess.network_s * 1e6);
  return (intra_steps * intra_us + network_steps * network_us) * 1e-6;
}

double patLatencySeconds(const CommunicationParameters& parameters, int nodes, double ranks, double network_excess_s) {
  // NCCL's "log2i(nNodes) * (interLat / 3.5) + nRanks * 2.8", interLat being the tree's
  // network step latency with one GPU per node (Simple: PAT runs no other protocol).
  const double log2_nodes = std::floor(std::log2(std::max(1.0, static_cast<double>(nodes))));
  const double network_us = std::max(0.0, parameters.tree_step_latency_us[static_cast<std::size_t>(HopClass::kNetwork)]
                                                                         [static_cast<std::size_t>(Protocol::kSimple)] +
                                              network_excess_s * 1e6);
  return (log2_nodes * network_us / parameters.pat_log_step_latency_divisor +
          ranks * parameters.pat_per_rank_latency_us) *
         1e-6;
}

double pipelineFillSeconds(const CommunicationParameters& parameters, Protocol protocol, double steps,
                           double bytes_per_step) {
  if (steps <= 1.0) return 0.0;
  const double chunk = std::min(parameters.chunk_bytes[static_cast<std::size_t>(protocol)],
                                bytes_per_step / parameters.pipeline_channels);
  return (steps - 1.0) * chunk / (parameters.channel_bandwidth_GBps * 1e9);
}

double treeSizeCorrection(const CommunicationParameters& parameters, CollectiveAlgorithm algorithm, Protocol protocol,
                          double bytes) {
  if (algorithm != CollectiveAlgorithm::kTree && algorithm != CollectiveAlgorithm::kNvlsTree) return 1.0;
  // NCCL's size class: log2(bytes / 64), rounded down; none below 64 B.
  if (bytes < 64.0) return 1.0;
  const auto size_class = static_cast<std::size_t>(std::floor(std::log2(bytes / 64.0)));
  if (size_class >= kTreeSizeClasses) return 1.0;
  return parameters.tree_size_correction[static_cast<std::size_t>(protocol)][size_class];
}

}  // namespace detail

NcclTuner::NcclTuner(const topology::Cluster& cluster, topology::Router& router,
                     const CommunicationParameters& parameters)
    : cluster_(cluster), router_(router), parameters_(forHostCpu(parameters, cluster.spec().pcie.host_cpu)) {
  if (cluster_.spec().explicit_graph) measureExplicitNetwork();
  const auto& network = cluster_.spec().inter_node;
  for (Protocol protocol : kAllProtocols) {
    allowed_protocols_[static_cast<std::size_t>(protocol)] =
        !network || network->nccl_protocols.empty() ||
        std::find(network->nccl_protocols.begin(), network->nccl_protocols.end(), protocolName(protocol)) !=
            network->nccl_protocols.end();
  }
}

namespace {

bool isNetworkLink(LinkType type) {
  return type == LinkType::kInfiniBand || type == LinkType::kRoce || type == LinkType::kEthernet;
}

bool isNetworkSwitch(topology::DeviceKind kind) {
  return kind == topology::DeviceKind::kLeafSwitch || kind == topology::DeviceKind::kSpineSwitch ||
         kind == topology::DeviceKind::kCoreSwitch;
}

}  // namespace

void NcclTuner::measureExplicitNetwork() {
  // A node's network bandwidth is what its own devices (NICs, or GPUs cabled directly) put
  // on network links; switches belong to no node even when the file gives them one.
  const auto nodes = static_cast<std::size_t>(std::max(1, cluster_.spec().nodes));
  explicit_network_Bps_.assign(nodes, 0.0);
  explicit_network_nominal_Bps_.assign(nodes, 0.0);
  explicit_nics_.assign(nodes, 0);
  const std::string& gpu = cluster_.spec().gpu.key;
  for (DeviceId id = 0; id < cluster_.devices().size(); ++id) {
    const topology::Device& device = cluster_.device(id);
    if (isNetworkSwitch(device.kind) || device.node < 0 || static_cast<std::size_t>(device.node) >= nodes) continue;
    bool cabled = false;
    for (auto link_id : cluster_.outLinks(id)) {
      const topology::Link& link = cluster_.link(link_id);
      if (!isNetworkLink(link.type)) continue;
      explicit_network_Bps_[static_cast<std::size_t>(device.node)] +=
          link.bandwidth_Bps * parameters_.linkEfficiency(link.type, gpu);
      explicit_network_nominal_Bps_[static_cast<std::size_t>(device.node)] += link.bandwidth_Bps;
      cabled = true;
    }
    if (cabled && device.kind == topology::DeviceKind::kNic) ++explicit_nics_[static_cast<std::size_t>(device.node)];
  }
}

double NcclTuner::explicitGpuBandwidth(DeviceId gpu, bool nominal) const {
  // Scale-up links first (NVLink, ICI); without any, the PCIe links; without those, any.
  const std::string& key = cluster_.spec().gpu.key;
  double scale_up = 0.0;
  double pcie = 0.0;
  double other = 0.0;
  for (auto id : cluster_.outLinks(gpu)) {
    const topology::Link& link = cluster_.link(id);
    const double effective = link.bandwidth_Bps * (nominal ? 1.0 : parameters_.linkEfficiency(link.type, key));
    if (link.type == LinkType::kNvLink || link.type == LinkType::kIci) {
      scale_up += effective;
    } else if (link.type == LinkType::kPcie) {
      pcie += effective;
    } else {
      other += effective;
    }
  }
  return scale_up > 0.0 ? scale_up : (pcie > 0.0 ? pcie : other);
}

GroupHardware NcclTuner::hardware(const GroupLayout& layout) const {
  GroupHardware result;
  const auto& spec = cluster_.spec();
  const std::string& gpu = spec.gpu.key;
  // The intra-node hops of the group in order (the ring's inside each node).
  bool pcie_hop = false;
  bool first_hop = true;
  for (const auto& node : layout.ranks_by_node) {
    for (std::size_t i = 0; i + 1 < node.size(); ++i) {
      const double excess = latencyExcessSeconds(node[i], node[i + 1]);
      result.excess.intra_s = first_hop ? excess : std::max(result.excess.intra_s, excess);
      first_hop = false;
      if (spec.explicit_graph && hopClass(node[i], node[i + 1]) == HopClass::kPcie) pcie_hop = true;
    }
  }
  // The network hops between consecutive nodes (the ring's, the trees' chain heads').
  for (std::size_t k = 0; k + 1 < layout.ranks_by_node.size(); ++k) {
    const double excess = latencyExcessSeconds(layout.ranks_by_node[k].front(), layout.ranks_by_node[k + 1].front());
    result.excess.network_s = k == 0 ? excess : std::max(result.excess.network_s, excess);
  }
  if (!spec.explicit_graph) {
    // The homogeneous form: the figures the links were built from.
    if (spec.intra_node.fabric == topology::IntraNodeFabric::kPcie) {
      result.nominal_intra_Bps = spec.pcie.bandwidth_GBps * 1e9;
      result.intra_Bps = result.nominal_intra_Bps * parameters_.pcie_efficiency;
      result.intra = HopClass::kPcie;
    } else {
      result.nominal_intra_Bps = spec.intra_node.bandwidth_GBps * 1e9;
      result.intra_Bps = result.nominal_intra_Bps * parameters_.linkEfficiency(LinkType::kNvLink, gpu);
    }
    result.nics_per_node = cluster_.nicsPerNode();
    if (spec.inter_node && result.nics_per_node > 0) {
      const LinkType network = spec.inter_node->protocol == topology::NetworkProtocol::kInfiniBand
                                   ? LinkType::kInfiniBand
                                   : LinkType::kEthernet;
      result.nominal_network_Bps = spec.inter_node->nics_per_node * spec.inter_node->nic_bandwidth_Gbps * 1e9 / 8.0;
      result.network_Bps = result.nominal_network_Bps * parameters_.linkEfficiency(network, spec);
    }
    return result;
  }
  // An explicit graph: measured on its links.
  result.intra = pcie_hop ? HopClass::kPcie : HopClass::kNvLink;
  result.intra_Bps = std::numeric_limits<double>::infinity();
  for (const auto& node : layout.ranks_by_node) {
    for (int64_t rank : node) {
      result.intra_Bps = std::min(result.intra_Bps, explicitGpuBandwidth(cluster_.accelerator(rank)));
      result.nominal_intra_Bps =
          result.nominal_intra_Bps > 0.0
              ? std::min(result.nominal_intra_Bps, explicitGpuBandwidth(cluster_.accelerator(rank), true))
              : explicitGpuBandwidth(cluster_.accelerator(rank), true);
    }
  }
  // Only when every node of the group is cabled to the network does it limit the group;
  // nodes joined by other links are bounded by the GPUs' own bandwidth.
  double network = std::numeric_limits<double>::infinity();
  double nominal_network = std::numeric_limits<double>::infinity();
  int nics = std::numeric_limits<int>::max();
  for (const auto& node : layout.ranks_by_node) {
    const auto index = static_cast<std::size_t>(cluster_.device(cluster_.accelerator(node.front())).node);
    network = std::min(network, explicit_network_Bps_[index]);
    nominal_network = std::min(nominal_network, explicit_network_nominal_Bps_[index]);
    nics = std::min(nics, explicit_nics_[index]);
  }
  result.network_Bps = std::isfinite(network) ? network : 0.0;
  result.nominal_network_Bps = std::isfinite(nominal_network) ? nominal_network : 0.0;
  result.nics_per_node = nics == std::numeric_limits<int>::max() ? 0 : nics;
  return result;
}

GroupLayout NcclTuner::layout(const std::vector<int64_t>& ranks) const {
  GroupLayout result;
  std::map<int32_t, std::size_t> node_slot;
  for (int64_t rank : ranks) {
    const int32_t node = cluster_.device(cluster_.accelerator(rank)).node;
    auto [it, inserted] = node_slot.emplace(node, result.ranks_by_node.size());
    if (inserted) result.ranks_by_node.emplace_back();
    result.ranks_by_node[it->second].push_back(rank);
  }
  result.size = static_cast<int64_t>(ranks.size());
  result.mesh =
      cluster_.spec().intra_node.fabric == topology::IntraNodeFabric::kNvLinkMesh && !cluster_.spec().explicit_graph;
  for (const auto& node : result.ranks_by_node) {
    result.max_per_node = std::max(result.max_per_node, static_cast<int>(node.size()));
  }
  const auto& network = cluster_.spec().inter_node;
  if (network && network->topology == topology::NetworkTopology::kTorus) result.torus_dims = network->torus_dims;
  return result;
}

bool NcclTuner::nvlsAvailable(const GroupLayout& layout) const {
  return layout.singleNode() && layout.size > 1 && nvlsNodes();
}

bool NcclTuner::nvlsTreeAvailable(const GroupLayout& layout) const {
  if (layout.singleNode() || !nvlsNodes()) return false;
  // NVLS needs at least two of the group's GPUs on every node, the same number on each, so
  // that the GPUs of one local index form the trees between nodes.
  for (const auto& node : layout.ranks_by_node) {
    if (node.size() < 2 || static_cast<int>(node.size()) != layout.max_per_node) return false;
  }
  return true;
}

bool NcclTuner::patAvailable(const GroupLayout& layout) const {
  // ncclPatEnable: NCCL 2.23+, one GPU per node (so across nodes); NCCL's own algorithm, not
  // RCCL's or XLA's.
  return parameters_.ncclAtLeast(detail::kNcclPatVersion) && !layout.singleNode() && layout.max_per_node == 1 &&
         layout.torus_dims.empty() && cluster_.spec().gpu.vendor == "nvidia";
}

bool NcclTuner::nvlsNodes() const {
  return cluster_.spec().intra_node.nvls && cluster_.spec().intra_node.fabric == topology::IntraNodeFabric::kNvSwitch &&
         !cluster_.spec().explicit_graph;
}

std::vector<CollectiveAlgorithm> NcclTuner::candidates(CollectiveOp op, const GroupLayout& layout) const {
  switch (op) {
    case CollectiveOp::kAllReduce: {
      std::vector<CollectiveAlgorithm> result = {CollectiveAlgorithm::kRing};
      if (!layout.singleNode()) result.push_back(CollectiveAlgorithm::kTree);
      if (nvlsAvailable(layout)) result.push_back(CollectiveAlgorithm::kNvls);
      if (nvlsTreeAvailable(layout)) result.push_back(CollectiveAlgorithm::kNvlsTree);
      return result;
    }
    case CollectiveOp::kAllGather:
    case CollectiveOp::kReduceScatter: {
      std::vector<CollectiveAlgorithm> result = {CollectiveAlgorithm::kRing};
      if (patAvailable(layout)) result.push_back(CollectiveAlgorithm::kPat);
      return result;
    }
    case CollectiveOp::kBroadcast: return {CollectiveAlgorithm::kRing};
    case CollectiveOp::kAllToAll:
    case CollectiveOp::kSendRecv: return {CollectiveAlgorithm::kDirect};
  }
  return {};
}

int NcclTuner::channels(CollectiveAlgorithm algorithm, const GroupLayout& layout, const GroupHardware& hardware) {
  // Across nodes NCCL runs one channel per NIC so that every NIC carries one ring's (or
  // tree's) traffic in each direction. Inside a switched node one channel already fills the
  // links; on a full mesh each channel takes its own ring over different links.
  if (algorithm == CollectiveAlgorithm::kRing && !layout.torus_dims.empty()) {
    std::vector<int64_t> ranks;
    for (const auto& node : layout.ranks_by_node) ranks.insert(ranks.end(), node.begin(), node.end());
    return torusRingChannels(ranks, layout.torus_dims);
  }
  const int across = layout.singleNode() ? 1 : std::max(1, std::min(hardware.nics_per_node, layout.max_per_node));
  if (algorithm == CollectiveAlgorithm::kRing && layout.mesh) return meshRingChannels(layout.max_per_node, across);
  if (algorithm == CollectiveAlgorithm::kRing || algorithm == CollectiveAlgorithm::kTree ||
      algorithm == CollectiveAlgorithm::kNvlsTree || algorithm == CollectiveAlgorithm::kPat) {
    return across;
  }
  return 1;
}

int NcclTuner::ncclChannels(const GroupLayout& layout, const GroupHardware& hardware) const {
  int result = channels(CollectiveAlgorithm::kTree, layout, hardware);
  if (!layout.singleNode() && hardware.network_Bps > 0.0 && hardware.nics_per_node > 0) {
    // NCCL's search gives each channel one NET and at most the NET's rate, and every channel
    // passes through each GPU of a node: one channel per NIC, but no more than it takes to
    // fill the GPUs' links at a NIC's rate (the channels' rate drops to share the rest).
    const double per_nic_Bps = hardware.network_Bps / hardware.nics_per_node;
    const double fill = std::ceil(hardware.intra_Bps / per_nic_Bps);
    result = std::max(1, std::min(result, static_cast<int>(std::min(fill, 1e6))));
    const double per_channel_Bps = std::min(per_nic_Bps, hardware.intra_Bps / result);
    // ncclTopoDupChannels. RCCL gives every AMD GPU compute capability 6.0 in its topology
    // ("Use SM60 as compatibility level", ROCm/rccl src/graph/topo.cc ncclTopoAddGpu at
    // 0cbce2a7), which is what this test reads: AMD GPUs duplicate as pre-Ampere ones do.
    const std::optional<double> capability = cluster_.spec().gpu.compute_capability;
    const bool after_ampere = cluster_.spec().gpu.vendor != "amd" && (!capability || *capability > 8.0);
    if (per_channel_Bps >= parameters_.channel_duplication_min_GBps * 1e9 &&
        (!after_ampere || per_channel_Bps >= parameters_.channel_duplication_full_GBps * 1e9 ||
         result <= static_cast<int>(parameters_.channel_duplication_max_channels))) {
      result *= 2;
    }
  }
  return std::min(result, static_cast<int>(parameters_.nccl_max_channels));
}

double NcclTuner::treeMaxBusBandwidth(const GroupLayout& layout, const GroupHardware& hardware) const {
  // Nodes joined without NICs (an explicit graph's switch) have no NICs' channels to count.
  const double per_channel =
      hardware.network_Bps > 0.0
          ? ncclChannels(layout, hardware) *
                parameters_.treeMaxBusPerChannel(ncclGpuClass(cluster_.spec().gpu.compute_capability), layout.nodes())
          : std::numeric_limits<double>::infinity();
  const double whole_GBps =
      layout.nodes() <= 2 ? parameters_.tree_max_bus_GBps_two_nodes : parameters_.tree_max_bus_GBps_more_nodes;
  return whole_GBps > 0.0 ? std::min(per_channel, whole_GBps * 1e9) : per_channel;
}

std::optional<double> NcclTuner::protocolMaxBusBandwidth(const GroupLayout& layout, const GroupHardware& hardware,
                                                         CollectiveAlgorithm algorithm, Protocol protocol) const {
  // NCCL's own tables, on NVIDIA GPUs (RCCL has the same but prices its GPUs as compute
  // capability 6.0; TPUs and Gaudi run no NCCL); nodes joined without NICs (an explicit
  // graph's switch) have no NICs' channels to count.
  const auto& spec = cluster_.spec();
  if (spec.gpu.vendor != "nvidia" || (!layout.singleNode() && !(hardware.network_Bps > 0.0))) return std::nullopt;
  return parameters_.protocolMaxBus(algorithm, protocol, ncclGpuClass(spec.gpu.compute_capability), layout.nodes(),
                                    layout.singleNode() ? 1 : ncclChannels(layout, hardware));
}

std::optional<double> NcclTuner::twoNodeTreeBusBandwidth(const GroupLayout& layout, const GroupHardware& hardware,
                                                         double ring_bus_Bps) const {
  // Up to 2 nodes NCCL prices every algorithm at its graph's intra-node channel bandwidth
  // (src/graph/tuning.cc ncclTopoTuneModel: bw = nNodes <= 2 ? bwIntra : bwInter). The ring's
  // search holds bwIntra at its inter-node rate, one NIC's; the tree's raises bwIntra alone
  // over the NVLink paths (src/graph/search.cc ncclTopoCompute, "increase bw": intra only for
  // trees). So the tree is priced at its per-channel NVLink rate x the tree factor (NCCL's
  // .92), at most the per-channel cap, where the ring is priced at a NIC's rate: relative to
  // the ring's bus bandwidth here, that ratio. NCCL's search sees the links' nominal rates,
  // so these are the nominal ones, not the measured efficiencies'. Not for RCCL (its tuning
  // is not read here) or one GPU per node (no NVLink path for the search to raise).
  const auto& spec = cluster_.spec();
  if (spec.gpu.vendor == "amd" || layout.max_per_node < 2 || hardware.nics_per_node <= 0 ||
      !(hardware.nominal_network_Bps > 0.0) || !(hardware.nominal_intra_Bps > 0.0)) {
    return std::nullopt;
  }
  // NICs beyond one a GPU act as one NIC of their summed rate (aws-ofi-nccl's rails).
  const double nic_Bps = hardware.nominal_network_Bps / std::min(hardware.nics_per_node, spec.gpus_per_node);
  const int channels = ncclChannels(layout, hardware);
  const double intra_channel_Bps = hardware.nominal_intra_Bps / std::max(1, channels);
  const double cap_Bps = parameters_.treeMaxBusPerChannel(ncclGpuClass(spec.gpu.compute_capability), layout.nodes());
  const double tree_channel_Bps = std::min(intra_channel_Bps * parameters_.tree_bandwidth_factor, cap_Bps);
  return ring_bus_Bps * tree_channel_Bps / nic_Bps;
}

HopClass NcclTuner::hopClass(int64_t from_rank, int64_t to_rank) const {
  const auto& route = router_.route(cluster_.accelerator(from_rank), cluster_.accelerator(to_rank));
  HopClass result = HopClass::kNvLink;
  for (auto id : route.links) {
    const LinkType type = cluster_.link(id).type;
    if (isNetworkLink(type)) return HopClass::kNetwork;
    if (type == LinkType::kPcie || type == LinkType::kSocketInterconnect) result = HopClass::kPcie;
  }
  return result;
}

double NcclTuner::latencyExcessSeconds(int64_t from_rank, int64_t to_rank) const {
  return deviceLatencyExcessSeconds(cluster_.accelerator(from_rank), cluster_.accelerator(to_rank));
}

double NcclTuner::deviceLatencyExcessSeconds(DeviceId from, DeviceId to) const {
  const topology::Route& route = router_.route(from, to);
  return static_cast<double>(route.latency_ps - route.reference_latency_ps) * 1e-12;
}

double NcclTuner::groupNetworkBandwidthPerGpu(const GroupLayout& layout, const GroupHardware& hardware) const {
  // The node's network shared by the group's GPUs on it, but no more than the NICs their
  // channels use: each GPU's own (nics / gpus_per_node of them where a node has more NICs
  // than GPUs, one where it has fewer; channelEntryIndex spreads the channels over them).
  const int gpus_per_node = std::max(1, cluster_.spec().gpus_per_node);
  const int owners =
      std::max(1, std::min(hardware.nics_per_node > 0 ? hardware.nics_per_node : gpus_per_node, gpus_per_node));
  return std::min(hardware.network_Bps / layout.max_per_node, hardware.network_Bps / owners);
}

double NcclTuner::estimateTime(const CollectiveRequest& request, const GroupLayout& layout,
                               const GroupHardware& hardware, CollectiveAlgorithm algorithm, Protocol protocol) const {
  // Closed-form per-GPU bottleneck bandwidths, as NCCL's tuner sees them.
  const auto& spec = cluster_.spec();
  double bus_Bps = hardware.intra_Bps;
  if (!layout.singleNode() && hardware.network_Bps > 0.0) {
    bus_Bps = std::min(bus_Bps, groupNetworkBandwidthPerGpu(layout, hardware));
  }
  const auto p = static_cast<std::size_t>(protocol);
  const double protocol_factor = parameters_.protocolBandwidthFactor(algorithm, protocol);
  bus_Bps *= protocol_factor;
  const std::optional<double> protocol_cap = protocolMaxBusBandwidth(layout, hardware, algorithm, protocol);
  const auto n = static_cast<double>(layout.size);
  double time = parameters_.launch_overhead_us * 1e-6 +
                parameters_.base_latency_us[static_cast<std::size_t>(algorithm)][p] * 1e-6;
  const HopClass intra = hardware.intra;
  const StepLatencyExcess excess = hardware.excess;
  const double nodes = layout.nodes();
  switch (algorithm) {
    case CollectiveAlgorithm::kRing: {
      const double steps = request.op == CollectiveOp::kAllReduce ? 2.0 * (n - 1.0) : n - 1.0;
      const double network_steps = steps / std::max(1.0, n - 1.0) * (nodes - 1.0);
      // A broadcast's chain takes none of the reduction rings' multi-node rules (collective_ring.cpp).
      const bool reduction_ring = request.op != CollectiveOp::kBroadcast;
      time +=
          detail::stepLatencySeconds(parameters_, algorithm, protocol, intra, steps - network_steps, network_steps,
                                     nodes > 1 && reduction_ring, excess, layout.max_per_node == 1 && reduction_ring);
      const double per_step = request.op == CollectiveOp::kBroadcast ? request.bytes : request.bytes / n;
      time += detail::pipelineFillSeconds(parameters_, protocol, steps, per_step);
      time += request.bytes * busBandwidthFactor(request.op, layout.size) /
              (protocol_cap ? std::min(bus_Bps, *protocol_cap) : bus_Bps);
      break;
    }
    case CollectiveAlgorithm::kTree: {
      const double depth = std::floor(std::log2(std::max(1.0, nodes)));
      const double steps = layout.max_per_node - 1.0 + depth;
      time += 2.0 * detail::stepLatencySeconds(parameters_, algorithm, protocol, intra, layout.max_per_node - 1.0,
                                               depth, nodes > 1, excess);
      time += detail::pipelineFillSeconds(parameters_, protocol, 2.0 * steps, request.bytes / 2.0);
      // NCCL's tree model: 0.9 x the ring's bus bandwidth, at most NCCL's channels x its
      // per-channel cap, and algorithm bandwidth = half the tree bus bandwidth.
      double tree_bus = std::min(bus_Bps * parameters_.tree_bandwidth_factor,
                                 treeMaxBusBandwidth(layout, hardware) * protocol_factor);
      if (nodes == 2.0) {
        if (const auto two_node = twoNodeTreeBusBandwidth(layout, hardware, bus_Bps)) {
          tree_bus = std::min(*two_node, treeMaxBusBandwidth(layout, hardware) * protocol_factor);
        }
      }
      if (protocol_cap) tree_bus = std::min(tree_bus, *protocol_cap);
      time += request.bytes / (parameters_.tree_algorithm_bandwidth_ratio * tree_bus *
                               detail::treeSizeCorrection(parameters_, algorithm, protocol, request.bytes));
      break;
    }
    case CollectiveAlgorithm::kNvls:
      time += detail::stepLatencySeconds(parameters_, algorithm, protocol, intra, 1.0, 0.0, false, excess);
      time += detail::pipelineFillSeconds(parameters_, protocol, 2.0, request.bytes / n);
      time += request.bytes / (spec.intra_node.bandwidth_GBps * 1e9 * parameters_.nvlsEfficiency(spec.gpu.key));
      break;
    case CollectiveAlgorithm::kNvlsTree: {
      // NCCL's NVLS_TREE: one NVLS step inside the node, 2 log2(nodes) tree steps between
      // nodes. Each node's GPUs reduce through the NVSwitch, the GPUs of one local index
      // exchange their 1/ppn of the buffer between nodes over their own NICs: a node sends
      // the whole buffer once each way over its NICs between 2 nodes, twice beyond (NCCL's
      // tuning.cc doubles the inter-node bandwidth of NVLS_TREE on 2 nodes).
      const double depth = std::floor(std::log2(std::max(1.0, nodes)));
      time += detail::stepLatencySeconds(parameters_, algorithm, protocol, intra, 1.0, 2.0 * depth, true, excess);
      const double nvls_Bps = spec.intra_node.bandwidth_GBps * 1e9 * parameters_.nvlsEfficiency(spec.gpu.key);
      const double network_Bps = hardware.network_Bps * (nodes <= 2.0 ? 1.0 : 0.5);
      time += request.bytes / (std::min(nvls_Bps, network_Bps > 0.0 ? network_Bps : nvls_Bps) *
                               detail::treeSizeCorrection(parameters_, algorithm, protocol, request.bytes));
      break;
    }
    case CollectiveAlgorithm::kPat:
      // NCCL's PAT: its log-depth latency, the ring's bytes at pat_bandwidth_factor of its bus
      // bandwidth.
      time += detail::patLatencySeconds(parameters_, layout.nodes(), n, excess.network_s);
      time +=
          request.bytes * busBandwidthFactor(request.op, layout.size) / (bus_Bps * parameters_.pat_bandwidth_factor);
      break;
    case CollectiveAlgorithm::kDirect:
      time += detail::stepLatencySeconds(parameters_, algorithm, protocol, intra, nodes > 1 ? 0.0 : 1.0,
                                         nodes > 1 ? 1.0 : 0.0, nodes > 1, excess);
      time += request.bytes * busBandwidthFactor(request.op, layout.size) / bus_Bps;
      break;
  }
  return time;
}

Expected<CollectiveChoice> NcclTuner::choose(const CollectiveRequest& request) const {
  return catchInputErrors([&]() -> CollectiveChoice {
    if (request.ranks.size() < 2) throwInputError("", "gpus", "a collective needs at least 2 GPUs");
    std::set<int64_t> seen;
    for (int64_t rank : request.ranks) {
      if (rank < 0 || rank >= cluster_.acceleratorCount()) {
        throwInputError("", "gpus",
                        "GPU rank " + std::to_string(rank) + " is not in the cluster (it has " +
                            std::to_string(cluster_.acceleratorCount()) + " GPUs)");
      }
      if (!seen.insert(rank).second) throwInputError("", "gpus", "GPU rank " + std::to_string(rank) + " appears twice");
    }
    // 2^53 bytes (8 PiB): beyond this sizes are not exact doubles and times overflow.
    if (!std::isfinite(request.bytes) || request.bytes < 0.0 || request.bytes > 9.007199254740992e15) {
      throwInputError("", "bytes", "expected a size >= 0 and at most 2^53 bytes");
    }
    const GroupLayout group = layout(request.ranks);
    std::vector<CollectiveAlgorithm> allowed = candidates(request.op, group);
    if (request.algorithm) {
      if (std::find(allowed.begin(), allowed.end(), *request.algorithm) == allowed.end()) {
        std::string names;
        for (auto algorithm : allowed) names += (names.empty() ? "" : ", ") + std::string(algorithmName(algorithm));
        throwInputError("--algo", "",
                        std::string(algorithmName(*request.algorithm)) + " is not available for " +
                            std::string(collectiveOpName(request.op)) + " on this group; available: " + names);
      }
      allowed = {*request.algorithm};
    }
    const GroupHardware links = hardware(group);
    CollectiveChoice best;
    best.estimated_time_s = std::numeric_limits<double>::infinity();
    bool evaluated = false;
    for (CollectiveAlgorithm algorithm : allowed) {
      for (Protocol protocol : kAllProtocols) {
        if (request.protocol && protocol != *request.protocol) continue;
        if (!request.protocol && !protocolAllowed(protocol)) continue;
        // NVLS, NVLS_TREE and PAT run only with the Simple protocol.
        const bool simple_only = algorithm == CollectiveAlgorithm::kNvls ||
                                 algorithm == CollectiveAlgorithm::kNvlsTree || algorithm == CollectiveAlgorithm::kPat;
        if (simple_only && protocol != Protocol::kSimple) continue;
        evaluated = true;
        const double time = estimateTime(request, group, links, algorithm, protocol);
        if (time < best.estimated_time_s) {
          best = CollectiveChoice{algorithm,
                                  protocol,
                                  channels(algorithm, group, links),
                                  time,
                                  algorithm == CollectiveAlgorithm::kTree ? treeMaxBusBandwidth(group, links) : 0.0,
                                  protocolMaxBusBandwidth(group, links, algorithm, protocol).value_or(0.0)};
        }
      }
    }
    // The pairs left out above are NVLS with a protocol other than Simple and protocols the
    // cluster's nccl_protocols leaves out: no candidate means one of them was forced.
    if (!evaluated && request.protocol) {
      throwInputError("--proto", "", "nvls, nvls_tree and pat run only with the Simple protocol");
    }
    if (!evaluated) {
      throwInputError("--algo", "",
                      "nvls, nvls_tree and pat run only with the Simple protocol, which the cluster's "
                      "inter_node.nccl_protocols leaves out");
    }
    if (!std::isfinite(best.estimated_time_s)) {
      // Links of a built cluster have positive bandwidths; only communication parameters
      // (a calibration) that zero an efficiency or a protocol factor get here.
      throwInputError("", "",
                      "no algorithm can move the data of " + std::string(collectiveOpName(request.op)) + " on " +
                          std::to_string(group.size) + " GPUs: the effective bandwidth of their links is " +
                          std::to_string(links.intra_Bps) +
                          " B/s per GPU; check the efficiencies and protocol factors of the calibration");
    }
    return best;
  });
}

}  // namespace trainsim::perf
