#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "parallelism/workload_builder.h"

namespace trainsim::parallelism::detail {

double WorkloadBuilder::keysOf(LayerKind kind) const {
  const auto seq = static_cast<double>(shard_.seq_len);
  if (!kind.sliding_window) return seq;
  return std::min(seq, static_cast<double>(model_.sliding_window));
}

// Scores with qk_dim per head, context with v_dim (equal but for multi-head latent attention:
// DeepSeek-V3 scores with 128 + 64 and reads values of 128).
void WorkloadBuilder::coreAttention(double heads, double queries, double keys, double qk_dim, double v_dim) {
  const double b = static_cast<double>(shard_.micro_batch_size);
  const double batch = b * heads;  // independent (sequence, head) products
  const auto seq = static_cast<double>(shard_.seq_len);
  if (options_.fused_attention) {
    // scores + context
    const double counted = qk_dim == v_dim
                               ? 2.0 * (2.0 * batch * queries * keys * qk_dim)
                               : 2.0 * batch * queries * keys * qk_dim + 2.0 * batch * queries * keys * v_dim;
    // A causal kernel skips the blocks above the diagonal. Over a sliding window of w < s
    // keys, query i scores min(i + 1, w) of them: a share 1 - w / (2 s) of the s x w counted,
    // which tends to all of them for w << s (FlashAttention's local-window masking skips the
    // blocks outside the window; Dao 2023, section 3.1.1).
    const double executed_share =
        keys >= seq ? options_.causal_work_fraction : 1.0 - (1.0 - options_.causal_work_fraction) * keys / seq;
    const double executed = counted * executed_share;
    const double lse = units::kFp32Bytes * batch * queries;  // fp32 logsumexp per query and head
    Op op = makeOp("flash_attention", OpKind::kAttention, true, true);
    op.op_checkpoint_rerun = 0.0;  // SDPA's output is saved (Op::op_checkpoint_rerun)
    if (model_.mla) {
      // Q and K of qk_dim, V and O of v_dim per head (Megatron-Core's MLA hands the core
      // attention whole per-head keys and values, multi_latent_attention.py).
      const double q_bytes = e_ * tokens() * heads * qk_dim;
      const double k_bytes = e_ * shard_.keyTokens() * heads * qk_dim;
      const double v_bytes = e_ * shard_.keyTokens() * heads * v_dim;
      const double o_bytes = e_ * tokens() * heads * v_dim;
      const double all = q_bytes + k_bytes + v_bytes + o_bytes;
      op.forward = {counted, executed, all + lse};
      op.backward = {2.0 * counted, executed * options_.flash_backward_matmuls_over_forward, 2.0 * all + lse};
    } else {
      const double kv_local = static_cast<double>(model_.kvDim()) / tp_;
      const double q_local = static_cast<double>(model_.queryDim()) / tp_;
      const double q_bytes = e_ * tokens() * q_local;
      const double kv_bytes = e_ * shard_.keyTokens() * kv_local;
      op.forward = {counted, executed, 2.0 * q_bytes + 2.0 * kv_bytes + lse};  // read Q, K, V; write O
      // Read Q, K, V, O, dO and the logsumexp; write dQ, dK, dV.
      op.backward = {2.0 * counted, executed * options_.flash_backward_matmuls_over_forward,
                     4.0 * q_bytes + 4.0 * kv_bytes + lse};
    }
    if (attention_dropout_) {
      // The dropout work, as the FLOP-equivalent of a slower kernel (FlopsOptions).
      op.forward.executed_flops /= options_.flash_dropout_forward_throughput;
      op.backward.executed_flops /= options_.flash_dropout_backward_throughput;
    }
    op.forward_gemms = {shape(queries, keys, qk_dim, batch), shape(queries, v_dim, keys, batch)};
    op.backward_gemms = {shape(queries, keys, qk_dim, batch),   // S = Q K^T again
                         shape(keys, v_dim, queries, batch),    // dV = P^T dO
                         shape(queries, keys, v_dim, batch),    // dP = dO V^T
                         shape(queries, qk_dim, keys, batch),   // dQ = dS K
                         shape(keys, qk_dim, queries, batch)};  // dK = dS^T Q
    workload_.ops.push_back(std::move(op));
    return;
  }
  const double scores = batch * queries * keys;
  activationMatmul("attention_scores", queries, keys, qk_dim, batch);
  // Scale, causal mask and softmax in one kernel (Megatron's FusedScaleMaskSoftmax): reads
  // the scores, writes the probabilities; backward reads probabilities and their gradient.
  elementwise("attention_softmax", OpKind::kElementwise, scores, options_.softmax_flops_per_element, 2.0 * e_, 3.0 * e_,
              -1.0, true);
  if (attention_dropout_) {
    const double mask = options_.dropout_mask_bytes;
    elementwise("attention_dropout", OpKind::kElementwise, scores, options_.dropout_flops_per_element, 2.0 * e_ + mask,
                2.0 * e_ + mask, -1.0, true);
  }
  activationMatmul("attention_context", queries, v_dim, keys, batch);
}

void WorkloadBuilder::attentionBlock(LayerKind kind) {
  if (model_.mla) {
    latentAttentionBlock(kind);
    return;
  }
  const double t = tokens();
  const double heads = static_cast<double>(model_.attention_heads) / tp_;
  const double query = static_cast<double>(model_.queryDim());
  const double kv = static_cast<double>(model_.kvDim());
  const double head_dim = static_cast<double>(model_.head_dim);
  norm("input_norm", replicatedTokens());
  gemm("qkv_projection", t, (query + 2.0 * kv) / tp_, hidden_, 1.0, WeightGemm::kTransformerEngineGatheredInput);
  // Matmuls 1-3 of the layer (wq, wk, wv): the key projection is the second (Op::op_checkpoint_rerun).
  workload_.ops.back().op_checkpoint_rerun = kv / (query + 2.0 * kv);
  const auto qkv = overlapGemms(TpOverlapGemm::kQkvFprop, TpOverlapGemm::kQkvDgrad, TpOverlapGemm::kQkvWgrad);
  if (model_.qk_norm) {
    normOver("q_norm", t * query / tp_);
    normOver("k_norm", t * kv / tp_);
  }
  if (model_.architecture == Architecture::kLlama) {
    // Rotary position embedding on the query and key heads of this rank.
    rotaryEmbedding(t * (query + kv) / tp_);
  }
  const double queries = static_cast<double>(shard_.seq_len) / static_cast<double>(shard_.cp);
  coreAttention(heads, queries, keysOf(kind), head_dim, head_dim);
  gemm("attention_output_projection", t, hidden_, query / tp_, 1.0, WeightGemm::kTransformerEngineGatheredGradient);
  // Matmul 4 (wo) reruns: 1, the default.
  const auto projection = overlapGemms(TpOverlapGemm::kProjFprop, TpOverlapGemm::kProjDgrad);
  ringExchangeReduction("attention_output_ring_reduction", TpOverlapGemm::kProjFprop, projection);
  residual("attention_residual", replicatedTokens());
  tensorParallelBlock("attention_input", "attention_output", kAttentionGemms, qkv, projection);
  contextParallelExchanges(2.0 * t * (kv / tp_) * e_);
}

// Ring attention (Megatron-Core / Transformer Engine context parallelism): each of the cp - 1
// steps passes this rank's K and V chunk (`kv_chunk` bytes) to the next rank; backward passes
// K, V and the partial dK, dV around the ring. Each exchange runs beside an attention step,
// except the dK, dV hop that takes the finished sum back to the rank owning the chunk: it
// follows the last step, and the input-gradient GEMM of QKV waits for it.
void WorkloadBuilder::contextParallelExchanges(double kv_chunk) {
  if (shard_.cp <= 1) return;
  const int64_t steps = shard_.cp - 1;
  ringExchange("ring_attention_kv", false, kv_chunk, steps);
  ringExchange("ring_attention_kv", true, kv_chunk, steps);
  ringExchange("ring_attention_dkv", true, kv_chunk, steps);
  communicate("ring_attention_dkv_return", perf::CollectiveOp::kSendRecv, ParallelGroup::kContext, true, kv_chunk);
}

// Multi-head latent attention (DeepSeek-V2, arXiv:2405.04434 section 2.1, equations 9-19;
// transformers' modeling_deepseek_v3.py DeepseekV3Attention) as Megatron-Core runs it
// (megatron/core/transformer/multi_latent_attention.py, MLASelfAttention): the down
// projections to the latents (q_a, kv_a with the decoupled RoPE key) hold their weights
// whole on every tensor-parallel rank ("duplicated") and run on the rank's tokens, which are
// the sequence shard with sequence parallelism; the latents are then gathered over tp (instead
// of the block input) for the up projections (q_b, kv_b), column-parallel by heads; the
// output projection is row-parallel as in standard attention.
void WorkloadBuilder::latentAttentionBlock(LayerKind kind) {
  const LatentAttentionSpec& mla = *model_.mla;
  const double t = tokens();
  const double shard_tokens = replicatedTokens();
  const double heads = static_cast<double>(model_.attention_heads) / tp_;
  const auto q_rank = static_cast<double>(mla.q_lora_rank);
  const auto kv_rank = static_cast<double>(mla.kv_lora_rank);
  const auto rope = static_cast<double>(mla.qk_rope_head_dim);
  const auto qk = static_cast<double>(mla.qkHeadDim());
  const auto v = static_cast<double>(mla.v_head_dim);
  const auto nope = static_cast<double>(mla.qk_nope_head_dim);
  const double rms = options_.rms_norm_flops_per_element;
  // Latent attention's input norm is a module of its own (recompute module "layernorm"); the
  // up projections with the latent norms fused into them (Transformer Engine's
  // LayerNormColumnParallelLinear in the MLA spec) and RoPE are "mla_up_proj"
  // (multi_latent_attention.py, qkv_up_proj_and_rope_apply).
  norm("input_norm", replicatedTokens());
  recomputeModule(recompute_module::kLayerNorm, opCount() - 1, communicationCount());
  if (mla.q_lora_rank > 0) {
    gemm("q_down_projection", shard_tokens, q_rank, hidden_);
    const std::size_t up = opCount();
    elementwise("q_latent_norm", OpKind::kNormalization, t * q_rank, rms, 2.0 * e_, 3.0 * e_);
    gemm("q_up_projection", t, heads * qk, q_rank, 1.0, WeightGemm::kTransformerEngineGatheredInput);
    recomputeModule(recompute_module::kLatentUpProjection, up, communicationCount());
  } else {
    const std::size_t up = opCount();
    gemm("q_projection", t, heads * qk, hidden_, 1.0, WeightGemm::kTransformerEngineGatheredInput);
    recomputeModule(recompute_module::kLatentUpProjection, up, communicationCount());
  }
  gemm("kv_down_projection", shard_tokens, kv_rank + rope, hidden_);
  const std::size_t up = opCount();
  elementwise("kv_latent_norm", OpKind::kNormalization, t * kv_rank, rms, 2.0 * e_, 3.0 * e_);
  gemm("kv_up_projection", t, heads * (nope + v), kv_rank, 1.0, WeightGemm::kTransformerEngineGatheredInput);
  // RoPE on each head's rope part of the query and on the one shared rope key.
  rotaryEmbedding(t * (heads * rope + rope));
  recomputeModule(recompute_module::kLatentUpProjection, up, communicationCount());
  const double queries = static_cast<double>(shard_.seq_len) / static_cast<double>(shard_.cp);
  coreAttention(heads, queries, keysOf(kind), qk, v);
  gemm("attention_output_projection", t, hidden_, heads * v, 1.0, WeightGemm::kTransformerEngineGatheredGradient);
  const auto projection = overlapGemms(TpOverlapGemm::kProjFprop, TpOverlapGemm::kProjDgrad);
  ringExchangeReduction("attention_output_ring_reduction", TpOverlapGemm::kProjFprop, projection);
  residual("attention_residual", replicatedTokens());
  // What is gathered: the q latent (or the block input without q compression) and the kv latent with the rope key.
  const double latent_width = (mla.q_lora_rank > 0 ? q_rank : hidden_) + kv_rank + rope;
  tensorParallelBlock("attention_input", "attention_output", kAttentionGemms, std::nullopt, projection, latent_width);
  // With sequence parallelism the up projections gather the latents: rerun with them.
  for (Communication& comm : workload_.communications) {
    if (comm.name == "attention_input_all_gather") comm.recompute_module = recompute_module::kLatentUpProjection;
  }
  contextParallelExchanges(t * heads * (qk + v) * e_);
}

void WorkloadBuilder::denseMlp(double ffn) {
  const double t = tokens();
  const double width = ffn / tp_;
  // Megatron-Core's MLP module (recompute module "mlp"): the norm fused into fc1, up to fc2
  // and its collectives; the residual add after it is the layer's.
  const std::size_t first_op = opCount();
  const std::size_t first_communication = communicationCount();
  norm("mlp_norm", replicatedTokens());
  std::optional<std::size_t> fc1;  // the GEMM beside the block input's collectives (the gate's when unfused)
  if (model_.architecture == Architecture::kGpt) {
    gemm("mlp_fc1", t, width, hidden_, 1.0, WeightGemm::kTransformerEngineGatheredInput);
    workload_.ops.back().op_checkpoint_rerun = 0.0;  // matmul 5 is saved; 6 (fc2) reruns
    fc1 = overlapFc1();
    // Bias + GELU fused (Megatron's bias_gelu_impl): reads the fc1 output, writes its GELU.
    elementwise("mlp_gelu", OpKind::kElementwise, t * width, options_.gelu_flops_per_element, 2.0 * e_, 3.0 * e_);
  } else {
    if (options_.fuse_gate_up) {
      gemm("mlp_gate_up", t, 2.0 * width, hidden_, 1.0, WeightGemm::kTransformerEngineGatheredInput);
      workload_.ops.back().op_checkpoint_rerun = 0.5;  // w1 (matmul 5) saved, w3 (6) rerun
      fc1 = overlapFc1();
    } else {
      gemm("mlp_gate", t, width, hidden_, 1.0, WeightGemm::kTransformerEngineGatheredInput);
      workload_.ops.back().op_checkpoint_rerun = 0.0;  // w1, matmul 5: saved
      fc1 = overlapFc1();
      gemm("mlp_up", t, width, hidden_, 1.0, WeightGemm::kTransformerEngineGatheredInput);
      (void)overlapFc1();
    }
    swiglu("mlp_swiglu", t * width);
  }
  gemm("mlp_fc2", t, hidden_, width, 1.0, WeightGemm::kTransformerEngineGatheredGradient);
  // gpt: matmul 6, rerun; llama: w2, matmul 7, saved.
  if (model_.architecture != Architecture::kGpt) workload_.ops.back().op_checkpoint_rerun = 0.0;
  const auto fc2 = overlapGemms(TpOverlapGemm::kFc2Fprop, TpOverlapGemm::kFc2Dgrad);
  ringExchangeReduction("mlp_output_ring_reduction", TpOverlapGemm::kFc2Fprop, fc2);
  recomputeModule(recompute_module::kDenseMlp, first_op, first_communication);
  residual("mlp_residual", replicatedTokens());
  const std::size_t block_communication = communicationCount();
  // The block's output feeds only the next layer: selective_op does not rerun its all-reduce.
  tensorParallelBlock("mlp_input", "mlp_output", kMlpGemms, fc1, fc2, 0.0, false);
  recomputeModule(recompute_module::kDenseMlp, opCount(), block_communication);
}

// Mixture of experts (Megatron-Core MoELayer with the all-to-all token dispatcher,
// megatron/core/transformer/moe/token_dispatcher.py MoEAlltoAllTokenDispatcher): each rank
// routes its tokens (tokens / tp with sequence parallelism, which Megatron-LM requires for MoE
// with tp > 1; a plan without it is modelled as if it had it), permutes them by expert,
// exchanges them over the ep group, all-gathers them over the expert-tensor-parallel group
// (etp ranks, tp unless the plan sets etp), runs its experts / ep local experts as grouped
// GEMMs of width / etp, and sends the results back the same way. The rank modelled is the
// busiest: it receives and computes moe_token_factor times the mean token slots
// (TrainingSpec::moe_load_imbalance, capped by moe_capacity_factor; 1 = balanced, the aim of
// the auxiliary load-balancing loss).
void WorkloadBuilder::moeBlock() {
  const MoeSpec& moe = *model_.moe;
  const double top_k = static_cast<double>(moe.top_k);
  const double experts = static_cast<double>(moe.experts);
  const double local_experts = experts / static_cast<double>(shard_.ep);
  const auto etp = static_cast<double>(shard_.etp);
  const double routed = tokens() / tp_;  // tokens this rank routes
  const double load = shard_.moe_token_factor;
  // Token slots this rank's experts process (after the etp all-gather).
  const double expert_tokens = routed * top_k * etp * load;
  const double per_expert = expert_tokens / local_experts;
  const double width = static_cast<double>(moe.ffn_hidden_size) / etp;

  norm("mlp_norm", replicatedTokens());
  recomputeModule(recompute_module::kLayerNorm, opCount() - 1, communicationCount());
  gemm("moe_router", routed, experts, hidden_, 1.0, WeightGemm::kSixteenBit);
  // Softmax and top-k over the expert scores (fp32).
  elementwise("moe_router_topk", OpKind::kElementwise, routed * experts, options_.softmax_flops_per_element,
              2.0 * units::kFp32Bytes, 3.0 * units::kFp32Bytes);
  // The many small kernels of the eager routing path (scores, top-k, load-balancing loss,
  // permutation indices) that these ops stand for.
  workload_.ops.back().extra_kernels_forward = options_.moe_routing_extra_kernels_forward;
  workload_.ops.back().extra_kernels_backward = options_.moe_routing_extra_kernels_backward;
  // Permute: copy every token once per chosen expert, grouped by expert.
  const double slot_bytes = routed * top_k * hidden_ * e_ * load * options_.moe_dispatch_byte_scale;
  elementwise("moe_permute", OpKind::kElementwise, routed * top_k * hidden_, 0.0, 2.0 * e_, 2.0 * e_, 0.0);
  if (shard_.ep > 1) {
    communicate("moe_dispatch_all_to_all", perf::CollectiveOp::kAllToAll, ParallelGroup::kExpert, false, slot_bytes);
    communicate("moe_combine_all_to_all", perf::CollectiveOp::kAllToAll, ParallelGroup::kExpert, false, slot_bytes);
    communicate("moe_combine_grad_all_to_all", perf::CollectiveOp::kAllToAll, ParallelGroup::kExpert, true, slot_bytes);
    communicate("moe_dispatch_grad_all_to_all", perf::CollectiveOp::kAllToAll, ParallelGroup::kExpert, true,
                slot_bytes);
  }
  if (shard_.etp > 1) {
    const double gathered = expert_tokens * hidden_ * e_;
    const auto group = ParallelGroup::kExpertTensor;
    communicate("moe_tokens_all_gather", perf::CollectiveOp::kAllGather, group, false, gathered);
    communicate("moe_output_reduce_scatter", perf::CollectiveOp::kReduceScatter, group, false, gathered);
    communicate("moe_output_grad_all_gather", perf::CollectiveOp::kAllGather, group, true, gathered);
    communicate("moe_tokens_grad_reduce_scatter", perf::CollectiveOp::kReduceScatter, group, true, gathered);
  }
  // The grouped GEMMs, each a library call per local expert beyond the one counted
  // (FlopsOptions::moe_grouped_gemm_library_calls_per_expert), twice in the backward; the
  // fused grouped MLP's are kernels of its own.
  auto expertGemm = [&](std::string name, double n, double k) {
    gemm(std::move(name), per_expert, n, k, local_experts);
    const double per_expert_calls =
        options_.fused_expert_mlp ? 0.0 : options_.moe_grouped_gemm_library_calls_per_expert;
    const double calls = (local_experts - 1.0) * per_expert_calls;
    workload_.ops.back().library_calls_forward = calls;
    workload_.ops.back().library_calls_backward = 2.0 * calls;
  };
  // Dropless dispatch reads the per-expert token counts on the host before the dispatch
  // (Megatron-Core's token dispatchers; DeepEP's and HybridEP's default modes): the host
  // waits for the GPU there, so it cannot launch the experts ahead of it.
  const std::size_t first_expert_op = workload_.ops.size();
  const bool sorts = options_.moe_sort_by_local_expert && local_experts > 1.0;
  if (sorts) sortByLocalExpert("moe_sort_by_local_expert", expert_tokens);
  if (model_.architecture == Architecture::kGpt) {
    expertGemm("moe_expert_fc1", width, hidden_);
    if (!options_.fused_expert_mlp) {
      elementwise("moe_expert_gelu", OpKind::kElementwise, expert_tokens * width, options_.gelu_flops_per_element,
                  2.0 * e_, 3.0 * e_);
      recomputeModule(recompute_module::kMoeActivation, opCount() - 1, communicationCount());
    }
  } else {
    if (options_.fuse_gate_up) {
      expertGemm("moe_expert_gate_up", 2.0 * width, hidden_);
    } else {
      expertGemm("moe_expert_gate", width, hidden_);
      expertGemm("moe_expert_up", width, hidden_);
    }
    // Transformer Engine's fused grouped MLP runs the activation (and its clamp) in FC1's
    // epilogue.
    if (!options_.fused_expert_mlp) {
      const std::size_t activation = opCount();
      if (moe.activation_clamp > 0.0) gluClamp("moe_expert_glu_clamp", expert_tokens * width);
      swiglu("moe_expert_swiglu", expert_tokens * width);
      if (options_.fused_pointwise) weightedActivationGradient(expert_tokens * width);
      recomputeModule(recompute_module::kMoeActivation, activation, communicationCount());
    }
  }
  expertGemm("moe_expert_fc2", hidden_, width);
  if (moe.expert_bias && !options_.fused_expert_mlp) expertBiasLoop(expert_tokens, local_experts);
  if (sorts) sortByLocalExpert("moe_unsort_by_local_expert", expert_tokens);
  workload_.ops[first_expert_op].host_sync_share = options_.moe_dispatch_host_sync_share;
  // Unpermute: sum each token's top_k expert outputs (the router probabilities are applied in
  // the experts' activation: Megatron-Core's weighted SwiGLU).
  elementwise("moe_unpermute", OpKind::kElementwise, routed * top_k * hidden_, options_.moe_combine_flops_per_element,
              e_ + e_ / top_k, 2.0 * e_ + e_ / top_k);
  if (moe.shared_experts > 0) sharedExperts();
  residual("mlp_residual", replicatedTokens());
}

// Shared experts (DeepSeekMoE, arXiv:2401.06066 section 3.2): an MLP of shared_experts x
// shared_ffn_hidden_size that every token passes through beside the routed experts, as
// Megatron-Core runs it (megatron/core/transformer/moe/shared_experts.py, SharedExpertMLP: one
// MLP of the summed width, tensor-parallel like a dense MLP, gathering its input over tp with
// sequence parallelism); Qwen2-MoE also scales its output by a sigmoid gate of hidden x 1.
// Its output is added to the routed experts' combined output.
void WorkloadBuilder::sharedExperts() {
  const MoeSpec& moe = *model_.moe;
  const double t = tokens();
  const std::size_t first_op = opCount();
  const std::size_t first_communication = communicationCount();
  const double width = static_cast<double>(moe.shared_experts * moe.shared_ffn_hidden_size) / tp_;
  if (model_.architecture == Architecture::kGpt) {
    gemm("shared_expert_fc1", t, width, hidden_, 1.0, WeightGemm::kTransformerEngineGatheredInput);
    elementwise("shared_expert_gelu", OpKind::kElementwise, t * width, options_.gelu_flops_per_element, 2.0 * e_,
                3.0 * e_);
  } else {
    gemm("shared_expert_gate_up", t, 2.0 * width, hidden_, 1.0, WeightGemm::kTransformerEngineGatheredInput);
    swiglu("shared_expert_swiglu", t * width);
  }
  gemm("shared_expert_fc2", t, hidden_, width, 1.0, WeightGemm::kTransformerEngineGatheredGradient);
  if (moe.shared_expert_gate) {
    gemm("shared_expert_gate", replicatedTokens(), 1.0, hidden_, 1.0, WeightGemm::kSixteenBit);
  }
  // Megatron-Core's SharedExpertMLP (recompute module "shared_experts"); the add to the routed
  // output is the MoE layer's.
  recomputeModule(recompute_module::kSharedExperts, first_op, first_communication);
  // The shared output added to the routed one (scaled by the gate where there is one).
  elementwise("shared_expert_add", OpKind::kElementwise, replicatedTokens() * hidden_,
              options_.moe_combine_flops_per_element, 3.0 * e_, 0.0, 0.0);
  const std::size_t block_communication = communicationCount();
  tensorParallelBlock("shared_expert_input", "shared_expert_output", kMlpGemms);
  recomputeModule(recompute_module::kSharedExperts, opCount(), block_communication);
}

// The input of a multi-token prediction module (DeepSeek-V3, arXiv:2412.19437 section 2.2,
// equation 21): the shared embedding of the tokens one further ahead, RMSNorm of it and of the
// previous depth's output, and the projection M_k of their concatenation (2 hidden) to hidden.
// As Megatron-Core runs it (megatron/core/transformer/multi_token_prediction.py: eh_proj a
// column-parallel linear, its output gathered over tp): the lookup is vocabulary-parallel like
// the main embedding's, with the same dense table gradient per micro-batch.
void WorkloadBuilder::multiTokenPredictionInput() {
  const double t = tokens();
  const double elements = t * hidden_;
  elementwise("mtp_token_embedding", OpKind::kEmbedding, elements, 0.0, 2.0 * e_ + options_.token_id_bytes / hidden_,
              2.0 * e_, 1.0);
  const double table = static_cast<double>(model_.vocab_size) / tp_ * hidden_;
  elementwise("mtp_embedding_table_gradient", OpKind::kEmbedding, table, 0.0, 0.0, 2.0 * e_ + 2.0 * main_grad_, 0.0);
  norm("mtp_embedding_norm", replicatedTokens());
  norm("mtp_hidden_norm", replicatedTokens());
  gemm("mtp_projection", t, hidden_ / tp_, 2.0 * hidden_, 1.0, WeightGemm::kTransformerEngineGatheredInput);
  if (shard_.tp > 1) {
    const double bytes = elements * e_;
    const auto group = ParallelGroup::kTensor;
    communicate("mtp_embedding_all_reduce", perf::CollectiveOp::kAllReduce, group, false, bytes);
    communicate("mtp_projection_output_all_gather", perf::CollectiveOp::kAllGather, group, false, bytes);
    communicate("mtp_projection_input_grad_all_reduce", perf::CollectiveOp::kAllReduce, group, true, 2.0 * bytes);
  }
}

}  // namespace trainsim::parallelism::detail
