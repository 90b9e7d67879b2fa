// The transformer being trained, as the model file (or a Hugging Face config.json) describes it.
// Only what the FLOPs, memory and communication models need: sizes, not weights.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trainsim::parallelism {

// gpt: LayerNorm, biases, a GELU MLP of two matrices. llama: RMSNorm, no biases, a gated
// (SwiGLU-style) MLP of three matrices. The MLP shape is what changes FLOPs and parameters.
enum class Architecture : uint8_t { kGpt, kLlama };
[[nodiscard]] std::string_view architectureName(Architecture architecture);

// Mixture of experts: the MLP of every layer but `dense_layers` is replaced by `experts` routed
// MLPs of which each token uses `top_k`, plus `shared_experts` MLPs every token passes through.
struct MoeSpec {
  int64_t experts = 0;
  int64_t top_k = 0;
  int64_t ffn_hidden_size = 0;  // one expert's MLP width; the model's ffn_hidden_size unless given
  // Shared experts (DeepSeekMoE, arXiv:2401.06066 section 3.2; DeepSeek-V2/V3's
  // n_shared_experts; Qwen2-MoE's one shared expert of shared_expert_intermediate_size):
  // MLPs of shared_ffn_hidden_size each, computed for every token beside the routed ones.
  int64_t shared_experts = 0;
  int64_t shared_ffn_hidden_size = 0;
  // Qwen2-MoE scales the shared expert's output by sigmoid(x W), W of hidden x 1
  // (transformers' modeling_qwen2_moe.py, Qwen2MoeSparseMoeBlock.shared_expert_gate).
  bool shared_expert_gate = false;
  // Layers (0-based, sorted) that keep a dense MLP of the model's ffn_hidden_size:
  // DeepSeek's first_k_dense_replace, Qwen-MoE's mlp_only_layers and decoder_sparse_step.
  std::vector<int64_t> dense_layers;
  // Biases on the experts' linear layers (GPT-OSS: gate_up_proj_bias, down_proj_bias) and on
  // the router (GPT-OSS's router bias; DeepSeek-V3's e_score_correction_bias). A bias add is
  // part of its GEMM's epilogue, except the experts' FC2 bias, which Megatron-Core adds after
  // the grouped GEMM, weighted by the router probabilities (FlopsOptions::moe_expert_bias_*).
  bool expert_bias = false;
  bool router_bias = false;
  // The limit of a clamped GLU in the experts (GPT-OSS's swiglu_limit, 7: the gate clamped
  // above, the linear half on both sides; Megatron-Core's activation_func_clamp_value), 0 for
  // none. It costs the clamp's kernels (FlopsOptions::moe_glu_clamp_*), not FLOPs.
  double activation_clamp = 0.0;
  // Group-limited routing (DeepSeek-V2 section 2.1.3 "device-limited routing", V3's n_group /
  // topk_group): experts in `router_groups` groups, each token choosing among the best
  // `router_group_top_k` groups. Recorded; it changes which experts a token reaches, not the
  // router's FLOPs (the hidden x experts scores) nor the expert work under balanced routing.
  int64_t router_groups = 1;
  int64_t router_group_top_k = 1;

  bool operator==(const MoeSpec&) const = default;
};

// Multi-head latent attention (DeepSeek-V2, arXiv:2405.04434 section 2.1; transformers'
// modeling_deepseek_v3.py DeepseekV3Attention): queries through a low-rank latent of
// q_lora_rank (0: one projection from hidden), keys and values through a shared latent of
// kv_lora_rank plus one decoupled RoPE key of qk_rope_head_dim shared by all heads; each head
// scores with qk_nope_head_dim + qk_rope_head_dim and reads values of v_head_dim.
struct LatentAttentionSpec {
  int64_t q_lora_rank = 0;
  int64_t kv_lora_rank = 0;
  int64_t qk_nope_head_dim = 0;
  int64_t qk_rope_head_dim = 0;
  int64_t v_head_dim = 0;

  [[nodiscard]] int64_t qkHeadDim() const { return qk_nope_head_dim + qk_rope_head_dim; }
  bool operator==(const LatentAttentionSpec&) const = default;
};

// What varies from one transformer layer of a model to another: its MLP (routed experts or,
// for dense layers, the dense MLP) and its attention span (sliding window or full).
struct LayerKind {
  bool moe = false;
  bool sliding_window = false;
  bool operator==(const LayerKind&) const = default;
};

