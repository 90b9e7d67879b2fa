#include "topology/cluster_loader.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <system_error>

#include "topology/link_defaults.h"
#include "topology/reliability_spec.h"

namespace trainsim::topology {
namespace {

NetworkProtocol parseProtocol(const ConfigNode& node) {
  const std::string text = node.asEnum({"infiniband", "roce", "ethernet", "efa"});
  if (text == "roce") return NetworkProtocol::kRoce;
  if (text == "ethernet") return NetworkProtocol::kEthernet;
  if (text == "efa") return NetworkProtocol::kEfa;
  return NetworkProtocol::kInfiniBand;
}

NetworkTopology parseNetworkTopology(const ConfigNode& node) {
  const std::string text = node.asEnum({"fat_tree", "rail_optimized", "torus"});
  if (text == "rail_optimized") return NetworkTopology::kRailOptimized;
  if (text == "torus") return NetworkTopology::kTorus;
  return NetworkTopology::kFatTree;
}

GpuSpec resolveGpu(const ConfigNode& node, const ConfigPaths& paths) {
  if (node.isMap()) return GpuCatalog::parseEntry(node, "inline");
  const std::string key = node.asString();
  const GpuCatalog catalog = valueOrThrow(loadGpuCatalog(paths));
  const GpuSpec* gpu = catalog.find(key);
  if (gpu == nullptr) {
    std::string best;
    std::size_t best_distance = 1000;
    for (const auto& candidate : catalog.keys()) {
      const std::size_t distance = editDistance(key, candidate);
      if (distance < best_distance) {
        best_distance = distance;
        best = candidate;
      }
    }
    std::string message = "unknown GPU \"" + key + "\"";
    if (!best.empty() && best_distance <= 3) message += " (did you mean '" + best + "'?)";
    message += "; see configs/gpus.yaml or give an inline mapping with peak_tflops, memory_GiB, memory_bandwidth_GBps";
    node.fail(message);
  }
  return *gpu;
}

// The deepest fat tree buildClosNetwork builds (clos_network.cpp).
constexpr int kMaxClosTiers = 6;

void parseIntraNode(const ConfigNode& root, ClusterSpec& cluster) {
  cluster.intra_node.fabric = cluster.gpu.default_fabric;
  std::optional<ConfigNode> section = root.optionalChild("intra_node");
  if (section) {
    section->allowKeys({"fabric", "bandwidth_GBps", "latency_us", "nvls"});
    if (auto fabric = section->optionalChild("fabric")) cluster.intra_node.fabric = GpuCatalog::parseFabric(*fabric);
  }
  const IntraNodeFabric fabric = cluster.intra_node.fabric;
  double default_bandwidth =
      fabric == IntraNodeFabric::kPcie ? cluster.pcie.bandwidth_GBps : cluster.gpu.intra_node_bandwidth_GBps;
  cluster.intra_node.bandwidth_GBps = default_bandwidth;
  cluster.intra_node.latency_us = defaults::intraNodeLatencyUs(fabric);
  cluster.intra_node.nvls = cluster.gpu.nvls && fabric == IntraNodeFabric::kNvSwitch;
  if (section) {
    if (auto bandwidth = section->optionalChild("bandwidth_GBps")) {
      cluster.intra_node.bandwidth_GBps = bandwidth->asNumberIn(limits::kMinBandwidthGBps, limits::kMaxBandwidthGBps);
    }
    cluster.intra_node.latency_us =
        section->numberIn("latency_us", cluster.intra_node.latency_us, 0.0, limits::kMaxLatencyUs);
    if (auto nvls = section->optionalChild("nvls")) {
      cluster.intra_node.nvls = nvls->asBool();
      if (cluster.intra_node.nvls && fabric != IntraNodeFabric::kNvSwitch) {
        nvls->fail("NVLink SHARP needs an NVSwitch fabric (intra_node.fabric: nvswitch)");
      }
    }
  }
  if (fabric != IntraNodeFabric::kPcie && fabric != IntraNodeFabric::kTorus &&
      cluster.intra_node.bandwidth_GBps <= 0.0) {
    // At the fabric chosen where one is (in the file or by --set), else at the section.
    const auto chosen = section ? section->optionalChild("fabric") : std::nullopt;
    (chosen    ? *chosen
     : section ? *section
               : root)
        .fail("the GPU " + cluster.gpu.key + " has no NVLink bandwidth in the catalog; set intra_node.bandwidth_GBps " +
              "or use intra_node.fabric: pcie");
  }
}

void parsePcie(const ConfigNode& root, ClusterSpec& cluster) {
  cluster.pcie.bandwidth_GBps = cluster.gpu.pcie_bandwidth_GBps;
  cluster.pcie.latency_us = defaults::kPcieLatencyUs;
  // Two GPUs (and their NICs) per PCIe switch, two sockets from four switches up, as in
  // DGX/HGX servers; fewer where the GPU count does not split that way.
  cluster.pcie.gpus_per_switch = cluster.gpus_per_node % 2 == 0 ? 2 : 1;
  const int default_switches = cluster.gpus_per_node / cluster.pcie.gpus_per_switch;
  cluster.pcie.sockets = default_switches >= 2 && default_switches % 2 == 0 ? 2 : 1;
  cluster.pcie.socket_interconnect_GBps = defaults::kSocketInterconnectGBps;
  auto section = root.optionalChild("pcie");
  if (!section) return;
  section->allowKeys(
      {"bandwidth_GBps", "latency_us", "gpus_per_switch", "sockets", "socket_interconnect_GBps", "host_cpu"});
  if (auto host_cpu = section->optionalChild("host_cpu")) {
    const std::string name = host_cpu->asEnum({"intel", "amd", "arm", "other"});
    for (HostCpu cpu : {HostCpu::kIntel, HostCpu::kAmd, HostCpu::kArm, HostCpu::kOther}) {
      if (hostCpuName(cpu) == name) cluster.pcie.host_cpu = cpu;
    }
  }
  cluster.pcie.bandwidth_GBps = section->numberIn("bandwidth_GBps", cluster.pcie.bandwidth_GBps,
                                                  limits::kMinBandwidthGBps, limits::kMaxBandwidthGBps);
  cluster.pcie.latency_us = section->numberIn("latency_us", cluster.pcie.latency_us, 0.0, limits::kMaxLatencyUs);
  if (auto per_switch = section->optionalChild("gpus_per_switch")) {
    cluster.pcie.gpus_per_switch = static_cast<int>(per_switch->asIntegerIn(1, cluster.gpus_per_node));
    if (cluster.gpus_per_node % cluster.pcie.gpus_per_switch != 0) {
      per_switch->fail("expected a divisor of gpus_per_node (" + std::to_string(cluster.gpus_per_node) + "), found \"" +
                       std::to_string(cluster.pcie.gpus_per_switch) + "\"");
    }
  }
  const int switches = cluster.gpus_per_node / cluster.pcie.gpus_per_switch;
  if (!section->has("sockets")) cluster.pcie.sockets = switches >= 2 && switches % 2 == 0 ? 2 : 1;
  if (auto sockets = section->optionalChild("sockets")) {
    cluster.pcie.sockets = static_cast<int>(sockets->asIntegerIn(1, switches));
    if (switches % cluster.pcie.sockets != 0) {
      sockets->fail("expected a divisor of the number of PCIe switches (" + std::to_string(switches) + "), found \"" +
                    std::to_string(cluster.pcie.sockets) + "\"");
    }
  }
  cluster.pcie.socket_interconnect_GBps =
      section->numberIn("socket_interconnect_GBps", cluster.pcie.socket_interconnect_GBps, limits::kMinBandwidthGBps,
                        limits::kMaxBandwidthGBps);
}

// The fat-tree tiers buildClosNetwork (clos_network.cpp) would build, counted the same way
// without building anything, so that a network it cannot build (more than 6 tiers) is
// reported here at the key to change. Must follow that function's port split and cabling.
int closTierCount(const ClusterSpec& cluster, const InterNodeSpec& net) {
  const int64_t gpus = cluster.gpus_per_node;
  const int64_t fold = net.nics_per_node > gpus ? net.nics_per_node / gpus : 1;
  const int64_t radix = std::max<int64_t>(2, net.switch_radix / fold);
  const int64_t nics = net.nics_per_node / fold;  // NICs built per node (node_builder.cpp)
  const int64_t nodes = cluster.nodes;
  if (nodes * nics <= radix) return 1;
  auto downPorts = [&](int tier) {
    const auto index = static_cast<std::size_t>(tier - 1);
    const double ratio =
        index < net.oversubscription.size() ? net.oversubscription[index] : net.oversubscription.back();
    const int64_t up = std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(radix) / (1.0 + ratio)));
    return std::min<int64_t>(radix - up, static_cast<int64_t>(static_cast<double>(up) * ratio + 0.5));
  };
  const int64_t leaf_down = downPorts(1);
  int64_t cabled = nodes * nics;
  if (net.topology == NetworkTopology::kRailOptimized) {
    // One leaf per rail per scalable unit of leaf_down nodes; a partial unit's leaves are padded.
    const int64_t partial = nodes % leaf_down;
    cabled =
        nodes / leaf_down * leaf_down * nics + (partial > 0 ? nics * partial + (nics - 1) * (leaf_down - partial) : 0);
  }
  int64_t blocks = (cabled + leaf_down - 1) / leaf_down;
  int tiers = 1;
  while (blocks > 1 && tiers <= kMaxClosTiers) {
    ++tiers;
    const int64_t group = blocks <= radix ? blocks : downPorts(tiers);
    blocks = (blocks + group - 1) / group;
  }
  return tiers;
}

