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
