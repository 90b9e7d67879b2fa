// The builder of a micro-batch's ops on one GPU (transformer_workload.h): the kinds of kernel
// it adds (weight GEMMs with their FP8 casts, activation matmuls, norms, residual adds,
// element-wise kernels, collectives and the ring exchanges of overlapped tensor parallelism)
// and, in transformer_blocks.cpp, the blocks of a transformer layer built from them
// (attention, multi-head latent attention, dense MLP, mixture of experts, shared experts,
// multi-token prediction). Internal to the transformer workload.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "base/units.h"
#include "parallelism/transformer_workload.h"

namespace trainsim::parallelism::detail {

// One FP8 (e4m3 / e5m2) element: what a quantization writes per copy of its tensor.
inline constexpr double kFp8ElementBytes = 1.0;

inline int64_t shapeDim(double value) { return std::max<int64_t>(1, std::llround(value)); }

inline GemmShape shape(double m, double n, double k, double batch = 1.0) {
  return {shapeDim(m), shapeDim(n), shapeDim(k), shapeDim(batch)};
}

inline Op makeOp(std::string name, OpKind kind, bool matmul, bool core_attention) {
  Op op;
  op.name = std::move(name);
  op.kind = kind;
  op.matmul = matmul;
  op.core_attention = core_attention;
  if (core_attention) op.recompute_module = recompute_module::kCoreAttention;
  return op;
}

// The GEMMs of a tensor-parallel block that Transformer Engine overlaps with its collectives
// (TpOverlapGemm): the column-parallel GEMM's forward, input gradient and weight gradient,
// the row-parallel GEMM's forward and input gradient.
struct TpBlockGemms {
  TpOverlapGemm column_fprop;
  TpOverlapGemm column_dgrad;
  TpOverlapGemm column_wgrad;
  TpOverlapGemm row_fprop;
  TpOverlapGemm row_dgrad;
};
inline constexpr TpBlockGemms kAttentionGemms = {TpOverlapGemm::kQkvFprop, TpOverlapGemm::kQkvDgrad,
                                                 TpOverlapGemm::kQkvWgrad, TpOverlapGemm::kProjFprop,
                                                 TpOverlapGemm::kProjDgrad};
inline constexpr TpBlockGemms kMlpGemms = {TpOverlapGemm::kFc1Fprop, TpOverlapGemm::kFc1Dgrad, TpOverlapGemm::kFc1Wgrad,
                                           TpOverlapGemm::kFc2Fprop, TpOverlapGemm::kFc2Dgrad};

// Builds the ops of one part of the model for one micro-batch on one GPU.
class WorkloadBuilder {
 public:
  WorkloadBuilder(const ModelSpec& model, const MicroBatchShard& shard, const FlopsOptions& options)
      : model_(model),
        shard_(shard),
        options_(options),
        e_(shard.activationBytes()),
        eg_(shard.gemmOperandBytes()),
        main_grad_(options.main_grad_bytes.value_or(shard.mainGradientBytes())),
        tp_(static_cast<double>(shard.tp)),
        hidden_(static_cast<double>(model.hidden_size)),
        hidden_dropout_(model.hasHiddenDropout()),
        attention_dropout_(model.hasAttentionDropout()) {}

  Workload take() { return std::move(workload_); }

  [[nodiscard]] double tokens() const { return shard_.tokens(); }
  [[nodiscard]] double replicatedTokens() const { return shard_.replicatedRegionTokens(); }
  [[nodiscard]] bool hiddenDropout() const { return hidden_dropout_; }
  [[nodiscard]] double hidden() const { return hidden_; }
  [[nodiscard]] double tp() const { return tp_; }
  [[nodiscard]] double e() const { return e_; }
  [[nodiscard]] double mainGradBytes() const { return main_grad_; }

  // What runs a weight GEMM. Transformer Engine linear layers cast their operands to FP8 in an
  // fp8 run (FlopsOptions::fp8_quantize_bytes_per_element); with sequence parallelism a
  // column-parallel layer (QKV, MLP fc1) all-gathers its input and a row-parallel one
  // (attention output, MLP fc2) its output gradient, each quantized on its 1/tp shard before
  // the gather. kSixteenBit: a plain PyTorch matmul (Megatron's output layer, the MoE router).
  enum class WeightGemm : uint8_t {
    kTransformerEngine,
    kTransformerEngineGatheredInput,
    kTransformerEngineGatheredGradient,
    kSixteenBit
  };