void parseInterNode(const ConfigNode& root, ClusterSpec& cluster) {
  auto section = root.optionalChild("inter_node");
  if (!section) {
    if (cluster.nodes > 1) {
      root.failMissing("inter_node", "a cluster with nodes > 1 needs an inter_node section");
    }
    return;
  }
  section->allowKeys({"nics_per_node", "nic_bandwidth_Gbps", "protocol", "topology", "oversubscription", "switch_radix",
                      "latency_us", "efficiency", "torus_dims", "link_bandwidth_GBps", "nccl_protocols"});
  InterNodeSpec net;
  if (auto topology = section->optionalChild("topology")) net.topology = parseNetworkTopology(*topology);
  if (auto protocol = section->optionalChild("protocol")) net.protocol = parseProtocol(*protocol);
  net.latency_us =
      section->numberIn("latency_us", defaults::networkLatencyUs(net.protocol), 0.0, limits::kMaxLatencyUs);

  if (net.topology == NetworkTopology::kTorus) {
    const ConfigNode dims = section->child("torus_dims");
    const std::vector<ConfigNode> dim_nodes = dims.elements();
    if (dim_nodes.empty() || dim_nodes.size() > 3) dims.failExpected("a list of 1 to 3 dimensions");
    int64_t product = 1;
    for (const auto& dim : dim_nodes) {
      // Each dimension at most the GPU limit, so the product of three stays within int64.
      net.torus_dims.push_back(static_cast<int>(dim.asIntegerIn(1, limits::kMaxGpus)));
      product *= net.torus_dims.back();
    }
    if (product != cluster.totalGpus()) {
      dims.fail("the torus has " + std::to_string(product) + " chips but the cluster has nodes x gpus_per_node = " +
                std::to_string(cluster.totalGpus()) + "; make the product of torus_dims equal to that");
    }
    // Default per-link bandwidth: the chip's scale-up bandwidth spread over its 2 links per dimension.
    double default_link = cluster.gpu.intra_node_bandwidth_GBps / (2.0 * static_cast<double>(net.torus_dims.size()));
    if (auto link = section->optionalChild("link_bandwidth_GBps")) {
      net.link_bandwidth_GBps = link->asNumberIn(limits::kMinBandwidthGBps, limits::kMaxBandwidthGBps);
    } else if (default_link > 0.0) {
      net.link_bandwidth_GBps = default_link;
    } else {
      section->failMissing("link_bandwidth_GBps", "the GPU has no intra_node_bandwidth_GBps to derive it from");
    }
    for (const char* key :
         {"nics_per_node", "nic_bandwidth_Gbps", "oversubscription", "switch_radix", "efficiency", "nccl_protocols"}) {
      if (auto unused = section->optionalChild(key)) unused->fail("not used by a torus topology; remove it");
    }
    cluster.intra_node.fabric = IntraNodeFabric::kTorus;
    cluster.intra_node.bandwidth_GBps = net.link_bandwidth_GBps * 2.0 * static_cast<double>(net.torus_dims.size());
    cluster.intra_node.nvls = false;
    cluster.inter_node = net;
    return;
  }
  if (auto unused = section->optionalChild("torus_dims")) unused->fail("only used by topology: torus; remove it");
  if (auto unused = section->optionalChild("link_bandwidth_GBps")) {
    unused->fail("only used by topology: torus; remove it");
  }

  net.nics_per_node = static_cast<int>(section->integerIn("nics_per_node", cluster.gpus_per_node, 1, limits::kMaxGpus));
  if (auto nics = section->optionalChild("nics_per_node")) {
    if (static_cast<int64_t>(net.nics_per_node) * cluster.nodes > limits::kMaxGpus) {
      nics->fail("nodes x nics_per_node = " + std::to_string(cluster.nodes) + " x " +
                 std::to_string(net.nics_per_node) + " NICs; at most " + std::to_string(limits::kMaxGpus) +
                 " are supported");
    }
    if (cluster.gpus_per_node % net.nics_per_node != 0 && net.nics_per_node % cluster.gpus_per_node != 0) {
      nics->fail("expected a divisor or multiple of gpus_per_node (" + std::to_string(cluster.gpus_per_node) +
                 "), found \"" + std::to_string(net.nics_per_node) + "\"");
    }
  }
  net.nic_bandwidth_Gbps =
      section->child("nic_bandwidth_Gbps").asNumberIn(limits::kMinBandwidthGbps, limits::kMaxBandwidthGbps);
  if (auto efficiency = section->optionalChild("efficiency")) {
    const double fraction = efficiency->asPositiveNumber();
    if (fraction > 1.0) efficiency->failExpected("a fraction in (0, 1] of the NICs' rate");
    net.efficiency = fraction;
  }
  if (auto protocols = section->optionalChild("nccl_protocols")) {
    const std::vector<ConfigNode> items = protocols->elements();
    if (items.empty()) protocols->failExpected("a list of at least one of LL, LL128, Simple");
    for (const ConfigNode& item : items) {
      std::string name = item.asEnum({"LL", "LL128", "Simple"});
      if (std::find(net.nccl_protocols.begin(), net.nccl_protocols.end(), name) != net.nccl_protocols.end()) {
        item.fail("listed twice");
      }
      net.nccl_protocols.push_back(std::move(name));
    }
  }
  // At least 4 ports: 2 down and 2 up at 1:1.
  net.switch_radix =
      static_cast<int>(section->integerIn("switch_radix", defaults::kSwitchRadix, 4, limits::kMaxSwitchRadix));
  if (auto over = section->optionalChild("oversubscription")) {
    net.oversubscription.clear();
    if (over->isSequence()) {
      for (const auto& tier : over->elements()) {
        const double ratio = tier.asPositiveNumber();
        if (ratio < 1.0) tier.failExpected("a ratio >= 1 (down:up bandwidth of a tier)");
        (void)tier.asNumberIn(1.0, limits::kMaxOversubscription);
        net.oversubscription.push_back(ratio);
      }
      if (net.oversubscription.empty()) over->failExpected("at least one ratio");
    } else {
      const double ratio = over->asPositiveNumber();
      if (ratio < 1.0) over->failExpected("a ratio >= 1 (down:up bandwidth of a tier)");
      (void)over->asNumberIn(1.0, limits::kMaxOversubscription);
      net.oversubscription.push_back(ratio);
    }
    if (net.switch_radix / (1.0 + net.oversubscription.front()) < 1.0) {
      over->fail("too much oversubscription for switch_radix " + std::to_string(net.switch_radix) +
                 ": a leaf would have no uplink");
    }
  }
  if (net.topology == NetworkTopology::kRailOptimized && net.nics_per_node < 2) {
    section->child("topology").fail("rail_optimized needs nics_per_node >= 2 (one rail per NIC)");
  }
  if (closTierCount(cluster, net) > kMaxClosTiers) {
    const int64_t gpus = cluster.gpus_per_node;
    const int64_t nics = net.nics_per_node > gpus ? gpus : net.nics_per_node;
    const std::string message = "a fat tree of more than " + std::to_string(kMaxClosTiers) +
                                " tiers would be needed for " + std::to_string(nics * cluster.nodes) +
                                " NICs with switch_radix " + std::to_string(net.switch_radix) + "; raise switch_radix";
    if (auto radix = section->optionalChild("switch_radix")) radix->fail(message);
    throwInputError(section->where(), section->path() + ".switch_radix", message);
  }
  cluster.inter_node = net;
}

