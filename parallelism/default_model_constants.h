// The shipped defaults of the workload and memory models' numeric constants:
// <config_dir>/defaults/workload.yaml (a `workload:` section: FlopsOptions, transformer_workload.h) and
// memory.yaml (a `memory:` section: MemoryOptions, memory_model.h), in the schema of a
// calibration file's sections of those names (parallelism/model_constant_sections.h) with
// every key required. The options' other fields (the per-experiment kernel choices) keep their
// C++ initialisers; kernelsFor (experiment.h) sets them for an experiment.
#pragma once

#include <string>

#include "base/config_paths.h"
#include "base/expected.h"
#include "parallelism/memory_model.h"
#include "parallelism/transformer_workload.h"

namespace trainsim::parallelism {

// Parsed once per config directory and cached (thread-safe); a malformed file is an error at
// file:line:col (exit 2), returned again on every call. The memory options' kernels are the
// workload defaults.
[[nodiscard]] Expected<FlopsOptions> defaultWorkloadOptions(const ConfigPaths& paths);
[[nodiscard]] Expected<MemoryOptions> defaultMemoryOptions(const ConfigPaths& paths);

// The files' paths, and parsing a defaults text held in memory (`name` is shown as the file).
[[nodiscard]] std::string workloadDefaultsPath(const ConfigPaths& paths);
[[nodiscard]] std::string memoryDefaultsPath(const ConfigPaths& paths);
[[nodiscard]] Expected<FlopsOptions> parseWorkloadDefaults(const std::string& text, const std::string& name);
[[nodiscard]] Expected<MemoryOptions> parseMemoryDefaults(const std::string& text, const std::string& name);

}  // namespace trainsim::parallelism
