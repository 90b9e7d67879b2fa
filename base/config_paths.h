// Where preset files live, and how a reference ("dgx-a100", "my/cluster.yaml") becomes a file path.
#pragma once

#include <string>

namespace trainsim {

class ConfigNode;

struct ConfigPaths {
  // Directory holding gpus.yaml, models/, clusters/, experiments/.
  std::string config_dir;
};

// The config directory: $TRAINSIM_CONFIG_DIR if set, else `built_in_default`.
[[nodiscard]] ConfigPaths defaultConfigPaths(const std::string& built_in_default);

// A reference is a path when it names an existing file or contains '/' or ends in
// .yaml/.yml/.json; otherwise a preset name looked up as <config_dir>/<category>/<name>.yaml.
// Returns the path to open (the caller reports a missing file / unknown preset).
[[nodiscard]] bool looksLikePath(const std::string& reference);
[[nodiscard]] std::string presetPath(const ConfigPaths& paths, const std::string& category, const std::string& name);

// The file a path-like `reference` node names. A relative path written in a file is looked up
// beside that file first (an experiment moves together with its model and cluster files), then
// in the working directory, where it was looked up before; one given with --set is relative to
// the working directory only. Returns the path to open (the caller reports a missing file).
[[nodiscard]] std::string referencedFilePath(const ConfigNode& reference);

}  // namespace trainsim