DeviceKind parseDeviceKind(const ConfigNode& node) {
  const std::string text = node.asEnum(
      {"gpu", "tpu_chip", "nvswitch", "pcie_switch", "cpu", "nic", "leaf_switch", "spine_switch", "core_switch"});
  static const std::map<std::string, DeviceKind> kinds = {{"gpu", DeviceKind::kGpu},
                                                          {"tpu_chip", DeviceKind::kTpuChip},
                                                          {"nvswitch", DeviceKind::kNvSwitch},
                                                          {"pcie_switch", DeviceKind::kPcieSwitch},
                                                          {"cpu", DeviceKind::kCpu},
                                                          {"nic", DeviceKind::kNic},
                                                          {"leaf_switch", DeviceKind::kLeafSwitch},
                                                          {"spine_switch", DeviceKind::kSpineSwitch},
                                                          {"core_switch", DeviceKind::kCoreSwitch}};
  return kinds.at(text);
}

LinkType parseLinkType(const ConfigNode& node) {
  const std::string text =
      node.asEnum({"nvlink", "pcie", "infiniband", "roce", "ethernet", "ici", "socket_interconnect"});
  static const std::map<std::string, LinkType> types = {{"nvlink", LinkType::kNvLink},
                                                        {"pcie", LinkType::kPcie},
                                                        {"infiniband", LinkType::kInfiniBand},
                                                        {"roce", LinkType::kRoce},
                                                        {"ethernet", LinkType::kEthernet},
                                                        {"ici", LinkType::kIci},
                                                        {"socket_interconnect", LinkType::kSocketInterconnect}};
  return types.at(text);
}

