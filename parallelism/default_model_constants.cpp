#include "parallelism/default_model_constants.h"

#include <filesystem>
#include <string_view>

#include "base/config_file_cache.h"
#include "parallelism/model_constant_sections.h"

namespace trainsim::parallelism {
namespace {

// The one top-level key of a defaults file.
ConfigNode sectionOf(const ConfigNode& root, std::string_view key) {
  if (!root.yaml().IsDefined() || root.yaml().IsNull()) {
    throwInputError(root.source()->file, "", "the file is empty, expected a `" + std::string(key) + ":` section");
  }
  root.allowKeys({key});
  return root.child(key);
}

// Fails at the section unless it gives every named constant.
template <class Name>
void requireEvery(const ConfigNode& section, std::span<const Name> names) {
  for (const Name& name : names) (void)section.child(name.name);
}

FlopsOptions workloadDefaults(const ConfigNode& root) {
  const ConfigNode section = sectionOf(root, "workload");
  const std::vector<perf::ParameterValue> values = readWorkloadSection(section);
  requireEvery(section, workloadConstantNames());
  FlopsOptions options;
  applyWorkloadValues(values, options);
  return options;
}

MemoryOptions memoryDefaults(const ConfigNode& root) {
  const ConfigNode section = sectionOf(root, "memory");
  const std::vector<perf::ParameterValue> values = readMemorySection(section);
  requireEvery(section, memoryConstantNames());
  MemoryOptions options;
  applyMemoryValues(values, options);
  return options;
}

}  // namespace

std::string workloadDefaultsPath(const ConfigPaths& paths) {
  return (std::filesystem::path(paths.config_dir) / "defaults" / "workload.yaml").string();
}

std::string memoryDefaultsPath(const ConfigPaths& paths) {
  return (std::filesystem::path(paths.config_dir) / "defaults" / "memory.yaml").string();
}

Expected<FlopsOptions> defaultWorkloadOptions(const ConfigPaths& paths) {
  return loadConfigFileOnce<FlopsOptions>(workloadDefaultsPath(paths), workloadDefaults);
}

Expected<MemoryOptions> defaultMemoryOptions(const ConfigPaths& paths) {
  TRAINSIM_ASSIGN_OR_RETURN(const FlopsOptions workload, defaultWorkloadOptions(paths));
  TRAINSIM_ASSIGN_OR_RETURN(MemoryOptions memory,
                            loadConfigFileOnce<MemoryOptions>(memoryDefaultsPath(paths), memoryDefaults));
  memory.kernels = workload;
  return memory;
}

Expected<FlopsOptions> parseWorkloadDefaults(const std::string& text, const std::string& name) {
  return catchInputErrors([&] { return workloadDefaults(parseConfigText(text, name)); });
}

Expected<MemoryOptions> parseMemoryDefaults(const std::string& text, const std::string& name) {
  return catchInputErrors([&] { return memoryDefaults(parseConfigText(text, name)); });
}

}  // namespace trainsim::parallelism
