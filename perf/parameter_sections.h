// Reading and writing the `communication:` and `compute:` sections shared by the shipped
// defaults (configs/defaults/*.yaml, perf/default_parameters.h) and calibration files
// (calib.yaml, calibrate/calibration_file.h; schema in docs/calibration.md). Reading is strict:
// an unknown key (with the closest known one suggested), a value of the wrong type or out of
// its range is an InputError at file:line:col.
#pragma once

#include <algorithm>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/config_node.h"
#include "perf/communication_parameters.h"
#include "perf/compute_parameters.h"
#include "perf/parameter_names.h"

namespace trainsim::perf {

// One value of a named parameter (perf/parameter_names.h); `gpu_key`: the GPU a per-GPU
// parameter's value is for (empty for the others).
struct ParameterValue {
  std::string name;
  double value = 0.0;
  std::string gpu_key;
};

// One GEMM shape class's measured efficiency (GemmShapeEfficiency) and how many measured
// shapes it is the median of.
struct GemmClassRecord {
  std::string gpu;  // catalog key
  topology::Precision precision = topology::Precision::kBf16;
  std::string shape_class;
  double efficiency = 0.0;  // achieved / catalog peak
  int shapes = 0;
};

// A `compute:` section: the rows of ComputeParameters' per-GPU tables it gives, the lists it
// replaces, and its named scalars. Applied over parameters (applyComputeSection), a row
// replaces the row of the same GPU (and precision, and shape class), a list the whole list;
// attention rates replace all rows of a GPU and precision they give (rates over sequence
// length).
struct ComputeSection {
  std::vector<MeasuredRate> matmul_ceilings;
  std::vector<MeasuredFraction> memory_efficiency;
  std::vector<GemmClassRecord> gemm_efficiency;
  // SMs an overlapped NCCL collective holds (its CTAs: NCCL_DEBUG=INFO's "coll channels").
  std::vector<MeasuredCount> collective_sms;
  std::vector<MeasuredAttentionRate> attention_rates;
  std::vector<MeasuredAttentionTileOverhead> attention_tile_overheads;
  std::vector<MeasuredFraction> training_rate_fraction;
  std::vector<MeasuredMicroseconds> tile_fixed_overhead;
  std::vector<MeasuredFraction> gemm_epilogue_exposed;
  std::optional<std::vector<GemmTile>> gemm_tiles;
  std::optional<std::vector<std::string>> collective_offload_vendors;
  std::vector<ParameterValue> values;  // computeParameterNames()
  [[nodiscard]] bool empty() const;
};

// The keys of a `compute:` section that hold tables and lists (the others are named scalars),
// in ComputeSection's order; kComputeTableKeyCount of them.
inline constexpr std::size_t kComputeTableKeyCount = 11;
[[nodiscard]] std::span<const std::string_view> computeTableKeys();

// A named parameter's value at `node`, failing (InputError at the node) outside `range`.
[[nodiscard]] double readInRange(const ConfigNode& node, ParameterRange range);

[[nodiscard]] std::vector<ParameterValue> readCommunicationSection(const ConfigNode& section);
[[nodiscard]] ComputeSection readComputeSection(const ConfigNode& section);

// The lines of a section below its key, indented by two spaces; numbers are written with the
// shortest text that reads back as the same double.
[[nodiscard]] std::string communicationSectionYaml(std::span<const ParameterValue> values);
[[nodiscard]] std::string computeSectionYaml(const ComputeSection& section);

// The values of a section whose every key is one of `names` (ParameterName of any struct;
// a per-GPU name as {gpu, fraction} rows), strictly: an unknown key, a wrong type or a value
// out of its range is an InputError at file:line:col.
template <class Name>
[[nodiscard]] std::vector<ParameterValue> readNamedValues(const ConfigNode& section, std::span<const Name> names);

// Sets the values a section gives over `parameters`.
void applyCommunicationValues(std::span<const ParameterValue> values, CommunicationParameters& parameters);
void applyComputeSection(const ComputeSection& section, ComputeParameters& parameters);

// A YAML double-quoted scalar; the shortest text that reads back as `value` (finite).
[[nodiscard]] std::string yamlQuoted(const std::string& text);
[[nodiscard]] std::string yamlNumber(double value);

namespace detail {

// The named values of `node` (a section, or a table within it at `prefix`, "base_latency_us."),
// except the keys in `skip` (read as tables by the caller).
template <class Name>
void readNamed(const ConfigNode& node, const std::string& prefix, std::span<const Name> names,
               std::span<const std::string_view> skip, std::vector<ParameterValue>& out) {
  std::vector<std::string> allowed(skip.begin(), skip.end());
  for (const Name& name : names) {
    if (!name.name.starts_with(prefix)) continue;
    const std::string rest = name.name.substr(prefix.size());
    const std::string key = rest.substr(0, rest.find('.'));
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) allowed.push_back(key);
  }
  node.allowKeys(allowed);
  for (const auto& [key, value] : node.entries()) {
    if (std::find(skip.begin(), skip.end(), key) != skip.end()) continue;
    const std::string path = prefix + key;
    const auto found = std::find_if(names.begin(), names.end(), [&](const Name& name) { return name.name == path; });
    if (found == names.end()) {
      readNamed(value, path + ".", names, {}, out);  // a table of named entries
    } else if (found->per_gpu) {
      for (const auto& row : value.elements()) {
        row.allowKeys({"gpu", "fraction"});
        out.push_back({path, readInRange(row.child("fraction"), found->range), row.child("gpu").asString()});
      }
    } else {
      out.push_back({path, readInRange(value, found->range), ""});
    }
  }
}

}  // namespace detail

template <class Name>
std::vector<ParameterValue> readNamedValues(const ConfigNode& section, std::span<const Name> names) {
  std::vector<ParameterValue> values;
  detail::readNamed(section, "", names, {}, values);
  return values;
}

}  // namespace trainsim::perf