// Devices of an explicit graph: the GPU limit with room for as many NICs and switches again, twice.
constexpr int64_t kMaxGraphDevices = 4 * limits::kMaxGpus;

void parseExplicitGraph(const ConfigNode& root, ClusterSpec& cluster) {
  ExplicitGraph graph;
  std::set<std::string> names;
  std::map<int, int> gpus_in_node;
  for (const auto& entry : root.child("devices").elements()) {
    entry.allowKeys({"name", "kind", "node", "count"});
    const std::string base_name = entry.child("name").asString();
    const DeviceKind kind = parseDeviceKind(entry.child("kind"));
    int node = 0;
    if (auto value = entry.optionalChild("node")) node = static_cast<int>(value->asIntegerIn(0, limits::kMaxGpus - 1));
    const int64_t count = entry.integerIn("count", 1, 1, limits::kMaxGpus);
    if (static_cast<int64_t>(graph.devices.size()) + count > kMaxGraphDevices) {
      (entry.has("count") ? entry.child("count") : entry)
          .fail("the graph would hold more than " + std::to_string(kMaxGraphDevices) + " devices");
    }
    for (int64_t i = 0; i < count; ++i) {
      // `count: 4` with name gpu expands into gpu0..gpu3.
      const std::string name = entry.has("count") ? base_name + std::to_string(i) : base_name;
      if (!names.insert(name).second) entry.child("name").fail("duplicate device name \"" + name + "\"");
      graph.devices.push_back(ExplicitDevice{name, kind, node});
      if (isAccelerator(kind)) ++gpus_in_node[node];
    }
  }
  if (gpus_in_node.empty()) root.child("devices").fail("expected at least one device of kind gpu or tpu_chip");
  for (const auto& entry : root.child("links").elements()) {
    entry.allowKeys({"from", "to", "type", "bandwidth_GBps", "bandwidth_Gbps", "latency_us"});
    ExplicitLink link;
    for (const char* end : {"from", "to"}) {
      const ConfigNode name = entry.child(end);
      const std::string text = name.asString();
      if (!names.contains(text)) name.fail("unknown device \"" + text + "\"; declare it under devices");
      (std::string(end) == "from" ? link.from : link.to) = text;
    }
    if (link.from == link.to) entry.child("to").fail("a link must join two different devices");
    link.type = parseLinkType(entry.child("type"));
    if (auto gbps = entry.optionalChild("bandwidth_Gbps")) {
      if (entry.has("bandwidth_GBps")) gbps->fail("give bandwidth_GBps or bandwidth_Gbps, not both");
      link.bandwidth_GBps = gbps->asNumberIn(limits::kMinBandwidthGbps, limits::kMaxBandwidthGbps) / 8.0;
    } else {
      link.bandwidth_GBps =
          entry.child("bandwidth_GBps").asNumberIn(limits::kMinBandwidthGBps, limits::kMaxBandwidthGBps);
    }
    link.latency_us =
        entry.numberIn("latency_us", defaults::explicitLinkLatencyUs(link.type), 0.0, limits::kMaxLatencyUs);
    graph.links.push_back(link);
  }
  cluster.nodes = gpus_in_node.rbegin()->first + 1;
  cluster.gpus_per_node = 0;
  for (const auto& [node, count] : gpus_in_node) cluster.gpus_per_node = std::max(cluster.gpus_per_node, count);
  if (cluster.totalGpus() > limits::kMaxGpus) {
    root.child("devices").fail("nodes 0 to " + std::to_string(cluster.nodes - 1) + " with up to " +
                               std::to_string(cluster.gpus_per_node) + " GPUs each make " +
                               std::to_string(cluster.totalGpus()) + " GPU places; at most " +
                               std::to_string(limits::kMaxGpus) + " are supported");
  }
  cluster.explicit_graph = std::move(graph);
}

