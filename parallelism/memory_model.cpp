#include "parallelism/memory_model.h"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "base/units.h"
#include "parallelism/pipeline_schedule.h"

namespace trainsim::parallelism {
namespace {

using topology::Precision;

// Flash attention's logsumexp and the MoE router's probabilities are kept in fp32.
using units::kFp32Bytes;

// Mixture-of-experts and dense MLP weights of one layer on one GPU.
double mlpWeights(Architecture architecture, double hidden, double ffn, double tp) {
  // gpt: fc1 (with its bias) split by columns, fc2 split by rows with its bias replicated;
  // llama: gate, up and down projections, no biases.
  if (architecture == Architecture::kLlama) return 3.0 * hidden * ffn / tp;
  return (2.0 * hidden * ffn + ffn) / tp + hidden;
}

struct LayerParameters {
  double dense = 0.0;
  double expert = 0.0;
};

// One transformer layer of `kind` on one GPU; with tp = ep = 1 the sums are
// ModelSpec::layerParameterCount(kind).
LayerParameters layerParameters(const ModelSpec& model, const ParallelPlan& plan, LayerKind kind) {
  const auto hidden = static_cast<double>(model.hidden_size);
  const auto query = static_cast<double>(model.queryDim());
  const auto kv = static_cast<double>(model.kvDim());
  const auto tp = static_cast<double>(plan.tp);
  const bool gpt = model.architecture == Architecture::kGpt;
  LayerParameters layer;
  if (model.mla) {
    layer.dense = latentAttentionParameters(model, tp);
  } else {
    // QKV split by columns (whole heads), the output projection by rows.
    layer.dense = hidden * (2.0 * query + 2.0 * kv) / tp;
    // QKV biases split, output bias replicated.
    if (gpt || model.attention_bias) layer.dense += (query + 2.0 * kv) / tp + hidden;
  }
  if (model.attention_sinks) layer.dense += static_cast<double>(model.attention_heads) / tp;  // per head, split
  if (model.qk_norm) layer.dense += 2.0 * static_cast<double>(model.head_dim);                // q, k norms, replicated
  layer.dense += gpt ? 4.0 * hidden : 2.0 * hidden;                                           // norms, replicated
  if (model.moe && kind.moe) {
    const MoeSpec& moe = *model.moe;
    const auto experts = static_cast<double>(moe.experts);
    const double local_experts = experts / static_cast<double>(plan.ep);
    layer.dense += hidden * experts;  // router, replicated
    if (moe.router_bias) layer.dense += experts;
    const auto ffn = static_cast<double>(moe.ffn_hidden_size);
    const auto etp = static_cast<double>(plan.expertTensorParallel());
    double expert = mlpWeights(model.architecture, hidden, ffn, etp);
    // GPT-OSS's expert biases: gate/up split with their columns, down replicated.
    if (moe.expert_bias && !gpt) expert += 2.0 * ffn / etp + hidden;
    layer.expert = local_experts * expert;
    if (moe.shared_experts > 0) {
      // Shared experts are dense weights, sharded by tp like a dense MLP (Megatron-Core's SharedExpertMLP).
      const auto shared = static_cast<double>(moe.shared_experts * moe.shared_ffn_hidden_size);
      layer.dense += mlpWeights(model.architecture, hidden, shared, tp);
      if (moe.shared_expert_gate) layer.dense += hidden;
    }
  } else {
    layer.dense += mlpWeights(model.architecture, hidden, static_cast<double>(model.ffn_hidden_size), tp);
  }
  return layer;
}

// The kinds of the transformer layers of `stage` (holding `layers` of them), over all its model chunks.
std::vector<LayerKindCount> stageLayerKinds(const ModelSpec& model, const ParallelPlan& plan, int64_t stage,
                                            int64_t layers) {
  if (model.uniformLayers()) return {{model.layerKind(model.layers - 1), layers}};
  std::vector<LayerKindCount> kinds;
  for (int64_t chunk = 0; chunk < plan.virtual_stages; ++chunk) {
    const int64_t first = plan.firstLayerOfChunk(model.layers, stage, chunk);
    for (const LayerKindCount& group : model.layerKinds(first, plan.layersOfChunk(model.layers, stage, chunk))) {
      auto same =
          std::find_if(kinds.begin(), kinds.end(), [&](const LayerKindCount& k) { return k.kind == group.kind; });
      if (same == kinds.end()) {
        kinds.push_back(group);
      } else {
        same->count += group.count;
      }
    }
  }
  return kinds;
}

// Activation bytes of the core attention (what selective recompute drops). A sliding-window
// layer's unfused scores span its window only.
double coreAttentionBytes(const ModelSpec& model, const MicroBatchShard& shard, const MemoryOptions& options,
                          LayerKind kind) {
  const double heads = static_cast<double>(model.attention_heads) / static_cast<double>(shard.tp);
  const double batch = static_cast<double>(shard.micro_batch_size) * heads;
  const double queries = static_cast<double>(shard.seq_len) / static_cast<double>(shard.cp);
  if (options.kernels.fused_attention) return kFp32Bytes * batch * queries;  // the logsumexp
  const double keys = kind.sliding_window
                          ? std::min(static_cast<double>(shard.seq_len), static_cast<double>(model.sliding_window))
                          : static_cast<double>(shard.seq_len);
  const double scores = batch * queries * keys;
  const double e = shard.activationBytes();
  // Softmax output; with dropout also its mask and its output (the input of the context matmul).
  return scores * (e + (model.hasAttentionDropout() ? options.kernels.dropout_mask_bytes + e : 0.0));
}

// What multi-head latent attention keeps for its backward besides the block input (as
// Megatron-Core's MLASelfAttention runs it, transformer_workload.cpp latentAttentionBlock): the input
// norm's output read by both down projections, on the rank's tokens; the gathered q latent
// (its norm's input and output, the q_b input) and kv latent with the rope key (norm input
// over kv_lora_rank + rope, norm output as the kv_b input); the per-head Q and K of
// nope + rope and V of v_head_dim after the up projections; the output projection's input.
// DeepSeek-V3 recomputes the norms and the up projections instead (arXiv:2412.19437 section
// 3.2.2): recompute_modules layernorm and mla_up_proj (`rerun`) drop what they rerun.
double latentAttentionActivationBytes(const ModelSpec& model, const MicroBatchShard& shard, uint32_t rerun) {
  const LatentAttentionSpec& mla = *model.mla;
  const double e = shard.activationBytes();
  const double eg = shard.gemmOperandBytes();
  const double tokens = shard.tokens();
  const double heads = static_cast<double>(model.attention_heads) / static_cast<double>(shard.tp);
  const auto q_rank = static_cast<double>(mla.q_lora_rank);
  const auto kv_rank = static_cast<double>(mla.kv_lora_rank);
  const auto rope = static_cast<double>(mla.qk_rope_head_dim);
  const auto qk = static_cast<double>(mla.qkHeadDim());
  const auto v = static_cast<double>(mla.v_head_dim);
  double bytes = 0.0;
  // The down projections' input, the input norm's output: rerun with "layernorm".
  if ((rerun & recompute_module::kLayerNorm) == 0) {
    bytes += eg * shard.replicatedRegionTokens() * static_cast<double>(model.hidden_size);
  }
  // The latents and the rope key (the latent norms' input), and what "mla_up_proj" reruns
  // from them: the up projections' input (the norms' output) and Q, K, V.
  if (mla.q_lora_rank > 0) bytes += e * tokens * q_rank;
  bytes += e * tokens * (kv_rank + rope);
  if ((rerun & recompute_module::kLatentUpProjection) == 0) {
    if (mla.q_lora_rank > 0) bytes += eg * tokens * q_rank;  // q_b input
    bytes += eg * tokens * kv_rank;                          // kv_b input
    bytes += e * tokens * heads * (2.0 * qk + v);            // Q, K, V
  }
  bytes += eg * tokens * heads * v;  // output-projection input
  return bytes;
}

// Per-GPU buffers of the embedding stage (per micro-batch in flight): the int64 token ids and,
// with hidden dropout, the embedding-dropout mask (Megatron-LM theoretical_memory_usage.py: "8 s b" and "s b h" per
// micro-batch in flight).
double embeddingActivationBytes(const ModelSpec& model, const MicroBatchShard& shard, const MemoryOptions& options) {
  double bytes = options.kernels.token_id_bytes * shard.tokens();
  if (model.hasHiddenDropout()) {
    bytes +=
        options.kernels.dropout_mask_bytes * shard.replicatedRegionTokens() * static_cast<double>(model.hidden_size);
  }
  return bytes;
}

// Per-GPU buffers of the output stage (per micro-batch in flight): final-norm input and
// output-layer input (2sbh each) and the fp32 softmax over the vocabulary (4 s b V / t):
// Korthikanti et al. section 4.3, 4 s b h / t (1 + V / h) with sequence parallelism. The
// fused cross-entropy keeps the 16-bit logits instead of the fp32 softmax.
double outputActivationBytes(const ModelSpec& model, const MicroBatchShard& shard, const MemoryOptions& options) {
  const double e = shard.activationBytes();
  const double hidden = static_cast<double>(model.hidden_size);
  const double vocab = static_cast<double>(model.vocab_size) / static_cast<double>(shard.tp);
  const double per_logit = options.kernels.fused_cross_entropy ? e : options.kernels.loss_element_bytes;
  return 2.0 * e * shard.replicatedRegionTokens() * hidden + per_logit * shard.tokens() * vocab;
}

// What the unfused loss holds at its peak beyond what it keeps for the backward (counted by
// outputActivationBytes), the larger of its forward's and its backward's:
//  - forward: the logits the caller still references beside the fp32 copies
//    (MemoryOptions::unfused_loss_fp32_copies_at_peak); with fp32 activations the cast copies
//    nothing, the logits are the first fp32 copy;
//  - backward: the fp32 copies its softmax gradient holds at once
//    (unfused_loss_backward_fp32_copies_at_peak), or the kept one beside the gradient cast to
//    the activations' type, whichever is more.
// With the logits split over tp > 1 ranks, the unfused_loss_tp_* counts (a stack's loss may
// run other code there: torch's loss_parallel). Nothing with a fused loss.
double lossPeakExtraBytes(const ModelSpec& model, const MicroBatchShard& shard, const MemoryOptions& options) {
  if (options.kernels.fused_cross_entropy) return 0.0;
  const double e = shard.activationBytes();
  const double vocab = static_cast<double>(model.vocab_size) / static_cast<double>(shard.tp);
  const bool split = shard.tp > 1;
  const double forward_fp32_copies =
      split ? options.unfused_loss_tp_fp32_copies_at_peak : options.unfused_loss_fp32_copies_at_peak;
  const double backward_fp32_copies =
      split ? options.unfused_loss_tp_backward_fp32_copies_at_peak : options.unfused_loss_backward_fp32_copies_at_peak;
  const double forward_copies = forward_fp32_copies - (e >= kFp32Bytes ? 1.0 : 0.0);
  const double forward = e + kFp32Bytes * forward_copies;
  const double cast = e < kFp32Bytes ? e : 0.0;  // the gradient cast back to the activations' type
  const double backward = std::max(kFp32Bytes * backward_fp32_copies, kFp32Bytes + cast);
  const double per_logit = std::max(forward, backward) - options.kernels.loss_element_bytes;
  return std::max(0.0, per_logit) * shard.tokens() * vocab;
}

int64_t communicatorCount(const ParallelPlan& plan) {
  int64_t count = 0;
  for (int64_t degree : {plan.tp, plan.pp, plan.dp, plan.cp, plan.ep}) count += degree > 1 ? 1 : 0;
  // The expert layers' own groups, where they differ from the ones above: an expert
  // tensor-parallel group of etp != tp, and the expert data-parallel group that reduces the
  // expert gradients (Megatron-Core builds both in parallel_state.py).
  const int64_t etp = plan.expertTensorParallel();
  if (etp > 1 && etp != plan.tp) ++count;
  if ((plan.ep > 1 || etp != plan.tp) && plan.expertDataParallel() > 1) ++count;
  return count;
}

// Adam's m and v, or SGD's momentum, in the optimizer's state type: bytes per parameter.
double momentBytes(const TrainingSpec& training) {
  const double moment_bytes = training.optimizer_state_precision == Precision::kBf16 ? 2.0 : 4.0;
  return (training.optimizer == Optimizer::kAdam ? 2.0 : 1.0) * moment_bytes;
}

}  // namespace

StateBytes stateBytesPerParameter(const TrainingSpec& training, const MemoryOptions& options) {
  const double moments = momentBytes(training);
  const double gradients = MicroBatchShard::wholeSequence(training).mainGradientBytes();
  // The mixed-precision optimizer's fp32 copy of 16-bit main gradients; a precision-aware
  // optimizer (bf16 states) reads them in their own type.
  const double gradient_copy = gradients < 4.0 && training.optimizer_state_precision == Precision::kFp32 ? 4.0 : 0.0;
  switch (training.precision) {
    case Precision::kFp64: return {8.0, gradients, 2.0 * moments};
    case Precision::kFp32:
    case Precision::kTf32: return {4.0, gradients, moments};
    case Precision::kFp16:
    case Precision::kBf16: return {2.0, gradients, 4.0 + moments + gradient_copy};
    case Precision::kFp8: {
      // The FP8 copies (weight, and its transpose where FP8 GEMMs are TN only), beside the
      // 16-bit weights unless the weights are FP8 tensors themselves (fp8_param_gather).
      const double copies = options.kernels.fp8_transposed_copies ? 2.0 : 1.0;
      const double sixteen_bit = training.fp8_param_gather ? 0.0 : 2.0;
      return {sixteen_bit + copies * options.fp8_weight_copy_bytes, gradients, 4.0 + moments + gradient_copy};
    }
  }
  return {2.0, gradients, 4.0 + moments + gradient_copy};
}

StateBytes stateBytesPerParameter(Precision precision, Optimizer optimizer, const MemoryOptions& options) {
  TrainingSpec training;
  training.precision = precision;
  training.optimizer = optimizer;
  return stateBytesPerParameter(training, options);
}

ReplicaShares replicaShares(const ParallelPlan& plan, const StageParameters& parameters) {
  if (!plan.separateExpertGroups() || parameters.total() <= 0.0) return {};
  return {parameters.dense / parameters.total(), parameters.expert / parameters.total()};
}

StageParameters stageParameters(const ModelSpec& model, const TrainingSpec& training, const ParallelPlan& plan,
                                int64_t stage, int64_t layers) {
  StageParameters parameters;
  for (const LayerKindCount& group : stageLayerKinds(model, plan, stage, layers)) {
    const LayerParameters layer = layerParameters(model, plan, group.kind);
    parameters.dense += static_cast<double>(group.count) * layer.dense;
    parameters.expert += static_cast<double>(group.count) * layer.expert;
    parameters.largest_layer = std::max(parameters.largest_layer, layer.dense + layer.expert);
  }
  const double in_layers = parameters.total();
  const auto hidden = static_cast<double>(model.hidden_size);
  const double table = static_cast<double>(model.vocab_size) * hidden / static_cast<double>(plan.tp);
  const bool gpt = model.architecture == Architecture::kGpt;
  const bool embedding = plan.holdsEmbeddingOn(stage);
  if (embedding) {
    parameters.dense += table;  // vocabulary-parallel input embedding
    // GPT-2/3 learned positions, one row per position, replicated over tp (Megatron's
    // position_embeddings is a plain nn.Embedding(max_position_embeddings = seq_len, h)).
    if (gpt) parameters.dense += static_cast<double>(training.seq_len) * hidden;
  }
  if (plan.holdsOutputOn(stage)) {
    // (The output stage is the first one without pipeline parallelism, and in a V; DualPipe's
    // ends hold both directions' embeddings and outputs.)
    parameters.dense += gpt ? 2.0 * hidden : hidden;  // final norm
    if (!model.tied_embeddings || !embedding) parameters.dense += table;
    if (model.mtp_layers > 0) {
      // The MTP modules (ModelSpec::mtpParameterCount), on the last stage; with pp > 1 that
      // stage also holds a copy of the embedding the modules look their tokens up in
      // (Megatron-Core's GPTModel builds the embedding where pre_process or mtp_process).
      const auto depth = static_cast<double>(model.mtp_layers);
      const LayerParameters block = layerParameters(model, plan, model.mtpLayerKind());
      parameters.dense += depth * (block.dense + 2.0 * hidden * hidden / static_cast<double>(plan.tp) + 3.0 * hidden);
      parameters.expert += depth * block.expert;
      parameters.largest_layer = std::max(parameters.largest_layer, block.dense + block.expert);
      if (!embedding) parameters.dense += table;
    }
  }
  parameters.outside_layers = parameters.total() - in_layers;
  return parameters;
}

double layerActivationBytes(const ModelSpec& model, const MicroBatchShard& shard, Recompute recompute,
                            const MemoryOptions& options) {
  return layerActivationBytes(model, shard, recompute, options, model.layerKind(model.layers - 1));
}

namespace {

// What recompute: selective_op keeps of a dense layer between its forward and backward
// (Recompute::kSelectiveOp, Op::op_checkpoint_rerun): the checkpointed block's input, the
// outputs of the saved matmuls (wq, wv, w1 and w2 for llama; wq, wv and fc1 for gpt) and of
// the attention kernel with its fp32 logsumexp, and with sequence parallelism the
// reduce-scatters' outputs. Everything else is rerun, so not kept. (In fp8 the same: a float8
// linear's output is a 16-bit tensor, and its amax values are scalars.)
double selectiveOpActivationBytes(const ModelSpec& model, const MicroBatchShard& shard) {
  const double e = shard.activationBytes();
  const double tp = static_cast<double>(shard.tp);
  const double tokens = shard.tokens();
  const double replicated = shard.replicatedRegionTokens();
  const double hidden = static_cast<double>(model.hidden_size);
  const double query = static_cast<double>(model.queryDim());
  const double kv = static_cast<double>(model.kvDim());
  const double heads = static_cast<double>(model.attention_heads) / tp;
  const double reduce_scattered = shard.sequence_parallel ? e * replicated * hidden : 0.0;
  double bytes = e * replicated * hidden;                          // the block's input
  bytes += e * tokens * (query + kv) / tp;                         // wq and wv outputs
  bytes += e * tokens * query / tp + kFp32Bytes * tokens * heads;  // attention output, logsumexp
  bytes += reduce_scattered;                                       // after wo
  const double ffn = static_cast<double>(model.ffn_hidden_size) / tp;
  bytes += e * tokens * ffn;                                                     // w1 (gate) or fc1 output
  if (model.architecture == Architecture::kLlama) bytes += e * tokens * hidden;  // w2 output
  bytes += reduce_scattered;                                                     // after w2 / fc2
  return bytes;
}

}  // namespace

double layerActivationBytes(const ModelSpec& model, const MicroBatchShard& shard, Recompute recompute,
                            const MemoryOptions& options, LayerKind kind, uint32_t recompute_modules) {
  // Dense layers only: checkPlan refuses selective_op for mixture-of-experts and latent attention.
  if (recompute == Recompute::kSelectiveOp && !model.mla && !(model.moe && kind.moe)) {
    return selectiveOpActivationBytes(model, shard);
  }
  if (recompute == Recompute::kSelectiveOp) recompute = Recompute::kNone;
  const double e = shard.activationBytes();
  // What a Transformer Engine linear layer saves of its input for the weight gradient: with
  // fp8 the quantized (column-wise, 1-byte) copy it made for its FP8 GEMMs, not the 16-bit
  // tensor (transformer_engine/pytorch/module/linear.py saves the quantized input).
  const double eg = shard.gemmOperandBytes();
  const double tp = static_cast<double>(shard.tp);
  const double tokens = shard.tokens();                      // s b / cp
  const double replicated = shard.replicatedRegionTokens();  // / tp with sequence parallelism
  const double hidden = static_cast<double>(model.hidden_size);
  const double query = static_cast<double>(model.queryDim());
  const double kv = static_cast<double>(model.kvDim());
  const double mask = options.kernels.dropout_mask_bytes;
  const bool dropout = model.hasHiddenDropout();
  const bool gated = model.architecture == Architecture::kLlama;
  // Eager PyTorch's element-wise chains (FlopsOptions::fused_pointwise false) keep more for the
  // backward: each RMSNorm its fp32 copy of the input (for the gradients of pow and of the
  // product with the reciprocal root) beside the 16-bit product the weight gradient reads, in
  // place of the 16-bit input (4 bytes per element more), and each SwiGLU silu's output, which
  // the product's backward reads (one 16-bit element of the width more). RoPE keeps nothing
  // more: its complex product saves only the frequencies.
  const bool eager = gated && !options.kernels.fused_pointwise;
  const double norm_input = e + (eager ? kFp32Bytes : 0.0);  // bytes per element a norm keeps

  if (recompute == Recompute::kFull) return e * replicated * hidden;  // the layer's input only
  // Under recompute: selective, the modules rerun: each keeps its input, not what it computes
  // from it (Megatron-Core's checkpoints: "layernorm", "moe_act" and "mla_up_proj" discard
  // their outputs, "core_attn", "mlp" and "shared_experts" keep only their inputs).
  const uint32_t rerun = recompute == Recompute::kSelective ? recompute_modules : 0;
  auto reruns = [rerun](uint32_t module) { return (rerun & module) != 0; };

  double bytes = 0.0;
  // Attention block.
  bytes += norm_input * replicated * hidden;  // input-norm input
  if (model.mla) {
    bytes += latentAttentionActivationBytes(model, shard, rerun);
  } else {
    bytes += eg * replicated * hidden;                                    // QKV GEMM input (norm output)
    bytes += e * tokens * (query + kv) / tp;                              // Q and K (after RoPE) for the scores
    if (model.qk_norm) bytes += norm_input * tokens * (query + kv) / tp;  // the q and k norms' inputs
    bytes += e * tokens * kv / tp;                                        // V for the context
    bytes += eg * tokens * query / tp;  // output-projection input (the attention context)
  }
  if (dropout) bytes += mask * replicated * hidden;
  // MLP or MoE block.
  bytes += norm_input * replicated * hidden;  // norm input
  // The expert MLP (or the dense one) on `slots` tokens: fc1 input, then GELU input and fc2
  // input (gpt) or the SwiGLU input of twice the width (and eager, silu's output) and the fc2
  // input (llama). `split`: the ranks that share its width (tp, or etp for the experts).
  const double swiglu_kept = gated ? (eager ? 3.0 : 2.0) : 1.0;
  auto mlp = [&](double slots, double ffn, double fc1_input_tokens, double split) {
    return eg * fc1_input_tokens * hidden + (e * swiglu_kept + eg) * slots * ffn / split;
  };
  if (model.moe && kind.moe) {
    const double top_k = static_cast<double>(model.moe->top_k);
    // The pre-MLP norm's output (the router's input, and the shared experts'): rerun with
    // "layernorm".
    const bool norm_rerun = reruns(recompute_module::kLayerNorm);
    if (!norm_rerun) bytes += e * replicated * hidden;                           // router input
    bytes += kFp32Bytes * replicated * static_cast<double>(model.moe->experts);  // fp32 router probabilities
    // The routed slots of this rank's tokens / tp, all-gathered over the etp ranks.
    const auto etp = static_cast<double>(shard.etp);
    const double slots = tokens / tp * top_k * etp * shard.moe_token_factor;
    const auto expert_ffn = static_cast<double>(model.moe->ffn_hidden_size);
    if (reruns(recompute_module::kMoeActivation)) {
      // "moe_act": the experts keep their fc1 input and output, the activation's input.
      bytes += eg * slots * hidden + e * (gated ? 2.0 : 1.0) * slots * expert_ffn / etp;
    } else {
      bytes += mlp(slots, expert_ffn, slots, etp);
      // A clamped GLU keeps the unclamped fc1 output for the clamps' backward beside the
      // clamped copy the activation keeps (FlopsOptions::moe_glu_clamp_*).
      if (gated && model.moe->activation_clamp > 0.0 && !options.kernels.fused_expert_mlp) {
        bytes += e * slots * 2.0 * expert_ffn / etp;
      }
    }
    if (model.moe->shared_experts > 0 && !reruns(recompute_module::kSharedExperts)) {
      // The shared experts: a dense MLP of their summed width on every token. Its fc1 input is
      // the router's (the norm's output, counted above) in 16 bits; in fp8 its linear keeps a
      // quantized copy of its own, unless the norm is rerun (Megatron-Core's MoELayer then has
      // it keep the original input, which the rerun discards).
      const auto shared = static_cast<double>(model.moe->shared_experts * model.moe->shared_ffn_hidden_size);
      const bool same_tensor = eg == e || norm_rerun;
      bytes += mlp(tokens, shared, replicated, tp) - (same_tensor ? eg * replicated * hidden : 0.0);
    }
  } else if (!reruns(recompute_module::kDenseMlp)) {
    bytes += mlp(tokens, static_cast<double>(model.ffn_hidden_size), replicated, tp);
  }
  if (dropout) bytes += mask * replicated * hidden;
  if (recompute == Recompute::kNone ||
      (recompute == Recompute::kSelective && !reruns(recompute_module::kCoreAttention))) {
    bytes += coreAttentionBytes(model, shard, options, kind);
  }
  return bytes;
}

namespace {

// What a layer's weight-gradient GEMMs read, per micro-batch: each weight GEMM's input as
// its forward kept it (GemmShape m x k) and the gradient of its output (m x n). A schedule that
// splits the backward keeps these from the input-gradient pass, which makes the output
// gradients, to the weight-gradient pass (Qi et al. 2024, section 3's M_W).
double weightGradientInputBytes(const ModelSpec& model, const MicroBatchShard& shard, const FlopsOptions& kernels,
                                LayerKind kind) {
  const double e = shard.activationBytes();
  const double eg = shard.gemmOperandBytes();
  double bytes = 0.0;
  for (const Op& op : transformerLayer(model, shard, kernels, kind).ops) {
    if (op.kind != OpKind::kGemm || op.backward_gemms.size() != 2 || op.forward_gemms.empty()) continue;
    const GemmShape& gemm = op.forward_gemms.front();
    const auto m = static_cast<double>(gemm.m);
    bytes += static_cast<double>(gemm.batch) * m * (eg * static_cast<double>(gemm.k) + e * static_cast<double>(gemm.n));
  }
  return bytes;
}

}  // namespace

int64_t inFlightMicrobatches(const ParallelPlan& plan, int64_t microbatches, int64_t stage) {
  assert(stage >= 0 && stage < plan.pp);
  if (plan.schedule == PipelineSchedule::kGpipe) return microbatches;
  if (splitsWeightGradients(plan.schedule)) {
    return peakInFlight(stageOrder(plan.schedule, plan.pp, plan.virtual_stages, microbatches, stage));
  }
  if (plan.virtual_stages > 1) {
    const int64_t total = microbatches * plan.virtual_stages;
    if (microbatches == plan.pp) return total;  // Megatron runs every forward as warm-up then
    const int64_t warmup = 2 * (plan.pp - stage - 1) + (plan.virtual_stages - 1) * plan.pp;
    return std::min(warmup + 1, total);
  }
  return std::min(plan.pp - stage, microbatches);
}

namespace {

// The states of ZeRO-3 in transformer blocks (PyTorch FSDP, sharded_data_parallel.h) on one
// GPU of a stage holding `p`:
//  - the sharded parameters are the ones the optimizer updates, in fp32 under mixed
//    precision: the master weights (FSDP's MixedPrecisionPolicy casts only what it gathers);
//    there is no sharded 16-bit copy and no FP8 weight cache (torchao casts each gathered
//    weight as its GEMM runs);
//  - the sharded gradients are in the sharded parameters' type (FSDP casts the
//    reduce-scatter's output to it), so the optimizer keeps no fp32 copy of them;
//  - gathered parameters in the gather's type: the block computing, the `prefetch` blocks
//    gathered ahead of it and the root module's (embedding, output layer), or the whole stage
//    where they are kept for the backward or the iteration (reshard_after_forward never,
//    pipeline parallelism);
//  - with pipeline parallelism each micro-batch's gradients accumulate unsharded until the
//    stage's last backward, in the reduction's type (in place of the sharded ones, which exist
//    only from the reduce-scatters to the step); without it, the gradients of the block
//    computing and of the block being reduce-scattered.
StageMemory shardedBlockStates(const TrainingSpec& training, const ParallelPlan& plan, const MicroBatchShard& shard,
                               const StateBytes& state, const StageParameters& p) {
  // Over the shard group under hybrid sharding (training.zero3.replicas).
  const auto dense_replicas = static_cast<double>(training.zero3.shardRanks(plan.dp * plan.cp));
  const auto expert_replicas = static_cast<double>(plan.expertDataParallel());
  auto sharded = [&](double bytes_per_parameter) {
    return p.dense * bytes_per_parameter / dense_replicas + p.expert * bytes_per_parameter / expert_replicas;
  };
  const bool mixed = training.precision == Precision::kBf16 || training.precision == Precision::kFp16 ||
                     training.precision == Precision::kFp8;
  const double master_bytes = 4.0;
  StageMemory memory;
  memory.optimizer = sharded(momentBytes(training) + (mixed ? master_bytes : 0.0));
  memory.weights = mixed ? 0.0 : sharded(state.weights);
  memory.gradients = sharded(mixed ? master_bytes : state.gradients);
  const double gathered = shard.parameterGatherBytes();
  const bool kept = plan.pp > 1 || !training.zero3.reshardsAfterForward(plan.pp);
  const double gathered_blocks = static_cast<double>(training.zero3.prefetch + 1) * p.largest_layer + p.outside_layers;
  memory.weights += (kept ? p.total() : std::min(gathered_blocks, p.total())) * gathered;
  if (plan.pp > 1) {
    // The unsharded gradients, until the reduce-scatters after the last backward turn them
    // into the sharded ones: the larger of the two (set_to_none frees the sharded ones at
    // the step).
    memory.gradients = std::max(memory.gradients, p.total() * state.gradients);
  } else {
    memory.communication_buffers = std::min(2.0 * p.largest_layer, p.total()) * state.gradients;
  }
  return memory;
}

}  // namespace

MemoryReport estimateMemory(const Experiment& experiment, const MemoryOptions& base_options) {
  MemoryOptions options = base_options;
  options.kernels = kernelsFor(experiment, base_options.kernels);  // training.flash_attention
  const ModelSpec& model = experiment.model;
  const TrainingSpec& training = experiment.training;
  const ParallelPlan& plan = experiment.plan;
  const MicroBatchShard shard = MicroBatchShard::of(training, plan);
  const StateBytes state = stateBytesPerParameter(training, options);
  const int64_t microbatches = plan.microbatches(training);
  const std::vector<int64_t> layers = plan.layersPerStage(model.layers);
  const double e = shard.activationBytes();
  const double hidden = static_cast<double>(model.hidden_size);

  // Data-parallel replicas of a parameter: ZeRO and the distributed optimizer shard over them
  // (Megatron-Core's data-parallel group includes the context-parallel ranks).
  const auto dense_replicas = static_cast<double>(plan.dp * plan.cp);
  const auto expert_replicas = static_cast<double>(plan.expertDataParallel());
  auto sharded = [](double bytes, double replicas, bool shard_it) { return shard_it ? bytes / replicas : bytes; };
  const bool sharded_blocks = plan.zero >= 3 && training.zero3.unit == ShardingUnit::kBlock;

  const double per_layer = layerActivationBytes(model, shard, plan.recompute, options,
                                                model.layerKind(model.layers - 1), plan.recompute_modules);
  // What a recomputing layer adds back during its backward: what it does not keep (all of it
  // under full recomputation, whose kept input is the previous layer's output).
  const bool keeps_some = plan.recompute == Recompute::kSelective || plan.recompute == Recompute::kSelectiveOp;
  // (selective_op keeps the saved outputs whole, sequence parallelism or not, so it can keep
  // more than the layer would without recomputation: nothing comes back then.)
  auto workingSetOf = [&](LayerKind kind) {
    if (plan.recompute == Recompute::kNone) return 0.0;
    return std::max(
        0.0, layerActivationBytes(model, shard, Recompute::kNone, options, kind) -
                 (keeps_some ? layerActivationBytes(model, shard, plan.recompute, options, kind, plan.recompute_modules)
                             : 0.0));
  };
  const double working_set = workingSetOf(model.layerKind(model.layers - 1));
  const double v = static_cast<double>(plan.virtual_stages);

  MemoryReport report;
  report.capacity_bytes = experiment.cluster.gpu.memory_GiB * units::kGiB;
  for (int64_t stage = 0; stage < plan.pp; ++stage) {
    StageMemory memory;
    memory.stage = stage;
    memory.layers = layers[static_cast<std::size_t>(stage)];
    memory.in_flight = inFlightMicrobatches(plan, microbatches, stage);
    memory.parameters = stageParameters(model, training, plan, stage, memory.layers);
    memory.activation_per_layer = per_layer;
    const StageParameters& p = memory.parameters;

    memory.weights = sharded(p.dense * state.weights, dense_replicas, plan.zero >= 3) +
                     sharded(p.expert * state.weights, expert_replicas, plan.zero >= 3);
    memory.gradients = sharded(p.dense * state.gradients, dense_replicas, plan.zero >= 2) +
                       sharded(p.expert * state.gradients, expert_replicas, plan.zero >= 2);
    memory.optimizer = sharded(p.dense * state.optimizer, dense_replicas, plan.zero >= 1) +
                       sharded(p.expert * state.optimizer, expert_replicas, plan.zero >= 1);
    // DeepSpeed's BF16_Optimizer (bf16, ZeRO 0-1) keeps the bf16 gradients beside its fp32 ones.
    if (training.retain_16bit_grads && training.precision == Precision::kBf16 && plan.zero <= 1 &&
        state.gradients > 2.0) {
      memory.gradients += 2.0 * p.total();
    }
    double block_buffers = 0.0;
    if (sharded_blocks) {
      const StageMemory blocks = shardedBlockStates(training, plan, shard, state, p);
      memory.weights = blocks.weights;
      memory.gradients = blocks.gradients;
      memory.optimizer = blocks.optimizer;
      block_buffers = blocks.communication_buffers;
    }

    double stage_working_set = 0.0;  // what a recomputing layer of the stage adds back in its backward
    double chunk_activations = 0.0;  // what one micro-batch of one model chunk keeps
    if (plan.partialRecompute(model.layers)) {
      // recompute_num_layers: each chunk's first layers keep their input only, the others all
      // their activations. The backward reaches the recomputed layers after the kept ones
      // have freed theirs, so a recomputed layer's working set adds only what exceeds the
      // chunk's kept activations of that micro-batch.
      double stage_layers_bytes = 0.0;
      double largest_working_set = 0.0;
      for (int64_t chunk = 0; chunk < plan.virtual_stages; ++chunk) {
        const int64_t first = plan.firstLayerOfChunk(model.layers, stage, chunk);
        const int64_t count = plan.layersOfChunk(model.layers, stage, chunk);
        const int64_t recomputed = plan.recomputedLayersOfChunk(count);
        double chunk_working_set = 0.0;
        for (const LayerKindCount& group : model.layerKinds(first, recomputed)) {
          stage_layers_bytes +=
              static_cast<double>(group.count) *
              layerActivationBytes(model, shard, plan.recompute, options, group.kind, plan.recompute_modules);
          chunk_working_set = std::max(chunk_working_set, workingSetOf(group.kind));
        }
        double kept = 0.0;
        for (const LayerKindCount& group : model.layerKinds(first + recomputed, count - recomputed)) {
          kept += static_cast<double>(group.count) *
                  layerActivationBytes(model, shard, Recompute::kNone, options, group.kind);
        }
        stage_layers_bytes += kept;
        largest_working_set = std::max(largest_working_set, chunk_working_set - kept);
      }
      memory.activation_per_layer = stage_layers_bytes / static_cast<double>(std::max<int64_t>(1, memory.layers));
      chunk_activations = stage_layers_bytes / v;
      memory.activations = static_cast<double>(memory.in_flight) * chunk_activations + largest_working_set;
      stage_working_set = largest_working_set;
    } else if (model.uniformLayers()) {
      chunk_activations = static_cast<double>(memory.layers) / v * per_layer;
      memory.activations = static_cast<double>(memory.in_flight) * chunk_activations + working_set;
      stage_working_set = working_set;
    } else {
      // Layers of different kinds (dense and MoE, sliding and full): their sum over the stage,
      // and the largest working set of a recomputed layer.
      double stage_layers_bytes = 0.0;
      double largest_working_set = 0.0;
      for (const LayerKindCount& group : stageLayerKinds(model, plan, stage, memory.layers)) {
        stage_layers_bytes +=
            static_cast<double>(group.count) *
            layerActivationBytes(model, shard, plan.recompute, options, group.kind, plan.recompute_modules);
        largest_working_set = std::max(largest_working_set, workingSetOf(group.kind));
      }
      memory.activation_per_layer = stage_layers_bytes / static_cast<double>(std::max<int64_t>(1, memory.layers));
      chunk_activations = stage_layers_bytes / v;
      memory.activations = static_cast<double>(memory.in_flight) * chunk_activations + largest_working_set;
      stage_working_set = largest_working_set;
    }
    if (splitsWeightGradients(plan.schedule) && chunk_activations > 0.0) {
      // The micro-batches between their two backward passes keep what the weight gradients read.
      double weight_inputs = 0.0;
      for (const LayerKindCount& group : stageLayerKinds(model, plan, stage, memory.layers)) {
        weight_inputs +=
            static_cast<double>(group.count) * weightGradientInputBytes(model, shard, options.kernels, group.kind);
      }
      const std::vector<PipelineStep> order =
          stageOrder(plan.schedule, plan.pp, plan.virtual_stages, microbatches, stage);
      const double held = peakHeld(order, weight_inputs / v / chunk_activations);
      memory.activations += (held - static_cast<double>(memory.in_flight)) * chunk_activations;
    }
    if (plan.holdsEmbeddingOn(stage)) {
      // The first model chunk holds about in_flight / v of the stage's micro-batches.
      const double first_chunk = std::ceil(static_cast<double>(memory.in_flight) / v);
      memory.activations += first_chunk * embeddingActivationBytes(model, shard, options);
    }
    if (plan.holdsOutputOn(stage)) {
      // The last stage starts each micro-batch's backward right after its forward (1F1B); gpipe keeps all.
      const double last_chunk = plan.schedule == PipelineSchedule::kGpipe ? static_cast<double>(microbatches) : 1.0;
      memory.activations += last_chunk * outputActivationBytes(model, shard, options);
      if (model.mtp_layers > 0) {
        // Each MTP module: its block, its head's buffers as the output layer's, and its input
        // (the two norms' inputs and the 2h-wide projection input).
        const LayerKind kind = model.mtpLayerKind();
        const double input = 2.0 * e * shard.replicatedRegionTokens() * hidden +
                             2.0 * shard.gemmOperandBytes() * shard.tokens() * hidden;
        memory.activations +=
            last_chunk * static_cast<double>(model.mtp_layers) *
            (layerActivationBytes(model, shard, plan.recompute, options, kind, plan.recompute_modules) +
             outputActivationBytes(model, shard, options) + input);
        const double mtp_working_set =
            plan.recompute == Recompute::kNone ? 0.0 : std::max(0.0, workingSetOf(kind) - working_set);
        memory.activations += mtp_working_set;
        stage_working_set += mtp_working_set;
      }
      // The loss's peak comes before any recomputation: the larger of the two.
      memory.activations += std::max(0.0, lossPeakExtraBytes(model, shard, options) - stage_working_set);
    }

    double buffers = 0.0;
    if (plan.pp > 1) buffers += 2.0 * e * shard.replicatedRegionTokens() * hidden;  // send + receive
    if (shard.sequence_parallel) buffers += e * shard.tokens() * hidden;            // an all-gathered input
    if (sharded_blocks) {
      buffers += block_buffers;
    } else {
      if (plan.zero >= 2) {
        const double bucket = options.grad_buckets.bucketParameters(plan);
        buffers += std::min(options.grad_buckets_in_flight * bucket, p.total()) * state.gradients;
      }
      if (plan.zero >= 3) buffers += options.zero3_gathered_layers * p.largest_layer * state.weights;
    }
    memory.communication_buffers = buffers;
    memory.runtime = options.runtime_reserved_bytes +
                     static_cast<double>(communicatorCount(plan)) * options.nccl_bytes_per_communicator;
    memory.allocator_overhead = options.allocator_overhead_fraction * memory.activations;
    report.stages.push_back(memory);
    if (memory.total() > report.stages[report.peak_stage].total()) report.peak_stage = report.stages.size() - 1;
  }
  return report;
}

}  // namespace trainsim::parallelism
