#include "base/config_paths.h"

#include <cstdlib>
#include <filesystem>

#include "base/config_node.h"

namespace trainsim {

ConfigPaths defaultConfigPaths(const std::string& built_in_default) {
  // getenv is fine here: read once at start-up by the CLI, never inside a simulation.
  const char* from_environment = std::getenv("TRAINSIM_CONFIG_DIR");  // NOLINT(concurrency-mt-unsafe)
  return ConfigPaths{from_environment != nullptr && *from_environment != '\0' ? from_environment : built_in_default};
}

bool looksLikePath(const std::string& reference) {
  if (reference.find('/') != std::string::npos) return true;
  for (const char* suffix : {".yaml", ".yml", ".json"}) {
    if (reference.ends_with(suffix)) return true;
  }
  std::error_code ignored;
  return std::filesystem::is_regular_file(reference, ignored);
}

std::string presetPath(const ConfigPaths& paths, const std::string& category, const std::string& name) {
  return (std::filesystem::path(paths.config_dir) / category / (name + ".yaml")).string();
}

std::string referencedFilePath(const ConfigNode& reference) {
  namespace fs = std::filesystem;
  const std::string text = reference.asString();
  std::error_code ignored;
  const bool from_command_line = reference.source()->overrides.contains(reference.path());
  const fs::path referencing_file(reference.source()->file);
  if (from_command_line || !fs::path(text).is_relative() || !fs::is_regular_file(referencing_file, ignored)) {
    return text;
  }
  const fs::path beside = referencing_file.parent_path() / text;
  return fs::is_regular_file(beside, ignored) ? beside.string() : text;
}

}  // namespace trainsim
