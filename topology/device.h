// Devices of the cluster graph: accelerators, switches, NICs, CPU root complexes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace trainsim::topology {

using DeviceId = uint32_t;

enum class DeviceKind : uint8_t {
  kGpu,          // an accelerator (GPU, MI300X, Gaudi)
  kTpuChip,      // a TPU chip in a torus pod (an accelerator too)
  kNvSwitch,     // NVSwitch (or any intra-node GPU switch chip)
  kPcieSwitch,   // PCIe switch between GPUs, NICs and the CPU
  kCpu,          // CPU root complex (one per socket)
  kNic,          // network adapter (InfiniBand HCA, RoCE/Ethernet NIC)
  kLeafSwitch,   // first network tier (ToR / rail switch)
  kSpineSwitch,  // second tier
  kCoreSwitch,   // third tier and above
};

[[nodiscard]] std::string_view deviceKindName(DeviceKind kind);
[[nodiscard]] bool isAccelerator(DeviceKind kind);

struct Device {
  DeviceKind kind = DeviceKind::kGpu;
  int32_t node = -1;  // the server it sits in; -1 for network switches
  int32_t index = 0;  // index among devices of the same kind in its node (or tier)
  int32_t rank = -1;  // accelerators: global rank in placement order; -1 otherwise
  std::string name;   // "node3/gpu5", "leaf12", ...
};

}  // namespace trainsim::topology
