#include "perf/default_parameters.h"

#include <filesystem>
#include <string_view>

#include "base/config_file_cache.h"
#include "perf/parameter_names.h"
#include "perf/parameter_sections.h"

namespace trainsim::perf {
namespace {

// Fails unless `path` ("base_latency_us.ring.LL") is in `node`. (Recursive: assigning a
// ConfigNode would assign into the YAML document it points into.)
void requirePath(const ConfigNode& node, std::string_view path) {
  const auto dot = path.find('.');
  const ConfigNode child = node.child(path.substr(0, dot));
  if (dot != std::string_view::npos) requirePath(child, path.substr(dot + 1));
}

// Every key a complete defaults section needs: the named parameters (an entry of a table by
// its path).
template <class Name>
void requireEvery(const ConfigNode& section, std::span<const Name> names) {
  for (const Name& name : names) requirePath(section, name.name);
}

// The one top-level key of a defaults file.
ConfigNode sectionOf(const ConfigNode& root, std::string_view key) {
  if (!root.yaml().IsDefined() || root.yaml().IsNull()) {
    throwInputError(root.source()->file, "", "the file is empty, expected a `" + std::string(key) + ":` section");
  }
  root.allowKeys({key});
  return root.child(key);
}

CommunicationParameters communicationDefaults(const ConfigNode& root) {
  const ConfigNode section = sectionOf(root, "communication");
  const std::vector<ParameterValue> values = readCommunicationSection(section);
  requireEvery(section, communicationParameterNames());
  CommunicationParameters parameters;
  applyCommunicationValues(values, parameters);
  return parameters;
}

ComputeParameters computeDefaults(const ConfigNode& root) {
  const ConfigNode section = sectionOf(root, "compute");
  const ComputeSection read = readComputeSection(section);
  requireEvery(section, computeParameterNames());
  for (std::string_view key : computeTableKeys()) (void)section.child(key);
  // The tables as the file gives them (applyComputeSection would merge rows).
  ComputeParameters parameters;
  parameters.matmul_ceilings = read.matmul_ceilings;
  parameters.gemm_tiles = *read.gemm_tiles;
  parameters.tile_fixed_overhead = read.tile_fixed_overhead;
  parameters.gemm_epilogue_exposed = read.gemm_epilogue_exposed;
  parameters.memory_efficiency = read.memory_efficiency;
  parameters.attention_rates = read.attention_rates;
  parameters.attention_tile_overheads = read.attention_tile_overheads;
  parameters.collective_sms = read.collective_sms;
  parameters.collective_offload_vendors = *read.collective_offload_vendors;
  for (const GemmClassRecord& record : read.gemm_efficiency) {
    parameters.gemm_shape_efficiency.push_back({record.gpu, record.precision, record.shape_class, record.efficiency});
  }
  parameters.training_rate_fraction = read.training_rate_fraction;
  for (const ParameterValue& value : read.values) findComputeParameter(value.name)->set(parameters, "", value.value);
  return parameters;
}

}  // namespace

std::string computeDefaultsPath(const ConfigPaths& paths) {
  return (std::filesystem::path(paths.config_dir) / "defaults" / "compute.yaml").string();
}

std::string communicationDefaultsPath(const ConfigPaths& paths) {
  return (std::filesystem::path(paths.config_dir) / "defaults" / "communication.yaml").string();
}

Expected<ComputeParameters> defaultComputeParameters(const ConfigPaths& paths) {
  return loadConfigFileOnce<ComputeParameters>(computeDefaultsPath(paths), computeDefaults);
}

Expected<CommunicationParameters> defaultCommunicationParameters(const ConfigPaths& paths) {
  return loadConfigFileOnce<CommunicationParameters>(communicationDefaultsPath(paths), communicationDefaults);
}

Expected<ComputeParameters> parseComputeDefaults(const std::string& text, const std::string& name) {
  return catchInputErrors([&] { return computeDefaults(parseConfigText(text, name)); });
}

Expected<CommunicationParameters> parseCommunicationDefaults(const std::string& text, const std::string& name) {
  return catchInputErrors([&] { return communicationDefaults(parseConfigText(text, name)); });
}

}  // namespace trainsim::perf
