#include "parallelism/model_spec.h"

namespace trainsim::parallelism {
namespace {

double mlpParameters(Architecture architecture, double hidden, double ffn) {
  // gpt: up and down projections with biases; llama: gate, up and down projections, no biases.
  if (architecture == Architecture::kLlama) return 3.0 * hidden * ffn;
  return 2.0 * hidden * ffn + ffn + hidden;
}

// Layer weights with the MLP counted `mlp_copies` times: every expert for the stored
// parameters, top_k experts for the ones a token touches.
double layerParameters(const ModelSpec& model, double mlp_copies) {
  const auto hidden = static_cast<double>(model.hidden_size);
  const auto query = static_cast<double>(model.queryDim());
  const auto kv = static_cast<double>(model.kvDim());
  const bool gpt = model.architecture == Architecture::kGpt;

  double attention = hidden * (2.0 * query + 2.0 * kv);    // Q, K, V in; output projection back to hidden
  if (gpt) attention += query + 2.0 * kv + hidden;         // their biases
  const double norms = gpt ? 4.0 * hidden : 2.0 * hidden;  // two LayerNorms (scale, shift) or RMSNorms (scale)

  double mlp = 0.0;
  if (model.moe) {
    mlp = mlp_copies * mlpParameters(model.architecture, hidden, static_cast<double>(model.moe->ffn_hidden_size)) +
          hidden * static_cast<double>(model.moe->experts);  // router
  } else {
    mlp = mlpParameters(model.architecture, hidden, static_cast<double>(model.ffn_hidden_size));
  }
  return attention + norms + mlp;
}

double outsideLayers(const ModelSpec& model) {
  const auto hidden = static_cast<double>(model.hidden_size);
  const double embeddings = static_cast<double>(model.vocab_size) * hidden * (model.tied_embeddings ? 1.0 : 2.0);
  const double final_norm = model.architecture == Architecture::kGpt ? 2.0 * hidden : hidden;
  return embeddings + final_norm;
}

}  // namespace

std::string_view architectureName(Architecture architecture) {
  switch (architecture) {
    case Architecture::kGpt: return "gpt";
    case Architecture::kLlama: return "llama";
  }
  return "unknown";
}

double ModelSpec::layerParameterCount() const {
  return layerParameters(*this, moe ? static_cast<double>(moe->experts) : 1.0);
}

double ModelSpec::parameterCount() const {
  return static_cast<double>(layers) * layerParameterCount() + outsideLayers(*this);
}

double ModelSpec::activeParameterCount() const {
  const double per_layer = layerParameters(*this, moe ? static_cast<double>(moe->top_k) : 1.0);
  return static_cast<double>(layers) * per_layer + outsideLayers(*this);
}

}  // namespace trainsim::parallelism
