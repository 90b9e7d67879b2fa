// The transformer being trained, as the model file (or a Hugging Face config.json) describes it.
// Only what the FLOPs, memory and communication models need: sizes, not weights.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace trainsim::parallelism {

// gpt: LayerNorm, biases, a GELU MLP of two matrices. llama: RMSNorm, no biases, a gated
// (SwiGLU-style) MLP of three matrices. The MLP shape is what changes FLOPs and parameters.
enum class Architecture : uint8_t { kGpt, kLlama };
[[nodiscard]] std::string_view architectureName(Architecture architecture);

// Mixture of experts: every layer's MLP is replaced by `experts` MLPs of which each token uses `top_k`.
struct MoeSpec {
  int64_t experts = 0;
  int64_t top_k = 0;
  int64_t ffn_hidden_size = 0;  // one expert's MLP width; the model's ffn_hidden_size unless given
};

struct ModelSpec {
  std::string name;
  std::string source_file;  // where it was read from; empty for an inline mapping
  Architecture architecture = Architecture::kGpt;
  int64_t layers = 0;
  int64_t hidden_size = 0;
  int64_t ffn_hidden_size = 0;
  int64_t attention_heads = 0;
  int64_t kv_heads = 0;  // grouped-query attention: query heads share kv_heads key/value heads
  // hidden_size / attention_heads unless the model says otherwise (Gemma, Qwen3 use wider heads).
  int64_t head_dim = 0;
  int64_t vocab_size = 0;
  bool tied_embeddings = false;
  // Dropout probabilities (Megatron's --hidden-dropout and --attention-dropout). Unset means
  // the architecture's default: 0.1 for gpt (Megatron-LM's defaults, as GPT-2/3 trained), 0
  // for llama (attention_dropout 0.0 in the Hugging Face Llama configs; Megatron's Llama
  // examples pass --attention-dropout 0 --hidden-dropout 0). Only whether each is above 0
  // changes the cost: the dropout kernels, their bytes and their masks in memory.
  std::optional<double> hidden_dropout;
  std::optional<double> attention_dropout;
  std::optional<MoeSpec> moe;

  [[nodiscard]] bool isMoe() const { return moe.has_value(); }
  // Dropout on the residual stream and the embedding output (fused bias-dropout-add).
  [[nodiscard]] bool hasHiddenDropout() const { return hidden_dropout.value_or(defaultDropout()) > 0.0; }
  // Dropout on the attention probabilities (inside the flash-attention kernel, or its own kernel).
  [[nodiscard]] bool hasAttentionDropout() const { return attention_dropout.value_or(defaultDropout()) > 0.0; }
  [[nodiscard]] double defaultDropout() const { return architecture == Architecture::kGpt ? 0.1 : 0.0; }
  [[nodiscard]] int64_t queryDim() const { return attention_heads * head_dim; }
  [[nodiscard]] int64_t kvDim() const { return kv_heads * head_dim; }

  // Weights of one transformer layer: attention, MLP (all experts, plus router), norms, biases.
  [[nodiscard]] double layerParameterCount() const;
  // All weights: layers, final norm, input embedding, and the output projection unless tied.
  // Learned position embeddings (GPT-2/3) depend on the sequence length and are not included.
  // A double: sizes multiply to beyond int64 for absurd inputs, and callers do FLOP math in doubles.
  [[nodiscard]] double parameterCount() const;
  // Weights one token passes through: with MoE only top_k experts (and the router) count.
  [[nodiscard]] double activeParameterCount() const;
};

}  // namespace trainsim::parallelism
