#include "parallelism/model_loader.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <string_view>

#include "parallelism/model_features_loader.h"
#include "parallelism/model_limits.h"

namespace trainsim::parallelism {
namespace {

namespace fs = std::filesystem;

// The keys that hold each size, in the order they are looked for: Hugging Face model
// families spell them differently (GPT-2 and GPT-J n_embd/n_layer/n_head, OPT ffn_dim,
// GPT-Neo num_layers/num_heads, Falcon num_kv_heads).
constexpr std::array<std::string_view, 4> kHfHidden = {"hidden_size", "n_embd", "n_embed", "d_model"};
constexpr std::array<std::string_view, 4> kHfLayers = {"num_hidden_layers", "n_layer", "num_layers", "n_layers"};
constexpr std::array<std::string_view, 4> kHfHeads = {"num_attention_heads", "n_head", "num_heads", "n_heads"};
constexpr std::array<std::string_view, 2> kHfKvHeads = {"num_key_value_heads", "num_kv_heads"};
constexpr std::array<std::string_view, 4> kHfFfn = {"intermediate_size", "n_inner", "ffn_dim", "ffn_hidden_size"};
// DeepSeek-V2/V3 spell the routed experts n_routed_experts.
constexpr std::array<std::string_view, 3> kHfExperts = {"num_local_experts", "num_experts", "n_routed_experts"};
// Residual-stream dropout (GPT-2's resid_pdrop, BERT-style hidden_dropout_prob, OPT's dropout)
// and attention-probability dropout (GPT-2's attn_pdrop).
constexpr std::array<std::string_view, 4> kHfHiddenDropout = {"hidden_dropout", "resid_pdrop", "hidden_dropout_prob",
                                                              "dropout"};
constexpr std::array<std::string_view, 3> kHfAttentionDropout = {"attention_dropout", "attn_pdrop",
                                                                 "attention_probs_dropout_prob"};
// Every other key the Hugging Face reader uses (the rest of a config.json is ignored).
constexpr std::array<std::string_view, 8> kHfOtherKeys = {"model_type",  "vocab_size",          "tie_word_embeddings",
                                                          "head_dim",    "num_experts_per_tok", "moe_intermediate_size",
                                                          "multi_query", "_name_or_path"};

using model_limits::kMaxExperts;
using model_limits::kMaxFfnHiddenSize;
using model_limits::kMaxHeadDim;
using model_limits::kMaxHeads;
using model_limits::kMaxHiddenSize;
using model_limits::kMaxLayers;
using model_limits::kMaxVocabSize;

// model_type values by MLP shape: a gated MLP (three matrices) is `llama`, a plain one `gpt`.
// DeepSeek-V2/V3 (and Kimi K2, a DeepSeek-V3) and GPT-OSS have gated MLPs and RMSNorm too; their
// own features are read by model_features_loader.h.
constexpr std::array<std::string_view, 21> kLlamaStyleTypes = {
    "llama",     "mistral", "mixtral",  "qwen2",       "qwen2_moe",   "qwen3",   "qwen3_moe",
    "gemma",     "gemma2",  "phi3",     "olmo",        "olmo2",       "olmoe",   "granite",
    "internlm2", "cohere",  "stablelm", "deepseek_v2", "deepseek_v3", "kimi_k2", "gpt_oss"};
constexpr std::array<std::string_view, 11> kGptStyleTypes = {
    "gpt2", "gpt_neox", "gptj", "gpt_neo", "gpt_bigcode", "opt", "bloom", "falcon", "phi", "starcoder2", "codegen"};

template <std::size_t N>
bool contains(const std::array<std::string_view, N>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

template <std::size_t N>
std::string joinNames(const std::array<std::string_view, N>& names) {
  std::string text;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) text += ", ";
    text += names[i];
  }
  return text;
}

// The last component of a node's key path: the key as the file spells it, for messages.
std::string keyName(const ConfigNode& node) {
  const auto dot = node.path().rfind('.');
  return dot == std::string::npos ? node.path() : node.path().substr(dot + 1);
}

// The nodes behind the sizes that are checked against each other, so that a complaint
// points at the key the user wrote (whichever schema they wrote it in).
struct SizeNodes {
  ConfigNode attention_heads;
  std::optional<ConfigNode> kv_heads;
  std::optional<ConfigNode> head_dim;
  std::optional<ConfigNode> moe_experts;
  std::optional<ConfigNode> moe_top_k;
  std::string hidden_key;
};

void checkSizes(const ModelSpec& model, const SizeNodes& nodes) {
  if (!nodes.head_dim && model.hidden_size % model.attention_heads != 0) {
    nodes.attention_heads.failExpected("a divisor of " + nodes.hidden_key + " (" + std::to_string(model.hidden_size) +
                                       ")");
  }
  if (nodes.kv_heads && model.attention_heads % model.kv_heads != 0) {
    nodes.kv_heads->failExpected("a divisor of " + keyName(nodes.attention_heads) + " (" +
                                 std::to_string(model.attention_heads) + ")");
  }
  if (model.moe && nodes.moe_top_k && model.moe->top_k > model.moe->experts) {
    nodes.moe_top_k->failExpected("at most " + keyName(*nodes.moe_experts) + " (" + std::to_string(model.moe->experts) +
                                  ")");
  }
}

// A dropout probability: 0 turns it off; 1 would drop every activation.
double dropoutProbability(const ConfigNode& node) {
  const double probability = node.asNumberIn(0.0, 1.0);
  if (probability >= 1.0) node.failExpected("a probability below 1 (0 turns dropout off)");
  return probability;
}

// moe.top_k when not given: two experts per token as in GShard and Mixtral, one if there is only one.
int64_t defaultTopK(int64_t experts) { return std::min<int64_t>(2, experts); }

ModelSpec parseTrainsimModel(const ConfigNode& root, const std::string& default_name) {
  std::vector<std::string> keys = {"name",        "description",     "source",          "architecture",      "layers",
                                   "hidden_size", "ffn_hidden_size", "attention_heads", "kv_heads",          "head_dim",
                                   "vocab_size",  "tied_embeddings", "hidden_dropout",  "attention_dropout", "moe"};
  keys.insert(keys.end(), trainsimFeatureKeys().begin(), trainsimFeatureKeys().end());
  root.allowKeys(keys);
  ModelSpec model;
  model.name = root.string("name", default_name);
  (void)root.string("description", "");
  (void)root.string("source", "");
  model.architecture =
      root.enumeration("architecture", {"gpt", "llama"}, "gpt") == "llama" ? Architecture::kLlama : Architecture::kGpt;
  model.layers = root.child("layers").asIntegerIn(1, kMaxLayers);
  model.hidden_size = root.child("hidden_size").asIntegerIn(1, kMaxHiddenSize);
  SizeNodes nodes{root.child("attention_heads"),
                  root.optionalChild("kv_heads"),
                  root.optionalChild("head_dim"),
                  std::nullopt,
                  std::nullopt,
                  "hidden_size"};
  model.attention_heads = nodes.attention_heads.asIntegerIn(1, kMaxHeads);
  model.vocab_size = root.child("vocab_size").asIntegerIn(1, kMaxVocabSize);

  if (auto ffn = root.optionalChild("ffn_hidden_size")) {
    model.ffn_hidden_size = ffn->asIntegerIn(1, kMaxFfnHiddenSize);
  } else if (model.architecture == Architecture::kLlama) {
    root.failMissing("ffn_hidden_size",
                     "llama models have no default; SwiGLU MLPs are usually about 8/3 of "
                     "hidden_size, e.g. 14336 for hidden_size 4096");
  } else {
    model.ffn_hidden_size = 4 * model.hidden_size;  // GPT-2/3 convention
  }
  model.kv_heads = nodes.kv_heads ? nodes.kv_heads->asIntegerIn(1, kMaxHeads) : model.attention_heads;
  model.head_dim = nodes.head_dim ? nodes.head_dim->asIntegerIn(1, kMaxHeadDim) : 0;
  model.tied_embeddings = root.boolean("tied_embeddings", false);
  if (auto node = root.optionalChild("hidden_dropout")) model.hidden_dropout = dropoutProbability(*node);
  if (auto node = root.optionalChild("attention_dropout")) model.attention_dropout = dropoutProbability(*node);

  if (auto moe = root.optionalChild("moe")) {
    std::vector<std::string> moe_keys = {"experts", "top_k", "ffn_hidden_size"};
    moe_keys.insert(moe_keys.end(), trainsimMoeFeatureKeys().begin(), trainsimMoeFeatureKeys().end());
    moe->allowKeys(moe_keys);
    MoeSpec spec;
    // emplace, not assignment: assigning a YAML::Node rebinds the node it refers to in the document.
    nodes.moe_experts.emplace(moe->child("experts"));
    spec.experts = nodes.moe_experts->asIntegerIn(1, kMaxExperts);
    if (auto top_k = moe->optionalChild("top_k")) nodes.moe_top_k.emplace(*top_k);
    spec.top_k = nodes.moe_top_k ? nodes.moe_top_k->asIntegerIn(1, kMaxExperts) : defaultTopK(spec.experts);
    spec.ffn_hidden_size = moe->integerIn("ffn_hidden_size", model.ffn_hidden_size, 1, kMaxFfnHiddenSize);
    readTrainsimMoeFeatures(*moe, model, spec);
    model.moe = spec;
  }
  readTrainsimFeatures(root, model);
  checkSizes(model, nodes);
  if (model.head_dim == 0) model.head_dim = model.hidden_size / model.attention_heads;
  return model;
}

// The first of `keys` present with a non-null value (config.json writes `"n_inner": null`).
template <std::size_t N>
std::optional<ConfigNode> hfValue(const ConfigNode& root, const std::array<std::string_view, N>& keys) {
  for (auto key : keys) {
    auto value = root.optionalChild(key);
    if (value && !value->yaml().IsNull()) return value;
  }
  return std::nullopt;
}

std::optional<ConfigNode> hfValue(const ConfigNode& root, std::string_view key) {
  return hfValue(root, std::array<std::string_view, 1>{key});
}

template <std::size_t N>
ConfigNode hfRequired(const ConfigNode& root, const std::array<std::string_view, N>& keys) {
  auto value = hfValue(root, keys);
  if (!value) root.failMissing(keys.front());
  return *value;
}

// A Hugging Face config carries dozens of keys trainsim does not read, so they are not
// errors; but a --set naming one of them would silently change nothing, so that is.
void checkHfOverrides(const ConfigNode& root) {
  const std::string prefix = root.path().empty() ? "" : root.path() + ".";
  for (const auto& [key_path, display] : root.source()->overrides) {
    if (!key_path.starts_with(prefix)) continue;
    const std::string relative = key_path.substr(prefix.size());
    const std::string first = relative.substr(0, relative.find('.'));
    if (contains(kHfHidden, first) || contains(kHfLayers, first) || contains(kHfHeads, first) ||
        contains(kHfKvHeads, first) || contains(kHfFfn, first) || contains(kHfExperts, first) ||
        contains(kHfHiddenDropout, first) || contains(kHfAttentionDropout, first) || contains(kHfOtherKeys, first) ||
        isHuggingFaceFeatureKey(first)) {
      continue;
    }
    throwInputError(display, key_path,
                    "not a key trainsim reads from a Hugging Face config.json; it reads model_type, hidden_size, "
                    "num_hidden_layers, num_attention_heads, num_key_value_heads, head_dim, intermediate_size, "
                    "vocab_size, tie_word_embeddings, num_local_experts, num_experts_per_tok, "
                    "moe_intermediate_size, n_routed_experts, the dropout probabilities hidden_dropout, "
                    "resid_pdrop, hidden_dropout_prob, dropout, attention_dropout, attn_pdrop and "
                    "attention_probs_dropout_prob, and the architecture keys " +
                        huggingFaceFeatureKeyList());
  }
}

ModelSpec parseHuggingFaceConfig(const ConfigNode& root, const std::string& default_name) {
  root.requireMap();
  checkHfOverrides(root);
  ModelSpec model;
  model.name = default_name;
  if (auto name = hfValue(root, "_name_or_path")) {
    // Often a local directory or hub id ("meta-llama/Meta-Llama-3-8B"): its last component names the model.
    const std::string text = fs::path(name->asString()).filename().string();
    if (!text.empty()) model.name = text;
  }

  auto type_node = hfValue(root, "model_type");
  if (!type_node) {
    root.failMissing("model_type", "it tells a gated llama-style MLP from a plain gpt-style one");
  }
  const std::string type = type_node->asString();
  if (contains(kLlamaStyleTypes, type)) {
    model.architecture = Architecture::kLlama;
  } else if (contains(kGptStyleTypes, type)) {
    model.architecture = Architecture::kGpt;
  } else {
    type_node->failExpected("a model_type trainsim knows: gated-MLP (llama-style) " + joinNames(kLlamaStyleTypes) +
                            "; plain-MLP (gpt-style) " + joinNames(kGptStyleTypes) +
                            "; describe other models in a trainsim model file");
  }

  const ConfigNode hidden = hfRequired(root, kHfHidden);
  model.hidden_size = hidden.asIntegerIn(1, kMaxHiddenSize);
  model.layers = hfRequired(root, kHfLayers).asIntegerIn(1, kMaxLayers);
  SizeNodes nodes{hfRequired(root, kHfHeads),
                  hfValue(root, kHfKvHeads),
                  hfValue(root, "head_dim"),
                  hfValue(root, kHfExperts),
                  hfValue(root, "num_experts_per_tok"),
                  keyName(hidden)};
  model.attention_heads = nodes.attention_heads.asIntegerIn(1, kMaxHeads);
  model.vocab_size = hfRequired(root, std::array<std::string_view, 1>{"vocab_size"}).asIntegerIn(1, kMaxVocabSize);

  if (nodes.kv_heads) {
    model.kv_heads = nodes.kv_heads->asIntegerIn(1, kMaxHeads);
  } else if (auto multi_query = hfValue(root, "multi_query"); multi_query && multi_query->asBool()) {
    model.kv_heads = 1;  // Falcon-7B, StarCoder: one key/value head shared by all query heads
  } else {
    model.kv_heads = model.attention_heads;
  }
  model.head_dim = nodes.head_dim ? nodes.head_dim->asIntegerIn(1, kMaxHeadDim) : 0;

  if (auto ffn = hfValue(root, kHfFfn)) {
    model.ffn_hidden_size = ffn->asIntegerIn(1, kMaxFfnHiddenSize);
  } else if (model.architecture == Architecture::kLlama) {
    root.failMissing("intermediate_size", "model_type " + type + " has a gated MLP with no default width");
  } else {
    model.ffn_hidden_size = 4 * model.hidden_size;  // what GPT-2, GPT-J and BLOOM use when n_inner is null
  }
  // transformers' PretrainedConfig ties input and output embeddings unless the config says otherwise.
  auto tied = hfValue(root, "tie_word_embeddings");
  model.tied_embeddings = tied ? tied->asBool() : true;
  if (auto node = hfValue(root, kHfHiddenDropout)) model.hidden_dropout = dropoutProbability(*node);
  if (auto node = hfValue(root, kHfAttentionDropout)) model.attention_dropout = dropoutProbability(*node);

  // Dense configs of some families write num_experts: 0; only a positive count makes a MoE model.
  if (nodes.moe_experts && nodes.moe_experts->asIntegerIn(0, kMaxExperts) > 0) {
    MoeSpec spec;
    spec.experts = nodes.moe_experts->asIntegerIn(0, kMaxExperts);
    spec.top_k = nodes.moe_top_k ? nodes.moe_top_k->asIntegerIn(1, kMaxExperts) : defaultTopK(spec.experts);
    auto expert_ffn = hfValue(root, "moe_intermediate_size");
    spec.ffn_hidden_size = expert_ffn ? expert_ffn->asIntegerIn(1, kMaxFfnHiddenSize) : model.ffn_hidden_size;
    model.moe = spec;
  }
  readHuggingFaceFeatures(root, type, model);
  checkSizes(model, nodes);
  if (model.head_dim == 0) model.head_dim = model.hidden_size / model.attention_heads;
  return model;
}

ModelSpec parseModel(const ConfigNode& root, const std::string& default_name) {
  if (!root.isMap()) root.failExpected("a model description (a mapping)");
  ModelSpec model =
      isHuggingFaceConfig(root) ? parseHuggingFaceConfig(root, default_name) : parseTrainsimModel(root, default_name);
  return model;
}

// A file's model name when it does not give one: the file name, or for Hugging Face's
// <model>/config.json the directory name.
std::string nameFromPath(const std::string& path) {
  const fs::path file(path);
  if (file.stem() == "config" && file.has_parent_path()) {
    const std::string directory = fs::absolute(file).parent_path().filename().string();
    if (!directory.empty()) return directory;
  }
  return file.stem().string();
}

bool isFile(const fs::path& path) {
  std::error_code ignored;
  return fs::is_regular_file(path, ignored);
}

ConfigNode loadAndOverride(const std::string& path, const std::vector<Override>& overrides) {
  ConfigNode root = loadConfigFile(path);
  for (const auto& override_value : overrides) applyOverride(root, override_value);
  return root;
}

ModelSpec loadReference(const ConfigNode& node, const ConfigPaths& paths, const std::vector<Override>& overrides) {
  if (!node.isScalar() || node.yaml().IsNull()) {
    node.failExpected("a model preset name, a path to a model file or config.json, or a mapping");
  }
  const std::string text = node.asString();
  std::string path;
  if (looksLikePath(text)) {
    path = referencedFilePath(node);
    if (!isFile(path)) node.fail("cannot open model file \"" + text + "\"");
  } else {
    path = presetPath(paths, "models", text);
    if (!isFile(path)) {
      node.fail("unknown model preset \"" + text + "\" (no " + path + "); give a preset name or a file path");
    }
  }
  ModelSpec model = parseModel(loadAndOverride(path, overrides), looksLikePath(text) ? nameFromPath(path) : text);
  model.source_file = path;
  return model;
}

}  // namespace

