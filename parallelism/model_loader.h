// Loading model descriptions: a preset name, a path to a model YAML or to a Hugging Face
// config.json, or an inline mapping in an experiment file. Strict: unknown keys (in the
// trainsim schema), wrong types and inconsistent sizes are errors naming the key.
#pragma once

#include <string>
#include <vector>

#include "base/config_node.h"
#include "base/config_paths.h"
#include "base/expected.h"
#include "parallelism/model_spec.h"

namespace trainsim::parallelism {

// `reference` is a preset name (<config_dir>/models/<name>.yaml) or a file path.
// `overrides` have key paths relative to the model document ("layers", "moe.top_k").
[[nodiscard]] Expected<ModelSpec> loadModelFile(const std::string& reference, const ConfigPaths& paths,
                                                const std::vector<Override>& overrides = {});

// `node` is the value of a `model:` key: a scalar reference or an inline mapping (whose
// overrides, if any, the caller already applied). Overrides listed here apply to a referenced
// file. A relative path is looked up next to the file holding `node` first, then in the
// working directory.
[[nodiscard]] Expected<ModelSpec> loadModelNode(const ConfigNode& node, const ConfigPaths& paths,
                                                const std::vector<Override>& overrides = {});

// True when a mapping is a Hugging Face config.json rather than a trainsim model file.
[[nodiscard]] bool isHuggingFaceConfig(const ConfigNode& root);

}  // namespace trainsim::parallelism
