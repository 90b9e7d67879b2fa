// The shipped defaults of the models: <config_dir>/defaults/compute.yaml and
// communication.yaml (configs/defaults/), in the schema of a calibration file's `compute:` and
// `communication:` sections (perf/parameter_sections.h) with every key required. The config
// directory is the one presets come from (base/config_paths.h: --config-dir,
// $TRAINSIM_CONFIG_DIR, else the source tree's configs/).
#pragma once

#include <string>

#include "base/config_paths.h"
#include "base/expected.h"
#include "perf/communication_parameters.h"
#include "perf/compute_parameters.h"

namespace trainsim::perf {

// Parsed once per config directory and cached (thread-safe); a malformed file is an error
// at file:line:col (exit 2), returned again on every call.
[[nodiscard]] Expected<ComputeParameters> defaultComputeParameters(const ConfigPaths& paths);
[[nodiscard]] Expected<CommunicationParameters> defaultCommunicationParameters(const ConfigPaths& paths);

// The files' paths, and parsing a defaults text held in memory (`name` is shown as the file).
[[nodiscard]] std::string computeDefaultsPath(const ConfigPaths& paths);
[[nodiscard]] std::string communicationDefaultsPath(const ConfigPaths& paths);
[[nodiscard]] Expected<ComputeParameters> parseComputeDefaults(const std::string& text, const std::string& name);
[[nodiscard]] Expected<CommunicationParameters> parseCommunicationDefaults(const std::string& text,
                                                                           const std::string& name);

}  // namespace trainsim::perf