  // A GEMM with a weight: X[m x k] W[k x n] (`batch` of them: grouped expert GEMMs). Backward:
  // dX = dY W^T and dW = X^T dY, the latter accumulated into the fp32 main gradient.
  void gemm(std::string name, double m, double n, double k, double batch = 1.0,
            WeightGemm holder = WeightGemm::kTransformerEngine) {
    const bool sixteen_bit = holder == WeightGemm::kSixteenBit;
    const double eg = sixteen_bit ? e_ : eg_;
    if (shard_.precision == topology::Precision::kFp8 && !sixteen_bit) {
      const double shard = shard_.sequence_parallel ? tp_ : 1.0;
      const double input = batch * m * k / (holder == WeightGemm::kTransformerEngineGatheredInput ? shard : 1.0);
      const double grad_output =
          batch * m * n / (holder == WeightGemm::kTransformerEngineGatheredGradient ? shard : 1.0);
      const double per_element =
          options_.fp8_quantize_bytes_per_element - (options_.fp8_transposed_copies ? 0.0 : kFp8ElementBytes) +
          (options_.fp8_current_scaling ? options_.fp8_current_scaling_amax_bytes_per_element : 0.0);
      Op cast = makeOp(name + "_fp8_quantize", OpKind::kElementwise, false, false);
      cast.forward.bytes = input * per_element;
      cast.backward.bytes = grad_output * per_element;
      // Current scaling: amax, scale and cast per tensor (FlopsOptions::
      // fp8_current_scaling_kernels_per_quantize); block scaling one kernel; both per local
      // expert of a grouped GEMM, from Transformer Engine's C++. Delayed scaling casts all the
      // experts' slices in one kernel, and so does the fused grouped MLP for every recipe
      // (tex.group_quantize, Transformer Engine 2.14+).
      const bool grouped_quantize = options_.fused_expert_mlp && batch > 1.0;
      if ((options_.fp8_current_scaling || options_.fp8_block_scaling) && !grouped_quantize) {
        const double quantizations = 1.0 + options_.fp8_quantize_per_expert * (batch - 1.0);
        const double per_quantization =
            options_.fp8_current_scaling ? options_.fp8_current_scaling_kernels_per_quantize : 1.0;
        const double native = std::max(0.0, quantizations * per_quantization - 1.0);
        cast.native_kernels_forward = native;
        cast.native_kernels_backward = native;
      }
      workload_.ops.push_back(std::move(cast));
    }
    Op op = makeOp(std::move(name), OpKind::kGemm, true, false);
    op.sixteen_bit_matmul = sixteen_bit;
    const double flops = 2.0 * m * n * k * batch;
    op.forward = {flops, flops, batch * (eg * (m * k + k * n) + e_ * m * n), batch * e_ * m * n};
    const double dgrad_bytes = eg * (m * n + k * n) + e_ * m * k;
    const double main_grad_bytes = 2.0 * main_grad_ * k * n;  // read-modify-write
    const double wgrad_bytes = eg * (m * k + m * n) + main_grad_bytes;
    op.backward = {2.0 * flops, 2.0 * flops, batch * (dgrad_bytes + wgrad_bytes),
                   batch * (e_ * m * k + main_grad_bytes)};
    op.forward_gemms = {shape(m, n, k, batch)};
    op.backward_gemms = {shape(m, k, n, batch), shape(k, n, m, batch)};
    workload_.ops.push_back(std::move(op));
  }

