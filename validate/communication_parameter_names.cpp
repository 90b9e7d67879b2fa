#include "validate/communication_parameter_names.h"

#include <array>

namespace trainsim::validate {
namespace {

using P = sim::CommunicationParameters;
constexpr std::array<CommunicationParameterName, 15> kNames = {{
    {"nvlink_efficiency_default", &P::nvlink_efficiency_default, ParameterRange::kEfficiency},
    {"nvlink_efficiency_a100", &P::nvlink_efficiency_a100, ParameterRange::kEfficiency},
    {"nvlink_efficiency_b200", &P::nvlink_efficiency_b200, ParameterRange::kEfficiency},
    {"infiniband_efficiency", &P::infiniband_efficiency, ParameterRange::kEfficiency},
    {"ethernet_efficiency", &P::ethernet_efficiency, ParameterRange::kEfficiency},
    {"pcie_efficiency", &P::pcie_efficiency, ParameterRange::kEfficiency},
    {"other_efficiency", &P::other_efficiency, ParameterRange::kEfficiency},
    {"nvls_efficiency", &P::nvls_efficiency, ParameterRange::kEfficiency},
    {"nvls_step_latency_us", &P::nvls_step_latency_us, ParameterRange::kNonNegative},
    {"pipeline_channels", &P::pipeline_channels, ParameterRange::kPositive},
    {"channel_bandwidth_GBps", &P::channel_bandwidth_GBps, ParameterRange::kPositive},
    {"tree_bandwidth_factor", &P::tree_bandwidth_factor, ParameterRange::kEfficiency},
    {"tree_max_bus_GBps_two_nodes", &P::tree_max_bus_GBps_two_nodes, ParameterRange::kPositive},
    {"tree_max_bus_GBps_more_nodes", &P::tree_max_bus_GBps_more_nodes, ParameterRange::kPositive},
    {"launch_overhead_us", &P::launch_overhead_us, ParameterRange::kNonNegative},
}};

}  // namespace

std::span<const CommunicationParameterName> communicationParameterNames() { return kNames; }

const CommunicationParameterName* findCommunicationParameter(std::string_view name) {
  for (const auto& entry : kNames) {
    if (entry.name == name) return &entry;
  }
  return nullptr;
}

bool inRange(ParameterRange range, double value) {
  switch (range) {
    case ParameterRange::kEfficiency: return value > 0.0 && value <= 1.0;
    case ParameterRange::kNonNegative: return value >= 0.0;
    case ParameterRange::kPositive: return value > 0.0;
  }
  return false;
}

std::string_view rangeDescription(ParameterRange range) {
  switch (range) {
    case ParameterRange::kEfficiency: return "a fraction in (0, 1]";
    case ParameterRange::kNonNegative: return "a number >= 0";
    case ParameterRange::kPositive: return "a positive number";
  }
  return "";
}

std::string_view linkEfficiencyParameter(topology::LinkType type, std::string_view gpu_key) {
  using topology::LinkType;
  switch (type) {
    case LinkType::kNvLink:
      if (gpu_key.starts_with("a100")) return "nvlink_efficiency_a100";
      if (gpu_key.starts_with("b200") || gpu_key.starts_with("gb200")) return "nvlink_efficiency_b200";
      return "nvlink_efficiency_default";
    case LinkType::kInfiniBand: return "infiniband_efficiency";
    case LinkType::kRoce:
    case LinkType::kEthernet: return "ethernet_efficiency";
    case LinkType::kPcie: return "pcie_efficiency";
    case LinkType::kIci:
    case LinkType::kSocketInterconnect: return "other_efficiency";
  }
  return "other_efficiency";
}

}  // namespace trainsim::validate
