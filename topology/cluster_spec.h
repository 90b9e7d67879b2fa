// A cluster as the user described it: the homogeneous form of SPEC.md ("Cluster file")
// or the explicit devices/links form. ClusterBuilder turns it into the device graph.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/config_node.h"
#include "topology/device.h"
#include "topology/gpu_spec.h"
#include "topology/link.h"

namespace trainsim::topology {

enum class NetworkTopology : uint8_t { kFatTree, kRailOptimized, kTorus };
enum class NetworkProtocol : uint8_t { kInfiniBand, kRoce, kEthernet, kEfa };
[[nodiscard]] std::string_view networkTopologyName(NetworkTopology topology);
[[nodiscard]] std::string_view networkProtocolName(NetworkProtocol protocol);

struct IntraNodeSpec {
  IntraNodeFabric fabric = IntraNodeFabric::kNvSwitch;
  double bandwidth_GBps = 0.0;  // per GPU, per direction
  double latency_us = 0.0;      // GPU to GPU
  bool nvls = false;            // NVLink SHARP in-switch reductions available
};

// The host CPUs' vendor (pcie.host_cpu), which NCCL's tuner reads (its cpuVendor): unknown
// where the cluster file does not say.
enum class HostCpu : uint8_t { kUnknown, kIntel, kAmd, kArm, kOther };
[[nodiscard]] std::string_view hostCpuName(HostCpu cpu);

struct PcieSpec {
  double bandwidth_GBps = 0.0;  // per direction, each GPU/NIC <-> PCIe switch link
  double latency_us = 0.0;      // GPU to NIC through the switch
  int gpus_per_switch = 2;
  int sockets = 2;
  double socket_interconnect_GBps = 0.0;
  HostCpu host_cpu = HostCpu::kUnknown;
};

struct InterNodeSpec {
  int nics_per_node = 0;
  double nic_bandwidth_Gbps = 0.0;
  NetworkProtocol protocol = NetworkProtocol::kInfiniBand;
  NetworkTopology topology = NetworkTopology::kFatTree;
  std::vector<double> oversubscription = {1.0};  // per tier, leaf first; last value repeats upward
  int switch_radix = 64;
  double latency_us = 0.0;  // NIC to NIC through one switch
  // The fraction of the NICs' rate that this system's collectives reach, measured on it
  // (a cited nccl-tests log); unset: the protocol's default of the communication model
  // (perf::CommunicationParameters::linkEfficiency).
  std::optional<double> efficiency;
  // The NCCL protocols this system's collectives may use ("LL", "LL128", "Simple"), as its
  // network plugin restricts them with NCCL_PROTO (aws-ofi-nccl sets Simple alone where EFA
  // does not deliver 128-byte writes in order); empty: all three.
  std::vector<std::string> nccl_protocols;
  std::vector<int> torus_dims;
  double link_bandwidth_GBps = 0.0;  // torus links, per direction
};

// Explicit graph form: every device and link spelled out.
struct ExplicitDevice {
  std::string name;
  DeviceKind kind = DeviceKind::kGpu;
  int node = 0;
};
struct ExplicitLink {
  std::string from;
  std::string to;
  LinkType type = LinkType::kPcie;
  double bandwidth_GBps = 0.0;  // per direction
  double latency_us = 0.0;
};
struct ExplicitGraph {
  std::vector<ExplicitDevice> devices;
  std::vector<ExplicitLink> links;
};

struct ClusterSpec {
  std::string name;
  std::string source_file;  // where it was loaded from ("" when built in code)
  GpuSpec gpu;
  int nodes = 1;
  int gpus_per_node = 8;
  std::optional<double> price_per_gpu_hour;
  IntraNodeSpec intra_node;
  PcieSpec pcie;
  std::optional<InterNodeSpec> inter_node;  // absent for single-node clusters
  std::optional<ExplicitGraph> explicit_graph;
  // The file's `reliability:` section (checked by the loader), which clusterReliability
  // (reliability_spec.h) reads over the shipped defaults. Shared, not copied: a ConfigNode
  // wraps a YAML::Node, whose assignment writes through to the document.
  std::shared_ptr<const ConfigNode> reliability;

  [[nodiscard]] int64_t totalGpus() const { return static_cast<int64_t>(nodes) * gpus_per_node; }
};

}  // namespace trainsim::topology
