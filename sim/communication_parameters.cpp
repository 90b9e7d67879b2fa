#include "sim/communication_parameters.h"

namespace trainsim::sim {

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
  }
  return "unknown";
}

std::optional<CollectiveAlgorithm> parseAlgorithmName(std::string_view name) {
  for (CollectiveAlgorithm algorithm : kAllAlgorithms) {
    if (algorithmName(algorithm) == name) return algorithm;
  }
  return std::nullopt;
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

}  // namespace trainsim::sim
