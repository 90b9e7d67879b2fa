// Default per-hop latencies and PCIe figures used when a cluster file does not give them.
// These are wire + switch latencies of the hardware, not NCCL's software overheads
// (those belong to the collective protocol model in sim/). All are overridable in the
// cluster file and by calibration.
#pragma once

#include <cstdint>

#include "topology/cluster_spec.h"
#include "topology/gpu_spec.h"
#include "topology/link.h"

namespace trainsim::topology::defaults {

// GPU-to-GPU one-way latency across the intra-node fabric, microseconds.
// NVLink/NVSwitch: ~0.7 us GPU to GPU (SPEC.md example; NVIDIA quotes sub-microsecond
// NVSwitch port-to-port latency). PCIe peer-to-peer through a switch: ~1 us.
[[nodiscard]] inline double intraNodeLatencyUs(IntraNodeFabric fabric) {
  switch (fabric) {
    case IntraNodeFabric::kNvSwitch: return 0.7;
    case IntraNodeFabric::kNvLinkMesh: return 0.7;
    case IntraNodeFabric::kPcie: return 1.0;
    case IntraNodeFabric::kTorus: return 1.0;
  }
  return 1.0;
}

// NIC-to-NIC one-way latency through one switch, microseconds. InfiniBand: ~1 us HCA
// (ConnectX) + ~0.13 us Quantum switch port-to-port, rounded up to 2 us (SPEC.md example).
// RoCE: Ethernet switches add ~0.5-1 us: 3 us. AWS EFA (SRD): ~10 us. Kernel TCP: ~15 us.
[[nodiscard]] inline double networkLatencyUs(NetworkProtocol protocol) {
  switch (protocol) {
    case NetworkProtocol::kInfiniBand: return 2.0;
    case NetworkProtocol::kRoce: return 3.0;
    case NetworkProtocol::kEfa: return 10.0;
    case NetworkProtocol::kEthernet: return 15.0;
  }
  return 2.0;
}

// One-way latency GPU -> PCIe switch -> NIC (or CPU), microseconds.
inline constexpr double kPcieLatencyUs = 1.0;
// CPU socket interconnect (Intel UPI: 3 links x 20.8 GB/s ~ 62 GB/s per direction;
// AMD xGMI similar): 64 GB/s per direction, 0.1 us.
inline constexpr double kSocketInterconnectGBps = 64.0;
inline constexpr double kSocketInterconnectLatencyUs = 0.1;
// Ports per network switch (NVIDIA Quantum-2 NDR: 64 ports of 400 Gb/s).
inline constexpr int kSwitchRadix = 64;

// Picoseconds from microseconds, rounded to the nearest: the builders' conversion.
[[nodiscard]] inline int64_t picoseconds(double us) { return static_cast<int64_t>(us * 1e6 + 0.5); }

// One link of an explicit graph that gives no latency_us, microseconds: half of the
// GPU-to-GPU (NIC-to-NIC) path through one switch, as the homogeneous form splits it. ICI
// and socket links join their endpoints directly.
[[nodiscard]] inline double explicitLinkLatencyUs(LinkType type) {
  switch (type) {
    case LinkType::kNvLink: return intraNodeLatencyUs(IntraNodeFabric::kNvSwitch) / 2.0;
    case LinkType::kPcie: return kPcieLatencyUs / 2.0;
    case LinkType::kInfiniBand: return networkLatencyUs(NetworkProtocol::kInfiniBand) / 2.0;
    case LinkType::kRoce: return networkLatencyUs(NetworkProtocol::kRoce) / 2.0;
    case LinkType::kEthernet: return networkLatencyUs(NetworkProtocol::kEthernet) / 2.0;
    case LinkType::kIci: return intraNodeLatencyUs(IntraNodeFabric::kTorus);
    case LinkType::kSocketInterconnect: return kSocketInterconnectLatencyUs;
  }
  return 1.0;
}

// The latency, in picoseconds, that the builders give `link` of a cluster built from `spec`
// when the file sets no latency: what the hardware has by default. The collective model
// (perf/collective_builder.cpp) charges a step the difference between a route's latency and
// this, since NCCL's per-step latencies were measured on hardware with the defaults.
[[nodiscard]] inline int64_t linkLatencyPs(const ClusterSpec& spec, const Link& link) {
  if (link.trunk) return 0;  // a trunk stands for switch-to-switch links counted elsewhere
  if (spec.explicit_graph) return picoseconds(explicitLinkLatencyUs(link.type));
  switch (link.type) {
    case LinkType::kNvLink:
    case LinkType::kIci: {
      // The loader's default comes from the fabric it saw before a torus took over: the GPU's.
      const IntraNodeFabric fabric =
          spec.intra_node.fabric == IntraNodeFabric::kTorus ? spec.gpu.default_fabric : spec.intra_node.fabric;
      const int64_t gpu_to_gpu = picoseconds(intraNodeLatencyUs(fabric));
      // Through an NVSwitch a GPU-to-GPU path is two links of half the latency each.
      return link.type == LinkType::kNvLink && spec.intra_node.fabric == IntraNodeFabric::kNvSwitch ? gpu_to_gpu / 2
                                                                                                    : gpu_to_gpu;
    }
    case LinkType::kPcie: return picoseconds(kPcieLatencyUs) / 2;
    case LinkType::kSocketInterconnect: return picoseconds(kSocketInterconnectLatencyUs);
    case LinkType::kInfiniBand:
    case LinkType::kRoce:
    case LinkType::kEthernet:
      return picoseconds(networkLatencyUs(spec.inter_node ? spec.inter_node->protocol : NetworkProtocol::kInfiniBand)) /
             2;
  }
  return 0;
}

// The latency, in picoseconds, that NCCL's per-step latencies (perf/communication_parameters.h)
// were measured with for `link`: its default (linkLatencyPs), except that a network cable
// counts as InfiniBand's, whatever the cluster's protocol, since NCCL's network steps were
// measured over InfiniBand. A route slower than its reference (a longer NIC-to-NIC latency,
// RoCE, EFA, TCP) costs each network step of a collective the difference.
[[nodiscard]] inline int64_t referenceLinkLatencyPs(const ClusterSpec& spec, const Link& link) {
  if (link.trunk) return 0;
  switch (link.type) {
    case LinkType::kInfiniBand:
    case LinkType::kRoce:
    case LinkType::kEthernet: return picoseconds(networkLatencyUs(NetworkProtocol::kInfiniBand)) / 2;
    default: return linkLatencyPs(spec, link);
  }
}

}  // namespace trainsim::topology::defaults
