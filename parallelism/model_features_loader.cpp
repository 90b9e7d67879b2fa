#include "parallelism/model_features_loader.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>

#include "parallelism/model_limits.h"

namespace trainsim::parallelism {
namespace {

using model_limits::kMaxExperts;
using model_limits::kMaxFfnHiddenSize;
using model_limits::kMaxHeadDim;
using model_limits::kMaxHiddenSize;
using model_limits::kMaxLayers;

// The config.json keys read here, by family (docs/sources/moe-configs.yaml lists them per
// model_type; the transformers configuration classes define them).
constexpr std::array<std::string_view, 24> kHfFeatureKeys = {
    // DeepSeek-V2/V3, Kimi K2 (configuration_deepseek_v3.py)
    "n_shared_experts", "first_k_dense_replace", "moe_layer_freq", "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim",
    "qk_rope_head_dim", "v_head_dim", "n_group", "topk_group", "topk_method", "num_nextn_predict_layers",
    "attention_bias",
    // Qwen2-MoE, Qwen3-MoE (configuration_qwen2_moe.py, configuration_qwen3_moe.py)
    "shared_expert_intermediate_size", "decoder_sparse_step", "mlp_only_layers",
    // GPT-OSS (configuration_gpt_oss.py)
    "sliding_window", "layer_types", "swiglu_limit",
    // YaRN's attention factor (modeling_rope_utils.py), any model_type
    "rope_scaling",
    // spellings of sizes the main reader also reads
    "n_routed_experts", "num_local_experts", "num_experts", "moe_intermediate_size"};

bool isDeepseekType(std::string_view type) {
  // Kimi K2's config.json names its own type but is DeepseekV3ForCausalLM (moe-configs.yaml).
  return type == "deepseek_v2" || type == "deepseek_v3" || type == "kimi_k2";
}

// A config.json key present with a non-null value.
std::optional<ConfigNode> present(const ConfigNode& root, std::string_view key) {
  auto value = root.optionalChild(key);
  if (value && !value->yaml().IsNull()) return value;
  return std::nullopt;
}

ConfigNode required(const ConfigNode& root, std::string_view key, const std::string& why) {
  auto value = present(root, key);
  if (!value) root.failMissing(key, why);
  return *value;
}

int64_t integerOr(const ConfigNode& root, std::string_view key, int64_t fallback, int64_t min, int64_t max) {
  auto value = present(root, key);
  return value ? value->asIntegerIn(min, max) : fallback;
}

double nonNegativeOr(const ConfigNode& root, std::string_view key, double fallback) {
  auto value = present(root, key);
  return value ? value->asNonNegativeNumber() : fallback;
}

bool boolOr(const ConfigNode& root, std::string_view key, bool fallback) {
  auto value = present(root, key);
  return value ? value->asBool() : fallback;
}

// A list of distinct layer indices, sorted.
std::vector<int64_t> layerList(const ConfigNode& list, int64_t layers) {
  std::vector<int64_t> indices;
  for (const ConfigNode& item : list.elements()) {
    const int64_t layer = item.asIntegerIn(0, layers - 1);
    if (std::find(indices.begin(), indices.end(), layer) != indices.end()) {
      item.fail("layer " + std::to_string(layer) + " is listed twice");
    }
    indices.push_back(layer);
  }
  std::sort(indices.begin(), indices.end());
  return indices;
}

void checkRouterGroups(const ConfigNode& groups_node, const std::optional<ConfigNode>& top_node, MoeSpec& spec) {
  if (spec.experts % spec.router_groups != 0) {
    groups_node.failExpected("a divisor of the routed experts (" + std::to_string(spec.experts) + ")");
  }
  if (top_node && spec.router_group_top_k > spec.router_groups) {
    top_node->failExpected("at most the router groups (" + std::to_string(spec.router_groups) + ")");
  }
}

// DeepSeek-V2/V3 (transformers' modeling_deepseek_v3.py; DeepSeek's modeling_deepseek.py for
// moe_layer_freq): layer i has the MoE block when i >= first_k_dense_replace and i %
// moe_layer_freq == 0, the dense MLP of intermediate_size otherwise; n_shared_experts shared
// experts of moe_intermediate_size; multi-head latent attention; num_nextn_predict_layers MTP
// modules (ignored by transformers, trained by DeepSeek and Megatron-Core's --mtp-num-layers).
void readDeepseek(const ConfigNode& root, ModelSpec& model) {
  const std::string why = "DeepSeek's multi-head latent attention needs it";
  LatentAttentionSpec mla;
  mla.q_lora_rank = integerOr(root, "q_lora_rank", 0, 0, kMaxHiddenSize);  // null: q_proj from hidden
  mla.kv_lora_rank = required(root, "kv_lora_rank", why).asIntegerIn(1, kMaxHiddenSize);
  mla.qk_nope_head_dim = required(root, "qk_nope_head_dim", why).asIntegerIn(0, kMaxHeadDim);
  mla.qk_rope_head_dim = required(root, "qk_rope_head_dim", why).asIntegerIn(1, kMaxHeadDim);
  mla.v_head_dim = required(root, "v_head_dim", why).asIntegerIn(1, kMaxHeadDim);
  model.mla = mla;
  model.attention_bias = boolOr(root, "attention_bias", false);
  model.mtp_layers = integerOr(root, "num_nextn_predict_layers", 0, 0, kMaxLayers);
  if (!model.moe) return;
  MoeSpec& moe = *model.moe;
  const int64_t first_dense = integerOr(root, "first_k_dense_replace", 0, 0, model.layers);
  const int64_t frequency = integerOr(root, "moe_layer_freq", 1, 1, kMaxLayers);
  for (int64_t layer = 0; layer < model.layers; ++layer) {
    if (layer < first_dense || layer % frequency != 0) moe.dense_layers.push_back(layer);
  }
  moe.shared_experts = integerOr(root, "n_shared_experts", 0, 0, kMaxExperts);
  moe.shared_ffn_hidden_size = moe.ffn_hidden_size;
  // noaux_tc (DeepSeek-V3's auxiliary-loss-free balancing, arXiv:2412.19437 section 2.1.2):
  // a per-expert bias added to the scores for the top-k choice (e_score_correction_bias).
  if (auto method = present(root, "topk_method"); method && method->asString() == "noaux_tc") moe.router_bias = true;
  if (auto groups = present(root, "n_group")) {
    moe.router_groups = groups->asIntegerIn(1, kMaxExperts);
    auto top = present(root, "topk_group");
    moe.router_group_top_k = top ? top->asIntegerIn(1, kMaxExperts) : moe.router_groups;
    checkRouterGroups(*groups, top, moe);
  }
}

// Qwen2-MoE / Qwen3-MoE (transformers' modeling_qwen2_moe.py, Qwen2MoeDecoderLayer): layer i
// has the sparse block when i is not in mlp_only_layers and (i + 1) % decoder_sparse_step == 0.
void readQwenSparseLayers(const ConfigNode& root, ModelSpec& model) {
  MoeSpec& moe = *model.moe;
  const int64_t step = integerOr(root, "decoder_sparse_step", 1, 1, kMaxLayers);
  std::vector<int64_t> mlp_only;
  if (auto list = present(root, "mlp_only_layers")) mlp_only = layerList(*list, model.layers);
  for (int64_t layer = 0; layer < model.layers; ++layer) {
    const bool listed = std::binary_search(mlp_only.begin(), mlp_only.end(), layer);
    if (listed || (layer + 1) % step != 0) moe.dense_layers.push_back(layer);
  }
}

// GPT-OSS (transformers' modeling_gpt_oss.py): biases on Q, K, V, O (attention_bias, true by
// default), on the router and on both expert projections; a learned sink logit per head;
// sliding-window layers as layer_types says, by default every even layer
// (GptOssConfig: "sliding_attention" if (i + 1) % 2 else "full_attention"), window 128; the
// experts' GLU clamped at swiglu_limit (GptOssExperts).
void readGptOss(const ConfigNode& root, ModelSpec& model) {
  model.attention_bias = boolOr(root, "attention_bias", true);
  model.attention_sinks = true;
  if (model.moe) {
    model.moe->expert_bias = true;
    model.moe->router_bias = true;
    // GptOssConfig's default swiglu_limit.
    model.moe->activation_clamp = nonNegativeOr(root, "swiglu_limit", 7.0);
  }
  model.sliding_window = integerOr(root, "sliding_window", 128, 1, int64_t{1} << 24);
  if (auto types = present(root, "layer_types")) {
    const std::vector<ConfigNode> items = types->elements();
    if (std::ssize(items) != model.layers) {
      types->failExpected("a list of " + std::to_string(model.layers) + " layer types (one per layer)");
    }
    for (std::size_t layer = 0; layer < items.size(); ++layer) {
      const std::string type = items[layer].asEnum({"sliding_attention", "full_attention"});
      if (type == "sliding_attention") model.sliding_window_layers.push_back(static_cast<int64_t>(layer));
    }
  } else {
    for (int64_t layer = 0; layer < model.layers; layer += 2) model.sliding_window_layers.push_back(layer);
  }
}

// YaRN's attention factor as transformers computes it (modeling_rope_utils.py,
// _compute_yarn_parameters): `attention_factor` where given, else get_mscale(factor, mscale) /
// get_mscale(factor, mscale_all_dim) where both are given, else get_mscale(factor), with
// get_mscale(s, m) = 0.1 m ln(s) + 1 (1 for s <= 1). Other RoPE types scale nothing.
double yarnAttentionFactor(const ConfigNode& root) {
  auto scaling = present(root, "rope_scaling");
  if (!scaling || !scaling->yaml().IsMap()) return 1.0;
  auto type = present(*scaling, "rope_type");
  if (!type) type = present(*scaling, "type");
  if (!type || type->asString() != "yarn") return 1.0;
  if (auto given = present(*scaling, "attention_factor")) return given->asNumberIn(0.01, 100.0);
  const double factor = required(*scaling, "factor", "YaRN scales the context by it").asNumberIn(0.01, 1.0e6);
  auto mscale = [factor](double m) { return factor <= 1.0 ? 1.0 : 0.1 * m * std::log(factor) + 1.0; };
  auto m = present(*scaling, "mscale");
  auto m_all = present(*scaling, "mscale_all_dim");
  if (m && m_all && m->asNonNegativeNumber() > 0.0 && m_all->asNonNegativeNumber() > 0.0) {
    return mscale(m->asNonNegativeNumber()) / mscale(m_all->asNonNegativeNumber());
  }
  return mscale(1.0);
}

}  // namespace

const std::vector<std::string>& trainsimFeatureKeys() {
  static const std::vector<std::string> keys = {"mla",        "attention_bias",       "attention_sinks",
                                                "qk_norm",    "sliding_window",       "sliding_window_layers",
                                                "mtp_layers", "rope_attention_factor"};
  return keys;
}

const std::vector<std::string>& trainsimMoeFeatureKeys() {
  static const std::vector<std::string> keys = {
      "shared_experts", "shared_ffn_hidden_size", "shared_expert_gate", "dense_layers",    "expert_bias",
      "router_bias",    "router_groups",          "router_group_top_k", "activation_clamp"};
  return keys;
}

void readTrainsimFeatures(const ConfigNode& root, ModelSpec& model) {
  if (auto node = root.optionalChild("mla")) {
    node->allowKeys({"q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"});
    LatentAttentionSpec mla;
    mla.q_lora_rank = node->integerIn("q_lora_rank", 0, 0, kMaxHiddenSize);
    mla.kv_lora_rank = node->child("kv_lora_rank").asIntegerIn(1, kMaxHiddenSize);
    mla.qk_nope_head_dim = node->child("qk_nope_head_dim").asIntegerIn(0, kMaxHeadDim);
    mla.qk_rope_head_dim = node->child("qk_rope_head_dim").asIntegerIn(1, kMaxHeadDim);
    mla.v_head_dim = node->child("v_head_dim").asIntegerIn(1, kMaxHeadDim);
    model.mla = mla;
  }
  model.attention_bias = root.boolean("attention_bias", false);
  model.attention_sinks = root.boolean("attention_sinks", false);
  model.qk_norm = root.boolean("qk_norm", false);
  if (model.qk_norm && model.architecture != Architecture::kLlama) {
    root.child("qk_norm").fail("per-head query and key RMSNorms belong to llama-style models (architecture: llama)");
  }
  if (model.qk_norm && model.mla) {
    root.child("qk_norm").fail(
        "per-head query and key norms are not modelled with mla (latent attention normalizes its latents)");
  }
  model.mtp_layers = root.integerIn("mtp_layers", 0, 0, kMaxLayers);
  model.rope_attention_factor = root.numberIn("rope_attention_factor", 1.0, 0.01, 100.0);
  auto window = root.optionalChild("sliding_window");
  auto layers = root.optionalChild("sliding_window_layers");
  if (layers && !window) root.failMissing("sliding_window", "sliding_window_layers needs the window's length");
  if (window) {
    model.sliding_window = window->asIntegerIn(1, int64_t{1} << 24);
    if (layers) {
      model.sliding_window_layers = layerList(*layers, model.layers);
    } else {
      for (int64_t layer = 0; layer < model.layers; ++layer) model.sliding_window_layers.push_back(layer);
    }
  }
}

void readTrainsimMoeFeatures(const ConfigNode& moe, const ModelSpec& model, MoeSpec& spec) {
  spec.shared_experts = moe.integerIn("shared_experts", 0, 0, kMaxExperts);
  spec.shared_ffn_hidden_size = moe.integerIn("shared_ffn_hidden_size", spec.ffn_hidden_size, 1, kMaxFfnHiddenSize);
  spec.shared_expert_gate = moe.boolean("shared_expert_gate", false);
  if (auto list = moe.optionalChild("dense_layers")) spec.dense_layers = layerList(*list, model.layers);
  spec.expert_bias = moe.boolean("expert_bias", false);
  spec.router_bias = moe.boolean("router_bias", false);
  if (auto clamp = moe.optionalChild("activation_clamp")) spec.activation_clamp = clamp->asNonNegativeNumber();
  if (auto groups = moe.optionalChild("router_groups")) {
    spec.router_groups = groups->asIntegerIn(1, kMaxExperts);
    auto top = moe.optionalChild("router_group_top_k");
    spec.router_group_top_k = top ? top->asIntegerIn(1, kMaxExperts) : spec.router_groups;
    checkRouterGroups(*groups, top, spec);
  } else if (moe.has("router_group_top_k")) {
    moe.failMissing("router_groups", "router_group_top_k chooses among the router groups");
  }
}

bool isHuggingFaceFeatureKey(std::string_view key) {
  return std::find(kHfFeatureKeys.begin(), kHfFeatureKeys.end(), key) != kHfFeatureKeys.end();
}

std::string huggingFaceFeatureKeyList() {
  std::string text;
  for (std::size_t i = 0; i + 4 < kHfFeatureKeys.size(); ++i)
    text += std::string(i > 0 ? ", " : "") + std::string(kHfFeatureKeys[i]);
  return text;
}

void readHuggingFaceFeatures(const ConfigNode& root, const std::string& model_type, ModelSpec& model) {
  model.rope_attention_factor = yarnAttentionFactor(root);
  // Qwen3's attention normalizes every query and key head (Qwen3Attention.q_norm, k_norm: no
  // config key, always there).
  model.qk_norm = model_type == "qwen3" || model_type == "qwen3_moe";
  if (isDeepseekType(model_type)) readDeepseek(root, model);
  if (model_type == "gpt_oss") readGptOss(root, model);
  if (!model.moe) return;
  if (model_type == "qwen2_moe" || model_type == "qwen3_moe") readQwenSparseLayers(root, model);
  // Qwen2-MoE: one shared expert of this width, its output scaled by a sigmoid gate
  // (modeling_qwen2_moe.py, Qwen2MoeSparseMoeBlock.shared_expert and shared_expert_gate).
  if (auto shared = present(root, "shared_expert_intermediate_size")) {
    const int64_t width = shared->asIntegerIn(0, kMaxFfnHiddenSize);
    if (width > 0) {
      model.moe->shared_experts = 1;
      model.moe->shared_ffn_hidden_size = width;
      model.moe->shared_expert_gate = true;
    }
  }
}

}  // namespace trainsim::parallelism
