#include "topology/device.h"

namespace trainsim::topology {

std::string_view deviceKindName(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::kGpu: return "gpu";
    case DeviceKind::kTpuChip: return "tpu_chip";
    case DeviceKind::kNvSwitch: return "nvswitch";
    case DeviceKind::kPcieSwitch: return "pcie_switch";
    case DeviceKind::kCpu: return "cpu";
    case DeviceKind::kNic: return "nic";
    case DeviceKind::kLeafSwitch: return "leaf_switch";
    case DeviceKind::kSpineSwitch: return "spine_switch";
    case DeviceKind::kCoreSwitch: return "core_switch";
  }
  return "unknown";
}

bool isAccelerator(DeviceKind kind) { return kind == DeviceKind::kGpu || kind == DeviceKind::kTpuChip; }

}  // namespace trainsim::topology
