// Default per-hop latencies and PCIe figures used when a cluster file does not give them.
// These are wire + switch latencies of the hardware, not NCCL's software overheads
// (those belong to the collective protocol model in sim/). All are overridable in the
// cluster file and by calibration.
#pragma once

#include "topology/cluster_spec.h"
#include "topology/gpu_spec.h"

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

}  // namespace trainsim::topology::defaults
