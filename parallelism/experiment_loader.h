// Loading experiment files (SPEC "Experiment file"): the model and cluster they reference or
// inline, --set overrides applied before any validation, and the parallel plan checked
// against all of it, every error pointing at the key to change.
#pragma once

#include <string>
#include <vector>

#include "base/config_node.h"
#include "base/config_paths.h"
#include "base/expected.h"
#include "parallelism/experiment.h"

namespace trainsim::parallelism {

// `path_or_preset` is a file path or a preset name (<config_dir>/experiments/<name>.yaml).
// Overrides have key paths relative to the experiment ("parallelism.tp", "cluster.nodes",
// "model=llama3-8b"); `model.*` and `cluster.*` ones reach a referenced model or cluster file.
[[nodiscard]] Expected<Experiment> loadExperiment(const std::string& path_or_preset, const ConfigPaths& paths,
                                                  const std::vector<Override>& overrides = {});

// The same for an experiment document already parsed (parseConfigText in tests, stdin).
[[nodiscard]] Expected<Experiment> loadExperimentNode(ConfigNode root, const ConfigPaths& paths,
                                                      const std::vector<Override>& overrides = {});

}  // namespace trainsim::parallelism