  // A matmul between two activations (unfused attention): C[m x n] = A[m x k] B[k x n] per
  // head. Backward: dA = dC B^T and dB = A^T dC.
  void activationMatmul(std::string name, double m, double n, double k, double batch) {
    Op op = makeOp(std::move(name), OpKind::kAttention, true, true);
    const double flops = 2.0 * m * n * k * batch;
    op.forward = {flops, flops, batch * (eg_ * (m * k + k * n) + e_ * m * n), batch * e_ * m * n};
    const double backward_bytes = eg_ * (m * n + k * n) + e_ * m * k + eg_ * (m * k + m * n) + e_ * k * n;
    op.backward = {2.0 * flops, 2.0 * flops, batch * backward_bytes, batch * e_ * (m * k + k * n)};
    op.forward_gemms = {shape(m, n, k, batch)};
    op.backward_gemms = {shape(m, k, n, batch), shape(k, n, m, batch)};
    workload_.ops.push_back(std::move(op));
  }

  // An element-wise (or row-wise) kernel over `elements`: `flops_per_element` forward, the
  // backward doing `backward_factor` times that; bytes per element read + written.
  void elementwise(std::string name, OpKind kind, double elements, double flops_per_element,
                   double forward_bytes_per_element, double backward_bytes_per_element, double backward_factor = -1.0,
                   bool core_attention = false) {
    if (backward_factor < 0.0) backward_factor = options_.elementwise_backward_flops_factor;
    Op op = makeOp(std::move(name), kind, false, core_attention);
    const double flops = elements * flops_per_element;
    op.forward = {flops, flops, elements * forward_bytes_per_element};
    op.backward = {flops * backward_factor, flops * backward_factor, elements * backward_bytes_per_element};
    workload_.ops.push_back(std::move(op));
  }

  // LayerNorm (gpt) or RMSNorm (llama) over `tokens` x hidden. Fused, forward reads x, writes
  // y; backward reads x and dy, writes dx. PyTorch's LayerNorm is one kernel even in eager
  // mode; an eager RMSNorm is torchtitan's chain (FlopsOptions::fused_pointwise).
  void norm(std::string name, double tokens) { normOver(std::move(name), tokens * hidden_); }

  // The model's norm over `elements` (rows of any width: the block's hidden, or Qwen3's
  // query and key heads).
  void normOver(std::string name, double elements) {
    const bool gpt = model_.architecture == Architecture::kGpt;
    const double flops = gpt ? options_.layer_norm_flops_per_element : options_.rms_norm_flops_per_element;
    if (gpt || options_.fused_pointwise) {
      elementwise(std::move(name), OpKind::kNormalization, elements, flops, 2.0 * e_, 3.0 * e_);
      return;
    }
    elementwise(
        std::move(name), OpKind::kNormalization, elements, flops,
        eagerAccessBytes(options_.eager_rms_norm_forward_16bit_accesses, options_.eager_rms_norm_forward_fp32_accesses),
        eagerAccessBytes(options_.eager_rms_norm_backward_16bit_accesses,
                         options_.eager_rms_norm_backward_fp32_accesses));
    launches(options_.eager_rms_norm_kernels_forward, options_.eager_rms_norm_kernels_backward);
  }

  // Rotary position embedding over `elements` of the query and key heads. Fused, it reads and
  // writes each element once either way; eager, torchtitan's apply_rotary_emb casts to fp32,
  // multiplies as complex numbers and casts back, the backward the same.
  // With cos and sin scaled by an attention factor (YaRN), Megatron-Core runs its unfused
  // chain instead of the fused kernel (FlopsOptions::unfused_rope_*), per query and key tensor.
  void rotaryEmbedding(double elements) {
    if (options_.fused_pointwise && model_.rope_attention_factor != 1.0) {
      const FlopsOptions& o = options_;
      elementwise("rope", OpKind::kElementwise, elements, options_.rope_flops_per_element,
                  stridedAccessBytes(o.unfused_rope_forward_accesses, o.unfused_rope_forward_strided_accesses),
                  stridedAccessBytes(o.unfused_rope_backward_accesses, o.unfused_rope_backward_strided_accesses), 1.0);
      launches(2.0 * o.unfused_rope_kernels_forward, 2.0 * o.unfused_rope_kernels_backward);
      return;
    }
    if (options_.fused_pointwise) {
      elementwise("rope", OpKind::kElementwise, elements, options_.rope_flops_per_element, 2.0 * e_, 2.0 * e_, 1.0);
      return;
    }
    const double bytes = eagerAccessBytes(options_.eager_rope_16bit_accesses, options_.eager_rope_fp32_accesses);
    elementwise("rope", OpKind::kElementwise, elements, options_.rope_flops_per_element, bytes, bytes, 1.0);
    launches(options_.eager_rope_kernels, options_.eager_rope_kernels);
  }

