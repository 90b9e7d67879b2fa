#include "perf/communication_parameters.h"

#include "topology/cluster_spec.h"

namespace trainsim::perf {

std::string_view protocolName(Protocol protocol) {
  switch (protocol) {
    case Protocol::kLL: return "LL";
    case Protocol::kLL128: return "LL128";
    case Protocol::kSimple: return "Simple";
  }
  return "unknown";
}

std::string_view algorithmName(CollectiveAlgorithm algorithm) {
  switch (algorithm) {
    case CollectiveAlgorithm::kRing: return "ring";
    case CollectiveAlgorithm::kTree: return "tree";
    case CollectiveAlgorithm::kNvls: return "nvls";
    case CollectiveAlgorithm::kDirect: return "direct";
    case CollectiveAlgorithm::kNvlsTree: return "nvls_tree";
    case CollectiveAlgorithm::kPat: return "pat";
  }
  return "unknown";
}

std::string treeSizeClassName(std::size_t size_class) {
  const std::size_t shift = size_class + 6;  // 64 B = 2^6
  if (shift < 10) return std::to_string(std::size_t{1} << shift) + "B";
  if (shift < 20) return std::to_string(std::size_t{1} << (shift - 10)) + "KiB";
  return std::to_string(std::size_t{1} << (shift - 20)) + "MiB";
}

std::optional<CollectiveAlgorithm> parseAlgorithmName(std::string_view name) {
  for (CollectiveAlgorithm algorithm : kAllAlgorithms) {
    if (algorithmName(algorithm) == name) return algorithm;
  }
  return std::nullopt;
}

std::string_view ncclGpuClassName(NcclGpuClass gpu_class) {
  switch (gpu_class) {
    case NcclGpuClass::kVolta: return "volta";
    case NcclGpuClass::kAmpere: return "ampere";
    case NcclGpuClass::kHopper: return "hopper";
    case NcclGpuClass::kBlackwell: return "blackwell";
  }
  return "unknown";
}

NcclGpuClass ncclGpuClass(std::optional<double> compute_capability) {
  // NVIDIA/nccl src/graph/tuning.cc (5067397c), ncclTopoTuneModel: "compCapIndex = minCompCap
  // >= 100 ? BLACKWELL : (minCompCap >= 90 ? HOPPER : minCompCap >= 80 ? AMPERE : VOLTA)".
  if (!compute_capability) return NcclGpuClass::kHopper;
  if (*compute_capability >= 10.0) return NcclGpuClass::kBlackwell;
  if (*compute_capability >= 9.0) return NcclGpuClass::kHopper;
  if (*compute_capability >= 8.0) return NcclGpuClass::kAmpere;
  return NcclGpuClass::kVolta;
}

double CommunicationParameters::treeMaxBusPerChannel(NcclGpuClass gpu_class, int nodes) const {
  return tree_max_bus_GBps_per_channel[static_cast<std::size_t>(gpu_class)][nodes <= 2 ? 0 : 1] * 1e9;
}

double CommunicationParameters::nvlsEfficiency(std::string_view gpu_key) const {
  for (const MeasuredFraction& row : nvls_efficiency_per_gpu) {
    if (row.gpu_key == gpu_key) return row.fraction;
  }
  return nvls_efficiency;
}

double CommunicationParameters::linkEfficiency(topology::LinkType type, std::string_view gpu_key) const {
  using topology::LinkType;
  switch (type) {
    case LinkType::kNvLink:
      for (const MeasuredFraction& row : nvlink_efficiency) {
        if (row.gpu_key == gpu_key) return row.fraction;
      }
      return nvlink_efficiency_default;
    case LinkType::kInfiniBand: return infiniband_efficiency;
    case LinkType::kRoce:
    case LinkType::kEthernet: return ethernet_efficiency;
    case LinkType::kPcie: return pcie_efficiency;
    case LinkType::kIci:
    case LinkType::kSocketInterconnect: return other_efficiency;
  }
  return other_efficiency;
}

double CommunicationParameters::linkEfficiency(topology::LinkType type, const topology::ClusterSpec& cluster) const {
  using topology::LinkType;
  const bool network = type == LinkType::kInfiniBand || type == LinkType::kRoce || type == LinkType::kEthernet;
  if (network && cluster.inter_node && cluster.inter_node->efficiency) return *cluster.inter_node->efficiency;
  return linkEfficiency(type, cluster.gpu.key);
}

}  // namespace trainsim::perf
