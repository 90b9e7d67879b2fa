#include "base/config_paths.h"

#include <cstdlib>
#include <filesystem>

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

}  // namespace trainsim
