// Reading the architecture features beyond a plain (mixture-of-experts) transformer: multi-head
// latent attention, shared experts, dense layers among MoE ones, expert and attention biases,
// group-limited routing, sliding-window attention, attention sinks and multi-token prediction
// (docs/moe.md). From a trainsim model file (its own keys) and from a Hugging Face config.json
// (each model_type's own key names). Errors throw InputError at the key, as the model loader's do.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/config_node.h"
#include "parallelism/model_spec.h"

namespace trainsim::parallelism {

// The keys read here, at the top level of a trainsim model file and under its `moe:`.
[[nodiscard]] const std::vector<std::string>& trainsimFeatureKeys();
[[nodiscard]] const std::vector<std::string>& trainsimMoeFeatureKeys();
// Reads the top-level keys into `model`, whose layers and heads are already read.
void readTrainsimFeatures(const ConfigNode& root, ModelSpec& model);
// Reads the `moe:` keys into `spec`, whose experts and expert width are already read.
void readTrainsimMoeFeatures(const ConfigNode& moe, const ModelSpec& model, MoeSpec& spec);

// Whether a config.json key is one read here (so that a --set naming it is accepted).
[[nodiscard]] bool isHuggingFaceFeatureKey(std::string_view key);
// The config.json keys read here, for messages.
[[nodiscard]] std::string huggingFaceFeatureKeyList();
// Reads the features of `model_type` from its config.json into `model`, whose sizes and routed
// experts are already read.
void readHuggingFaceFeatures(const ConfigNode& root, const std::string& model_type, ModelSpec& model);

}  // namespace trainsim::parallelism