bool isHuggingFaceConfig(const ConfigNode& root) {
  if (!root.isMap()) return false;
  // Keys no trainsim model file has (it would reject them), present in every transformers config.
  for (const char* key : {"model_type", "architectures", "transformers_version", "num_hidden_layers", "n_layer"}) {
    if (root.has(key)) return true;
  }
  return false;
}

Expected<ModelSpec> loadModelFile(const std::string& reference, const ConfigPaths& paths,
                                  const std::vector<Override>& overrides) {
  return catchInputErrors([&]() -> ModelSpec {
    std::string path = reference;
    std::string default_name = nameFromPath(reference);
    if (!looksLikePath(reference)) {
      path = presetPath(paths, "models", reference);
      default_name = reference;
      if (!isFile(path)) {
        throwInputError(reference, "", "unknown model preset (no " + path + "); give a preset name or a file path");
      }
    }
    ModelSpec model = parseModel(loadAndOverride(path, overrides), default_name);
    model.source_file = path;
    return model;
  });
}

Expected<ModelSpec> loadModelNode(const ConfigNode& node, const ConfigPaths& paths,
                                  const std::vector<Override>& overrides) {
  return catchInputErrors([&]() -> ModelSpec {
    if (node.isMap()) return parseModel(node, "model");
    return loadReference(node, paths, overrides);
  });
}

}  // namespace trainsim::parallelism
