// Directed links of the cluster graph. A physical cable or NVLink bundle becomes two
// Links, one per direction, each with its own bandwidth (SPEC: bandwidths are per direction).
#pragma once

#include <cstdint>
#include <string_view>

#include "topology/device.h"

namespace trainsim::topology {

using LinkId = uint32_t;

enum class LinkType : uint8_t {
  kNvLink,              // NVLink to an NVSwitch, or a direct GPU-GPU NVLink / xGMI / ICI-like mesh link
  kPcie,                // PCIe lanes
  kInfiniBand,          // IB cable (NIC-switch or switch-switch)
  kRoce,                // RoCE Ethernet cable
  kEthernet,            // plain TCP Ethernet
  kIci,                 // TPU inter-chip interconnect (torus links)
  kSocketInterconnect,  // CPU-CPU (UPI / Infinity Fabric)
};

[[nodiscard]] std::string_view linkTypeName(LinkType type);

struct Link {
  DeviceId from = 0;
  DeviceId to = 0;
  LinkType type = LinkType::kNvLink;
  double bandwidth_Bps = 0.0;  // bytes per second in this direction
  int64_t latency_ps = 0;      // propagation + switching latency of this hop, picoseconds
  LinkId reverse = 0;          // the link in the opposite direction
  // A trunk: the uplinks of one fat-tree block taken together, as adaptive routing uses them
  // (ClosFabric, router.cpp). Only routes use it; it is no cable and not in the graph.
  bool trunk = false;
};

}  // namespace trainsim::topology