  // silu(gate) * up over `elements` of the MLP's width. Fused, it reads both halves and writes
  // one; the backward reads both and the output gradient, writes both gradients. Eager, silu
  // and the product are two kernels and the backward three (FlopsOptions::fused_pointwise).
  void swiglu(std::string name, double elements) {
    if (options_.fused_pointwise) {
      elementwise(std::move(name), OpKind::kElementwise, elements, options_.swiglu_flops_per_element, 3.0 * e_,
                  5.0 * e_);
      return;
    }
    elementwise(std::move(name), OpKind::kElementwise, elements, options_.swiglu_flops_per_element,
                options_.eager_swiglu_forward_accesses * e_, options_.eager_swiglu_backward_accesses * e_);
    launches(options_.eager_swiglu_kernels_forward, options_.eager_swiglu_kernels_backward);
  }

  // The all-to-all dispatcher's sort of the routed tokens by local expert (or its inverse):
  // a copy of `slots` tokens, and of its gradient in the backward
  // (FlopsOptions::moe_sort_by_local_expert).
  void sortByLocalExpert(std::string name, double slots) {
    elementwise(std::move(name), OpKind::kElementwise, slots * hidden_, 0.0, 2.0 * e_, 2.0 * e_, 0.0);
  }

  // A clamped GLU's clamp of both halves over `elements` of the width, outside the fused
  // activation (FlopsOptions::moe_glu_clamp_*).
  void gluClamp(std::string name, double elements) {
    const FlopsOptions& o = options_;
    elementwise(std::move(name), OpKind::kElementwise, elements, 0.0,
                stridedAccessBytes(o.moe_glu_clamp_forward_accesses, o.moe_glu_clamp_forward_strided_accesses),
                stridedAccessBytes(o.moe_glu_clamp_backward_accesses, o.moe_glu_clamp_backward_strided_accesses,
                                   o.moe_glu_clamp_backward_mask_bytes),
                0.0);
    launches(o.moe_glu_clamp_kernels_forward, o.moe_glu_clamp_kernels_backward);
  }

  // The router probabilities' gradient in the experts' weighted activation, the last op:
  // one more reduction pass over `elements` of the width in its backward
  // (FlopsOptions::moe_weighted_activation_backward_*).
  void weightedActivationGradient(double elements) {
    Op& op = workload_.ops.back();
    op.backward.bytes += elements * options_.moe_weighted_activation_backward_extra_accesses * e_;
    op.extra_kernels_backward += options_.moe_weighted_activation_backward_extra_kernels;
  }

  // The experts' FC2 bias added by a loop over the `local_experts`, weighted by the router
  // probabilities, on `slots` tokens (FlopsOptions::moe_expert_bias_*): in fp32 where the
  // probabilities are (moe_probs_fp32), else in the 16-bit type.
  void expertBiasLoop(double slots, double local_experts) {
    const FlopsOptions& o = options_;
    const double elements = slots * hidden_;
    const double flops = o.moe_combine_flops_per_element;
    if (o.moe_probs_fp32) {
      elementwise(
          "moe_expert_fc2_bias", OpKind::kElementwise, elements, flops,
          eagerAccessBytes(o.moe_expert_bias_forward_16bit_accesses, o.moe_expert_bias_forward_fp32_accesses),
          eagerAccessBytes(o.moe_expert_bias_backward_16bit_accesses, o.moe_expert_bias_backward_fp32_accesses));
      launches(o.moe_expert_bias_kernels_forward + local_experts * o.moe_expert_bias_kernels_per_expert_forward,
               o.moe_expert_bias_kernels_backward + local_experts * o.moe_expert_bias_kernels_per_expert_backward);
      return;
    }
    elementwise("moe_expert_fc2_bias", OpKind::kElementwise, elements, flops,
                o.moe_expert_bias_16bit_probs_forward_accesses * e_,
                o.moe_expert_bias_16bit_probs_backward_accesses * e_);
    launches(o.moe_expert_bias_16bit_probs_kernels_forward +
                 local_experts * o.moe_expert_bias_16bit_probs_kernels_per_expert_forward,
             o.moe_expert_bias_16bit_probs_kernels_backward +
                 local_experts * o.moe_expert_bias_16bit_probs_kernels_per_expert_backward);
  }