// `count` layers of one kind.
struct LayerKindCount {
  LayerKind kind;
  int64_t count = 0;
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
  // Multi-head latent attention in place of (grouped-query) multi-head attention.
  std::optional<LatentAttentionSpec> mla;
  // Biases on the Q, K, V and output projections of a llama-style model (GPT-OSS; gpt models
  // always have them). Parameters only: a bias add is part of its GEMM's epilogue.
  bool attention_bias = false;
  // Attention sinks (GPT-OSS, transformers' modeling_gpt_oss.py: one learned logit per head
  // added to the softmax denominator): one parameter per head, FLOPs negligible (one more
  // term per query row of the softmax), so no op of its own.
  bool attention_sinks = false;
  // An RMSNorm over each query and key head before RoPE (Qwen3: transformers'
  // modeling_qwen3.py and modeling_qwen3_moe.py, `q_norm` and `k_norm` of head_dim weights
  // each; Megatron-Core's `qk_layernorm`): two norm kernels a layer on the queries and keys,
  // whose inputs the backward keeps.
  bool qk_norm = false;
  // The factor RoPE's cos and sin are scaled by (YaRN's attention factor, Hugging Face's
  // `attention_factor`, Megatron-Core's `mscale`: 0.1 ln(factor) + 1 for GPT-OSS's factor 32,
  // 1 where DeepSeek's mscale and mscale_all_dim cancel). Other than 1, Megatron-Core applies
  // RoPE in eager ops, not Transformer Engine's fused kernel, which takes no scale
  // (megatron/core/models/common/embeddings/rope_utils.py, apply_rotary_pos_emb):
  // FlopsOptions::unfused_rope_*.
  double rope_attention_factor = 1.0;
  // Sliding-window attention: layers in `sliding_window_layers` (0-based, sorted) attend over
  // the last `sliding_window` tokens only (GPT-OSS: window 128 on every other layer,
  // layer_types in its config). 0: none.
  int64_t sliding_window = 0;
  std::vector<int64_t> sliding_window_layers;
  // Multi-token prediction depth (DeepSeek-V3, arXiv:2412.19437 section 2.2): each MTP module
  // is a projection of [RMSNorm(h); RMSNorm(Emb(t_{i+k}))] from 2 hidden to hidden, one
  // transformer block and the shared output head and embedding, trained with the main model.
  int64_t mtp_layers = 0;

  [[nodiscard]] bool isMoe() const { return moe.has_value(); }
  // The kind of transformer layer `layer` (0-based); MTP blocks are layerKind(layers - 1)'s
  // MLP with full attention (DeepSeek-V3's MTP block is a MoE layer).
  [[nodiscard]] LayerKind layerKind(int64_t layer) const;
  [[nodiscard]] LayerKind mtpLayerKind() const;
  // The kinds of layers [first, first + count), each with how many there are, in the order
  // each kind first appears.
  [[nodiscard]] std::vector<LayerKindCount> layerKinds(int64_t first, int64_t count) const;
  // Every layer the same kind (no dense layers among MoE ones, no sliding-window layers among full ones).
  [[nodiscard]] bool uniformLayers() const;
  // Query and key width per head (q and k), value width per head, over all heads.
  [[nodiscard]] int64_t qkHeadDim() const { return mla ? mla->qkHeadDim() : head_dim; }
  [[nodiscard]] int64_t vHeadDim() const { return mla ? mla->v_head_dim : head_dim; }
  // Dropout on the residual stream and the embedding output (fused bias-dropout-add).
  [[nodiscard]] bool hasHiddenDropout() const { return hidden_dropout.value_or(defaultDropout()) > 0.0; }
  // Dropout on the attention probabilities (inside the flash-attention kernel, or its own kernel).
  [[nodiscard]] bool hasAttentionDropout() const { return attention_dropout.value_or(defaultDropout()) > 0.0; }
  [[nodiscard]] double defaultDropout() const { return architecture == Architecture::kGpt ? 0.1 : 0.0; }
  [[nodiscard]] int64_t queryDim() const { return attention_heads * head_dim; }
  [[nodiscard]] int64_t kvDim() const { return kv_heads * head_dim; }

  // Weights of one transformer layer: attention, MLP (all experts, plus router), norms, biases;
  // without a kind, the last layer's (a MoE layer in a MoE model).
  [[nodiscard]] double layerParameterCount() const;
  [[nodiscard]] double layerParameterCount(LayerKind kind) const;
  // The weights of the MTP modules besides the shared embedding and output head: per depth
  // its two RMSNorms, the 2h x h projection, one transformer block and the output head's norm.
  [[nodiscard]] double mtpParameterCount() const;
  // All weights: layers, MTP modules, final norm, input embedding, and the output projection
  // unless tied. Learned position embeddings (GPT-2/3) depend on the sequence length and are
  // not included. A double: sizes multiply to beyond int64 for absurd inputs, and callers do
  // FLOP math in doubles.
  [[nodiscard]] double parameterCount() const;
  // Weights one token passes through in the main model: with MoE only top_k routed experts
  // (the shared ones and the router) count; the MTP modules are left out, as DeepSeek-V3's
  // "37B activated" leaves them out (arXiv:2412.19437 section 1).
  [[nodiscard]] double activeParameterCount() const;
};

// The weights of one multi-head latent attention block (model.mla set) on one GPU of `tp`
// tensor-parallel ranks (1: the whole block). Modules as transformers' modeling_deepseek_v3.py
// (DeepseekV3Attention) has them: q_a_proj (hidden -> q_lora_rank), q_a_layernorm, q_b_proj
// (q_lora_rank -> heads x qk), or q_proj (hidden -> heads x qk) without q compression;
// kv_a_proj_with_mqa (hidden -> kv_lora_rank + qk_rope_head_dim), kv_a_layernorm, kv_b_proj
// (kv_lora_rank -> heads x (nope + v)); o_proj (heads x v -> hidden); attention_bias puts
// biases on q_a / q, kv_a and o. Sharded as Megatron-Core does (multi_latent_attention.py): the
// down projections, the latents' norms and the biases of the down and output projections
// whole on every rank, the up projections split by heads, the output projection by rows.
[[nodiscard]] double latentAttentionParameters(const ModelSpec& model, double tp);

}  // namespace trainsim::parallelism