ClusterSpec parseCluster(const ConfigNode& root, const ConfigPaths& paths) {
  root.requireMap();
  ClusterSpec cluster;
  cluster.source_file = root.source()->file;
  const bool explicit_form = root.has("devices") || root.has("links");
  if (explicit_form) {
    root.allowKeys({"name", "description", "source", "gpu", "gpu_power_limit_W", "price_per_gpu_hour", "reliability",
                    "devices", "links"});
  } else {
    root.allowKeys({"name", "description", "source", "gpu", "gpu_power_limit_W", "nodes", "gpus_per_node",
                    "price_per_gpu_hour", "reliability", "intra_node", "pcie", "inter_node"});
  }
  cluster.name = root.string("name", std::filesystem::path(cluster.source_file).stem().string());
  cluster.gpu = resolveGpu(root.child("gpu"), paths);
  if (auto limit = root.optionalChild("gpu_power_limit_W")) {
    cluster.gpu.power_limit_W = limit->asNumberIn(limits::kMinPowerW, limits::kMaxTdpW);
    if (cluster.gpu.tdp_W <= 0.0) {
      limit->fail("gpu_power_limit_W needs the GPU's tdp_W (the power its rates hold at); " + cluster.gpu.key +
                  " has none");
    }
  }
  if (auto price = root.optionalChild("price_per_gpu_hour")) {
    cluster.price_per_gpu_hour = price->asNumberIn(0.0, limits::kMaxPricePerGpuHour);
  }
  if (auto reliability = root.optionalChild("reliability")) {
    (void)readReliabilitySection(*reliability, ReliabilitySpec{});  // its errors now, not after a simulation
    cluster.reliability = std::make_shared<const ConfigNode>(*reliability);
  }
  if (explicit_form) {
    parseExplicitGraph(root, cluster);
    return cluster;
  }
  cluster.nodes = static_cast<int>(root.child("nodes").asIntegerIn(1, limits::kMaxGpus));
  cluster.gpus_per_node = static_cast<int>(root.child("gpus_per_node").asIntegerIn(1, limits::kMaxGpus));
  if (cluster.totalGpus() > limits::kMaxGpus) {
    root.child("nodes").fail("nodes x gpus_per_node = " + std::to_string(cluster.nodes) + " x " +
                             std::to_string(cluster.gpus_per_node) + " = " + std::to_string(cluster.totalGpus()) +
                             " GPUs; at most " + std::to_string(limits::kMaxGpus) + " are supported");
  }
  parsePcie(root, cluster);
  parseIntraNode(root, cluster);
  parseInterNode(root, cluster);
  if (cluster.intra_node.fabric == IntraNodeFabric::kTorus &&
      (!cluster.inter_node || cluster.inter_node->topology != NetworkTopology::kTorus)) {
    root.child("intra_node").child("fabric").fail("fabric torus needs inter_node.topology: torus with torus_dims");
  }
  return cluster;
}