  // Puts the ops from `first_op` on and the communications from `first_communication` on in
  // recompute module `module` (Op::recompute_module, Communication::recompute_module).
  void recomputeModule(uint32_t module, std::size_t first_op, std::size_t first_communication) {
    for (std::size_t i = first_op; i < workload_.ops.size(); ++i) workload_.ops[i].recompute_module = module;
    for (std::size_t i = first_communication; i < workload_.communications.size(); ++i) {
      workload_.communications[i].recompute_module = module;
    }
  }
  // The ops and communications so far: the first index of the next module.
  [[nodiscard]] std::size_t opCount() const { return workload_.ops.size(); }
  [[nodiscard]] std::size_t communicationCount() const { return workload_.communications.size(); }

  // Residual add after a block; with hidden dropout, bias + dropout + add run fused (Megatron's
  // bias_dropout_add_fused_train) and store the one-byte mask.
  void residual(std::string name, double tokens) {
    const double elements = tokens * hidden_;
    if (hidden_dropout_) {
      const double mask = options_.dropout_mask_bytes;
      elementwise(std::move(name), OpKind::kElementwise, elements,
                  options_.residual_flops_per_element + options_.dropout_flops_per_element, 3.0 * e_ + mask,
                  2.0 * e_ + mask);
    } else {
      // The gradient of an add passes through to both inputs: no backward kernel.
      elementwise(std::move(name), OpKind::kElementwise, elements, options_.residual_flops_per_element, 3.0 * e_, 0.0,
                  0.0);
    }
  }

  void communicate(std::string name, perf::CollectiveOp op, ParallelGroup group, bool backward, double bytes,
                   int64_t count = 1, std::optional<GemmOverlap> beside = std::nullopt) {
    if (count <= 0) return;
    workload_.communications.push_back({std::move(name), op, group, backward, bytes, count, beside});
    workload_.communications.back().issued_before_op = workload_.ops.size();
  }

  // A context-parallel ring exchange: `steps` send/recv calls of `bytes`, each beside one step
  // of the core attention.
  void ringExchange(std::string name, bool backward, double bytes, int64_t steps) {
    communicate(std::move(name), perf::CollectiveOp::kSendRecv, ParallelGroup::kContext, backward, bytes, steps);
    if (steps > 0) workload_.communications.back().beside_attention = true;
  }

