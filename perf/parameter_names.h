// The scalar parameters of perf::CommunicationParameters and perf::ComputeParameters by name:
// the keys of the `communication:` and `compute:` sections of the shipped defaults
// (configs/defaults/*.yaml) and of a calibration file (calib.yaml, docs/calibration.md), with
// the range a value must lie in. An entry of a fixed table is named by its path
// ("base_latency_us.ring.LL", "attention_default_measured_at.queries"); a per-GPU value
// ("nvlink_efficiency") is one value per GPU catalog key. Per-GPU tables of rows with more
// than one value (compute's matmul_ceilings, attention_rates, ...) are read by
// perf/parameter_sections.h, not named here.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "perf/communication_parameters.h"
#include "perf/compute_parameters.h"
#include "topology/link.h"

namespace trainsim::perf {

enum class ParameterRange : uint8_t {
  kEfficiency,       // (0, 1]
  kShare,            // [0, 1]
  kNonNegative,      // >= 0
  kPositive,         // > 0
  kPositiveInteger,  // 1, 2, ...
};

template <class Parameters>
struct ParameterName {
  std::string name;
  ParameterRange range = ParameterRange::kPositive;
  // True: one value per GPU (`gpu_key` below), written as a list of {gpu, fraction} rows.
  bool per_gpu = false;
  // The value in force for `gpu_key` (ignored unless per_gpu), and setting it.
  std::function<double(const Parameters&, std::string_view gpu_key)> get;
  std::function<void(Parameters&, std::string_view gpu_key, double value)> set;
};

// A named scalar field of `Parameters`: one value, not per GPU.
template <class Parameters>
[[nodiscard]] ParameterName<Parameters> scalarParameter(std::string name, ParameterRange range,
                                                        double Parameters::*field) {
  return {std::move(name), range, false, [field](const Parameters& p, std::string_view) { return p.*field; },
          [field](Parameters& p, std::string_view, double value) { p.*field = value; }};
}

using CommunicationParameterName = ParameterName<CommunicationParameters>;
using ComputeParameterName = ParameterName<ComputeParameters>;

// Every named scalar of each struct, in the order of the shipped defaults files.
[[nodiscard]] std::span<const CommunicationParameterName> communicationParameterNames();
[[nodiscard]] std::span<const ComputeParameterName> computeParameterNames();
[[nodiscard]] const CommunicationParameterName* findCommunicationParameter(std::string_view name);
[[nodiscard]] const ComputeParameterName* findComputeParameter(std::string_view name);

[[nodiscard]] bool inRange(ParameterRange range, double value);
[[nodiscard]] std::string_view rangeDescription(ParameterRange range);

// The parameter that holds the efficiency of `type` links (the one
// CommunicationParameters::linkEfficiency reads): "nvlink_efficiency" (per GPU),
// "infiniband_efficiency", ...
[[nodiscard]] std::string_view linkEfficiencyParameter(topology::LinkType type);

}  // namespace trainsim::perf