ConfigNode openReference(const ConfigNode& reference, const ConfigPaths& paths) {
  const std::string text = reference.asString();
  const std::string path = looksLikePath(text) ? referencedFilePath(reference) : presetPath(paths, "clusters", text);
  // The non-throwing overload: a name the file system refuses (too long, say) is no file.
  std::error_code ignored;
  const bool file = std::filesystem::is_regular_file(path, ignored);
  if (!looksLikePath(text) && !file) {
    reference.fail("unknown cluster preset \"" + text + "\" (no " + path + "); give a preset name or a file path");
  }
  if (!file) reference.fail("cannot open cluster file \"" + text + "\"");
  return loadConfigFile(path);
}

}  // namespace

Expected<GpuCatalog> loadGpuCatalog(const ConfigPaths& paths) {
  // The catalog is read once per process per directory: a sweep loads many clusters.
  static std::mutex mutex;
  static std::map<std::string, Expected<GpuCatalog>> cache;
  std::lock_guard lock(mutex);
  auto found = cache.find(paths.config_dir);
  if (found == cache.end()) {
    const std::string file = (std::filesystem::path(paths.config_dir) / "gpus.yaml").string();
    found = cache.emplace(paths.config_dir, GpuCatalog::load(file)).first;
  }
  return found->second;
}