  // Tensor-parallel communication around a column-parallel GEMM that reads the block input
  // (`gather`: QKV, MLP fc1) and a row-parallel GEMM that writes the block output (`reduce`).
  // Without SP: all-reduce of the output (forward) and of the input gradient (backward).
  // With SP: all-gather the input / reduce-scatter the output, the mirror in backward, plus
  // the all-gather again in backward of the input that SP stores sharded (for the weight
  // gradient; Korthikanti et al. 2022, section 4.2.2).
  // Under tp_comm_overlap, `gather_op` and `reduce_op` are the two GEMM ops (indices into the
  // workload's ops, from overlapGemms), and each collective is bound to the GEMM Transformer
  // Engine runs it beside (`block` names them): the all-gather to the column-parallel GEMM's
  // forward, the reduce-scatter to the row-parallel GEMM's forward, the gradient all-gather to
  // the row-parallel input-gradient GEMM, the re-gather to the column-parallel input-gradient
  // GEMM and the gradient reduce-scatter to its weight-gradient GEMM.
  // `input_width`: the width of what the block gathers (hidden unless given: multi-head latent
  // attention gathers its compressed latents, latentAttentionBlock). `output_rerun`: whether
  // recompute: selective_op runs the block's output all-reduce again (Communication::
  // op_checkpoint_rerun; its reduce-scatter, saved, never).
  void tensorParallelBlock(const std::string& gather, const std::string& reduce, const TpBlockGemms& block,
                           std::optional<std::size_t> gather_op = std::nullopt,
                           std::optional<std::size_t> reduce_op = std::nullopt, double input_width = 0.0,
                           bool output_rerun = true) {
    if (shard_.tp == 1) return;
    const double width = input_width > 0.0 ? input_width : hidden_;
    const double bytes = tokens() * hidden_ * e_;
    const double input_bytes = tokens() * width * e_;
    const auto group = ParallelGroup::kTensor;
    if (shard_.sequence_parallel) {
      // The all-gathers carry GEMM operands, quantized on their shard in an fp8 run (gemm()):
      // the block input twice and the row-parallel GEMM's output gradient. The
      // reduce-scatters carry 16-bit GEMM outputs.
      const double gathered = tokens() * hidden_ * eg_;
      const double gathered_input = tokens() * width * eg_;
      communicate(gather + "_all_gather", perf::CollectiveOp::kAllGather, group, false, gathered_input, 1,
                  besideGemm(gather_op, false, 0, block.column_fprop, gathered_input));
      communicate(reduce + "_reduce_scatter", perf::CollectiveOp::kReduceScatter, group, false, bytes, 1,
                  besideGemm(reduce_op, false, 0, block.row_fprop, bytes));
      workload_.communications.back().op_checkpoint_rerun = false;
      communicate(reduce + "_grad_all_gather", perf::CollectiveOp::kAllGather, group, true, gathered, 1,
                  besideGemm(reduce_op, true, 0, block.row_dgrad, gathered));
      communicate(gather + "_regather", perf::CollectiveOp::kAllGather, group, true, gathered_input, 1,
                  besideGemm(gather_op, true, 0, block.column_dgrad, gathered_input));
      communicate(gather + "_grad_reduce_scatter", perf::CollectiveOp::kReduceScatter, group, true, input_bytes, 1,
                  besideGemm(gather_op, true, 1, block.column_wgrad, input_bytes));
    } else {
      communicate(reduce + "_all_reduce", perf::CollectiveOp::kAllReduce, group, false, bytes);
      workload_.communications.back().op_checkpoint_rerun = output_rerun;
      communicate(gather + "_grad_all_reduce", perf::CollectiveOp::kAllReduce, group, true, input_bytes);
    }
  }

  void attentionBlock(LayerKind kind);
  void latentAttentionBlock(LayerKind kind);
  void denseMlp(double ffn);
  void moeBlock();
  void sharedExperts();
  void multiTokenPredictionInput();

  // The GEMM `name` a collective of `bytes` (nccl-tests size) runs beside.
  [[nodiscard]] std::optional<GemmOverlap> besideGemm(std::optional<std::size_t> op, bool backward, std::size_t gemm,
                                                      TpOverlapGemm name, double bytes) const {
    if (!op) return std::nullopt;
    const Op& overlapped = workload_.ops[*op];
    const auto& gemms = backward ? overlapped.backward_gemms : overlapped.forward_gemms;
    const TpOverlapGemmSettings& settings = options_.tp_overlap_config[name];
    const bool copy_engines = settings.method == TpOverlapMethod::kRingExchange;
    return GemmOverlap{*op,
                       gemm,
                       settings.method,
                       gemms.at(gemm).chunks,
                       copy_engines ? 0.0 : static_cast<double>(settings.num_sm),
                       bytes * (tp_ - 1.0) / tp_};
  }

  // Under tp_comm_overlap, what the overlaps of the GEMM op just added do to its GEMMs: the
  // forward GEMM (`fprop`), the input-gradient GEMM (`dgrad`) and, for a column-parallel
  // GEMM, the weight-gradient GEMM (`wgrad`; a row-parallel one's runs without a collective).
  // Each gets the SMs its collective holds and is split into the chunks its method runs.
  // Returns the op's index, or nothing when the plan does not overlap.
  std::optional<std::size_t> overlapGemms(TpOverlapGemm fprop, TpOverlapGemm dgrad,
                                          std::optional<TpOverlapGemm> wgrad = std::nullopt) {
    if (!options_.tp_comm_overlap || shard_.tp == 1 || !shard_.sequence_parallel) return std::nullopt;
    Op& op = workload_.ops.back();
    overlap(op.forward_gemms.at(0), fprop);
    overlap(op.backward_gemms.at(0), dgrad);
    if (wgrad) overlap(op.backward_gemms.at(1), *wgrad);
    return workload_.ops.size() - 1;
  }

