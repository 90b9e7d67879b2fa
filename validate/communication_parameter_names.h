// The scalar fields of sim::CommunicationParameters that a calibration may set, by the
// field's own name (the keys of calib.yaml's `communication:` mapping), with the range a
// value must lie in. Efficiencies are fractions of a link's raw bandwidth, in (0, 1];
// latencies are >= 0 microseconds; bandwidths, channel counts and caps are > 0.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "sim/communication_parameters.h"
#include "topology/cluster.h"

namespace trainsim::validate {

enum class ParameterRange : uint8_t {
  kEfficiency,   // (0, 1]
  kNonNegative,  // >= 0
  kPositive,     // > 0
};

struct CommunicationParameterName {
  std::string_view name;
  double sim::CommunicationParameters::*field;
  ParameterRange range;
};

[[nodiscard]] std::span<const CommunicationParameterName> communicationParameterNames();
[[nodiscard]] const CommunicationParameterName* findCommunicationParameter(std::string_view name);
[[nodiscard]] bool inRange(ParameterRange range, double value);
[[nodiscard]] std::string_view rangeDescription(ParameterRange range);

// The field that holds the efficiency of `type` links for the cluster's GPU (the one
// sim::CommunicationParameters::linkEfficiency reads), e.g. "nvlink_efficiency_a100".
[[nodiscard]] std::string_view linkEfficiencyParameter(topology::LinkType type, std::string_view gpu_key);

}  // namespace trainsim::validate