Expected<ClusterSpec> loadClusterNode(const ConfigNode& node, const ConfigPaths& paths,
                                      const std::vector<Override>& overrides) {
  return catchInputErrors([&]() -> ClusterSpec {
    if (node.isMap()) return parseCluster(node, paths);
    ConfigNode root = openReference(node, paths);
    for (const auto& override_value : overrides) applyOverride(root, override_value);
    return parseCluster(root, paths);
  });
}

Expected<ClusterSpec> loadClusterFile(const std::string& reference, const ConfigPaths& paths,
                                      const std::vector<Override>& overrides) {
  return catchInputErrors([&]() -> ClusterSpec {
    ConfigNode root = [&] {
      if (looksLikePath(reference)) return loadConfigFile(reference);
      const std::string path = presetPath(paths, "clusters", reference);
      std::error_code ignored;
      if (!std::filesystem::is_regular_file(path, ignored)) {
        throwInputError(reference, "", "unknown cluster preset (no " + path + "); give a preset name or a file path");
      }
      return loadConfigFile(path);
    }();
    for (const auto& override_value : overrides) applyOverride(root, override_value);
    return parseCluster(root, paths);
  });
}

}  // namespace trainsim::topology

namespace trainsim::topology {

std::string_view hostCpuName(HostCpu cpu) {
  switch (cpu) {
    case HostCpu::kUnknown: return "unknown";
    case HostCpu::kIntel: return "intel";
    case HostCpu::kAmd: return "amd";
    case HostCpu::kArm: return "arm";
    case HostCpu::kOther: return "other";
  }
  return "unknown";
}

std::string_view networkTopologyName(NetworkTopology topology) {
  switch (topology) {
    case NetworkTopology::kFatTree: return "fat_tree";
    case NetworkTopology::kRailOptimized: return "rail_optimized";
    case NetworkTopology::kTorus: return "torus";
  }
  return "unknown";
}

std::string_view networkProtocolName(NetworkProtocol protocol) {
  switch (protocol) {
    case NetworkProtocol::kInfiniBand: return "infiniband";
    case NetworkProtocol::kRoce: return "roce";
    case NetworkProtocol::kEthernet: return "ethernet";
    case NetworkProtocol::kEfa: return "efa";
  }
  return "unknown";
}

}  // namespace trainsim::topology