  // A row-parallel forward GEMM whose output reduce-scatter runs as a ring exchange
  // (CommOverlapP2P::split_overlap_rs) leaves the tp partial outputs its peers sent in a
  // buffer; a reduction kernel on the compute stream then sums them into this rank's shard
  // (reduce_bf16: reads the tp chunks of tokens / tp x hidden, writes one). The pipelined
  // method reduces inside its communication kernels instead.
  void ringExchangeReduction(std::string name, TpOverlapGemm gemm, std::optional<std::size_t> overlapped) {
    if (!overlapped || options_.tp_overlap_config[gemm].method != TpOverlapMethod::kRingExchange) return;
    elementwise(std::move(name), OpKind::kElementwise, tokens() * hidden_, options_.residual_flops_per_element,
                e_ + e_ / tp_, 0.0, 0.0);
  }

  // fc1 (gate and up together, or each of them when unfused).
  std::optional<std::size_t> overlapFc1() {
    return overlapGemms(TpOverlapGemm::kFc1Fprop, TpOverlapGemm::kFc1Dgrad, TpOverlapGemm::kFc1Wgrad);
  }

  void overlap(GemmShape& gemm, TpOverlapGemm name) const {
    const TpOverlapGemmSettings& settings = options_.tp_overlap_config[name];
    gemm.comm_compute_units = static_cast<double>(settings.num_sm);
    gemm.comm_sm_margin = settings.set_sm_margin;
    if (settings.method == TpOverlapMethod::kBulk) return;
    gemm.chunks = settings.method == TpOverlapMethod::kRingExchange ? shard_.tp : settings.num_splits;
    gemm.concurrent_chunks = std::clamp<int64_t>(options_.tp_overlap_compute_streams, 1, gemm.chunks);
  }

 private:
  // Bytes per element of an eager op sequence: accesses in the 16-bit activation type and in fp32.
  [[nodiscard]] double eagerAccessBytes(double sixteen_bit, double fp32) const {
    return sixteen_bit * e_ + fp32 * units::kFp32Bytes;
  }
  // Time-equivalent bytes per element of `accesses` 16-bit accesses, `strided` of them (at
  // most all) and `strided_bytes` more bytes made by strided kernels, each strided byte
  // counted eager_strided_access_cost times (FlopsOptions::eager_strided_access_cost).
  [[nodiscard]] double stridedAccessBytes(double accesses, double strided, double strided_bytes = 0.0) const {
    const double in_strided = std::min(strided, accesses);
    return (accesses - in_strided) * e_ + (in_strided * e_ + strided_bytes) * options_.eager_strided_access_cost;
  }
  // The last op stands for `forward` and `backward` kernels (one is its own).
  void launches(double forward, double backward) {
    workload_.ops.back().extra_kernels_forward = std::max(0.0, forward - 1.0);
    workload_.ops.back().extra_kernels_backward = std::max(0.0, backward - 1.0);
  }

  void coreAttention(double heads, double queries, double keys, double qk_dim, double v_dim);
  // Key positions each query of a layer of `kind` scores against: the whole sequence, or the
  // window of a sliding-window layer.
  [[nodiscard]] double keysOf(LayerKind kind) const;
  void contextParallelExchanges(double kv_width);

  const ModelSpec& model_;
  const MicroBatchShard& shard_;
  const FlopsOptions& options_;
  const double e_;
  const double eg_;
  const double main_grad_;
  const double tp_;
  const double hidden_;
  const bool hidden_dropout_;
  const bool attention_dropout_;
  Workload workload_;
};

}  // namespace trainsim::parallelism::detail
