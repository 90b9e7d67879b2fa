#include "parallelism/model_spec.h"

#include <algorithm>

namespace trainsim::parallelism {
namespace {

double mlpParameters(Architecture architecture, double hidden, double ffn) {
  // gpt: up and down projections with biases; llama: gate, up and down projections, no biases.
  if (architecture == Architecture::kLlama) return 3.0 * hidden * ffn;
  return 2.0 * hidden * ffn + ffn + hidden;
}

// One routed expert: the MLP, with GPT-OSS's biases on its gate/up (2 x ffn) and down (hidden)
// projections where a llama-style expert has them (gpt experts have biases already).
double expertParameters(const ModelSpec& model, double hidden, double ffn) {
  double parameters = mlpParameters(model.architecture, hidden, ffn);
  if (model.moe->expert_bias && model.architecture == Architecture::kLlama) parameters += 2.0 * ffn + hidden;
  return parameters;
}

double attentionParameters(const ModelSpec& model) {
  const auto hidden = static_cast<double>(model.hidden_size);
  const auto query = static_cast<double>(model.queryDim());
  const auto kv = static_cast<double>(model.kvDim());
  double attention = 0.0;
  if (model.mla) {
    attention = latentAttentionParameters(model, 1.0);
  } else {
    attention = hidden * (2.0 * query + 2.0 * kv);  // Q, K, V in; output projection back to hidden
    if (model.architecture == Architecture::kGpt || model.attention_bias) {
      attention += query + 2.0 * kv + hidden;  // their biases
    }
  }
  if (model.attention_sinks) attention += static_cast<double>(model.attention_heads);  // one logit per head
  if (model.qk_norm) attention += 2.0 * static_cast<double>(model.head_dim);           // the q and k norms' weights
  return attention;
}

// Layer weights with the routed experts counted `routed_copies` times: every expert for the
// stored parameters, top_k experts for the ones a token touches.
double layerParameters(const ModelSpec& model, LayerKind kind, double routed_copies) {
  const auto hidden = static_cast<double>(model.hidden_size);
  const bool gpt = model.architecture == Architecture::kGpt;
  const double norms = gpt ? 4.0 * hidden : 2.0 * hidden;  // two LayerNorms (scale, shift) or RMSNorms (scale)

  double mlp = 0.0;
  if (model.moe && kind.moe) {
    const MoeSpec& moe = *model.moe;
    const auto experts = static_cast<double>(moe.experts);
    mlp = routed_copies * expertParameters(model, hidden, static_cast<double>(moe.ffn_hidden_size)) +
          hidden * experts;  // router
    if (moe.router_bias) mlp += experts;
    if (moe.shared_experts > 0) {
      mlp += static_cast<double>(moe.shared_experts) *
             mlpParameters(model.architecture, hidden, static_cast<double>(moe.shared_ffn_hidden_size));
      if (moe.shared_expert_gate) mlp += hidden;
    }
  } else {
    mlp = mlpParameters(model.architecture, hidden, static_cast<double>(model.ffn_hidden_size));
  }
  return attentionParameters(model) + norms + mlp;
}

double outsideLayers(const ModelSpec& model) {
  const auto hidden = static_cast<double>(model.hidden_size);
  const double embeddings = static_cast<double>(model.vocab_size) * hidden * (model.tied_embeddings ? 1.0 : 2.0);
  const double final_norm = model.architecture == Architecture::kGpt ? 2.0 * hidden : hidden;
  return embeddings + final_norm;
}

// Sum over layers of `per_layer(kind)`, kind by kind.
template <typename PerLayer>
double sumOverLayers(const ModelSpec& model, PerLayer per_layer) {
  double total = 0.0;
  for (const LayerKindCount& group : model.layerKinds(0, model.layers)) {
    total += static_cast<double>(group.count) * per_layer(group.kind);
  }
  return total;
}

bool listed(const std::vector<int64_t>& sorted, int64_t value) {
  return std::binary_search(sorted.begin(), sorted.end(), value);
}

}  // namespace

std::string_view architectureName(Architecture architecture) {
  switch (architecture) {
    case Architecture::kGpt: return "gpt";
    case Architecture::kLlama: return "llama";
  }
  return "unknown";
}

LayerKind ModelSpec::layerKind(int64_t layer) const {
  LayerKind kind;
  kind.moe = moe.has_value() && !listed(moe->dense_layers, layer);
  kind.sliding_window = sliding_window > 0 && listed(sliding_window_layers, layer);
  return kind;
}

LayerKind ModelSpec::mtpLayerKind() const {
  LayerKind kind = layerKind(layers - 1);
  kind.sliding_window = false;
  return kind;
}

std::vector<LayerKindCount> ModelSpec::layerKinds(int64_t first, int64_t count) const {
  std::vector<LayerKindCount> kinds;
  for (int64_t layer = first; layer < first + count; ++layer) {
    const LayerKind kind = layerKind(layer);
    auto same = std::find_if(kinds.begin(), kinds.end(), [&](const LayerKindCount& k) { return k.kind == kind; });
    if (same == kinds.end()) {
      kinds.push_back({kind, 1});
    } else {
      ++same->count;
    }
  }
  return kinds;
}

bool ModelSpec::uniformLayers() const {
  const bool mixed_mlp = moe && !moe->dense_layers.empty();
  const bool mixed_attention =
      sliding_window > 0 && !sliding_window_layers.empty() && std::ssize(sliding_window_layers) < layers;
  return !mixed_mlp && !mixed_attention;
}

double ModelSpec::layerParameterCount() const { return layerParameterCount(layerKind(layers - 1)); }

double ModelSpec::layerParameterCount(LayerKind kind) const {
  return layerParameters(*this, kind, moe ? static_cast<double>(moe->experts) : 1.0);
}

double ModelSpec::mtpParameterCount() const {
  if (mtp_layers == 0) return 0.0;
  const auto hidden = static_cast<double>(hidden_size);
  // DeepSeek-V3 section 2.2: M_k of d x 2d; the RMSNorms of h and of the embedding (enorm,
  // hnorm in DeepSeek's checkpoint) and the shared head's norm.
  const double per_depth = layerParameterCount(mtpLayerKind()) + 2.0 * hidden * hidden + 3.0 * hidden;
  return static_cast<double>(mtp_layers) * per_depth;
}

double ModelSpec::parameterCount() const {
  if (uniformLayers() && mtp_layers == 0) {
    return static_cast<double>(layers) * layerParameterCount() + outsideLayers(*this);
  }
  return sumOverLayers(*this, [this](LayerKind kind) { return layerParameterCount(kind); }) + mtpParameterCount() +
         outsideLayers(*this);
}

double ModelSpec::activeParameterCount() const {
  const double copies = moe ? static_cast<double>(moe->top_k) : 1.0;
  if (uniformLayers()) {
    const double per_layer = layerParameters(*this, layerKind(layers - 1), copies);
    return static_cast<double>(layers) * per_layer + outsideLayers(*this);
  }
  return sumOverLayers(*this, [&](LayerKind kind) { return layerParameters(*this, kind, copies); }) +
         outsideLayers(*this);
}

double latentAttentionParameters(const ModelSpec& model, double tp) {
  const LatentAttentionSpec& mla = *model.mla;
  const auto hidden = static_cast<double>(model.hidden_size);
  const auto heads = static_cast<double>(model.attention_heads);
  const auto q_rank = static_cast<double>(mla.q_lora_rank);
  const auto kv_rank = static_cast<double>(mla.kv_lora_rank);
  const auto rope = static_cast<double>(mla.qk_rope_head_dim);
  const double qk = heads * static_cast<double>(mla.qkHeadDim());
  double parameters = 0.0;
  if (mla.q_lora_rank > 0) {
    parameters += hidden * q_rank + q_rank + q_rank * qk / tp;
  } else {
    parameters += hidden * qk / tp;
  }
  parameters += hidden * (kv_rank + rope) + kv_rank;
  parameters += kv_rank * heads * static_cast<double>(mla.qk_nope_head_dim + mla.v_head_dim) / tp;
  parameters += heads * static_cast<double>(mla.v_head_dim) * hidden / tp;
  if (model.attention_bias) parameters += (mla.q_lora_rank > 0 ? q_rank : qk / tp) + kv_rank + rope + hidden;
  return parameters;
}

}  // namespace trainsim::parallelism
