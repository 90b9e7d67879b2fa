#include "parallelism/transformer_workload.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "base/units.h"

namespace trainsim::parallelism {
namespace {

using perf::CollectiveOp;

// The logsumexp of flash attention and the router's softmax are kept in fp32.
using units::kFp32Bytes;
// One FP8 (e4m3 / e5m2) element: what a quantization writes per copy of its tensor.
constexpr double kFp8ElementBytes = 1.0;

int64_t shapeDim(double value) { return std::max<int64_t>(1, std::llround(value)); }

GemmShape shape(double m, double n, double k, double batch = 1.0) {
  return {shapeDim(m), shapeDim(n), shapeDim(k), shapeDim(batch)};
}

Op makeOp(std::string name, OpKind kind, bool matmul, bool core_attention) {
  Op op;
  op.name = std::move(name);
  op.kind = kind;
  op.matmul = matmul;
  op.core_attention = core_attention;
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
constexpr TpBlockGemms kAttentionGemms = {TpOverlapGemm::kQkvFprop, TpOverlapGemm::kQkvDgrad, TpOverlapGemm::kQkvWgrad,
                                          TpOverlapGemm::kProjFprop, TpOverlapGemm::kProjDgrad};
constexpr TpBlockGemms kMlpGemms = {TpOverlapGemm::kFc1Fprop, TpOverlapGemm::kFc1Dgrad, TpOverlapGemm::kFc1Wgrad,
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

  // LayerNorm (gpt) or RMSNorm (llama) over `tokens` x hidden. Forward reads x, writes y;
  // backward reads x and dy, writes dx.
  void norm(std::string name, double tokens) {
    const double per_element = model_.architecture == Architecture::kGpt ? options_.layer_norm_flops_per_element
                                                                         : options_.rms_norm_flops_per_element;
    elementwise(std::move(name), OpKind::kNormalization, tokens * hidden_, per_element, 2.0 * e_, 3.0 * e_);
  }

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

  void communicate(std::string name, CollectiveOp op, ParallelGroup group, bool backward, double bytes,
                   int64_t count = 1, std::optional<GemmOverlap> beside = std::nullopt) {
    if (count <= 0) return;
    workload_.communications.push_back({std::move(name), op, group, backward, bytes, count, beside});
  }

  // A context-parallel ring exchange: `steps` send/recv calls of `bytes`, each beside one step
  // of the core attention.
  void ringExchange(std::string name, bool backward, double bytes, int64_t steps) {
    communicate(std::move(name), CollectiveOp::kSendRecv, ParallelGroup::kContext, backward, bytes, steps);
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
  // attention gathers its compressed latents, latentAttentionBlock).
  void tensorParallelBlock(const std::string& gather, const std::string& reduce, const TpBlockGemms& block,
                           std::optional<std::size_t> gather_op = std::nullopt,
                           std::optional<std::size_t> reduce_op = std::nullopt, double input_width = 0.0) {
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
      communicate(gather + "_all_gather", CollectiveOp::kAllGather, group, false, gathered_input, 1,
                  besideGemm(gather_op, false, 0, block.column_fprop, gathered_input));
      communicate(reduce + "_reduce_scatter", CollectiveOp::kReduceScatter, group, false, bytes, 1,
                  besideGemm(reduce_op, false, 0, block.row_fprop, bytes));
      communicate(reduce + "_grad_all_gather", CollectiveOp::kAllGather, group, true, gathered, 1,
                  besideGemm(reduce_op, true, 0, block.row_dgrad, gathered));
      communicate(gather + "_regather", CollectiveOp::kAllGather, group, true, gathered_input, 1,
                  besideGemm(gather_op, true, 0, block.column_dgrad, gathered_input));
      communicate(gather + "_grad_reduce_scatter", CollectiveOp::kReduceScatter, group, true, input_bytes, 1,
                  besideGemm(gather_op, true, 1, block.column_wgrad, input_bytes));
    } else {
      communicate(reduce + "_all_reduce", CollectiveOp::kAllReduce, group, false, bytes);
      communicate(gather + "_grad_all_reduce", CollectiveOp::kAllReduce, group, true, input_bytes);
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
    const double lse = kFp32Bytes * batch * queries;  // fp32 logsumexp per query and head
    Op op = makeOp("flash_attention", OpKind::kAttention, true, true);
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
  const auto qkv = overlapGemms(TpOverlapGemm::kQkvFprop, TpOverlapGemm::kQkvDgrad, TpOverlapGemm::kQkvWgrad);
  if (model_.architecture == Architecture::kLlama) {
    // Rotary position embedding on the query and key heads of this rank.
    elementwise("rope", OpKind::kElementwise, t * (query + kv) / tp_, options_.rope_flops_per_element, 2.0 * e_,
                2.0 * e_, 1.0);
  }
  const double queries = static_cast<double>(shard_.seq_len) / static_cast<double>(shard_.cp);
  coreAttention(heads, queries, keysOf(kind), head_dim, head_dim);
  gemm("attention_output_projection", t, hidden_, query / tp_, 1.0, WeightGemm::kTransformerEngineGatheredGradient);
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
  communicate("ring_attention_dkv_return", CollectiveOp::kSendRecv, ParallelGroup::kContext, true, kv_chunk);
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
  norm("input_norm", replicatedTokens());
  if (mla.q_lora_rank > 0) {
    gemm("q_down_projection", shard_tokens, q_rank, hidden_);
    elementwise("q_latent_norm", OpKind::kNormalization, t * q_rank, rms, 2.0 * e_, 3.0 * e_);
    gemm("q_up_projection", t, heads * qk, q_rank, 1.0, WeightGemm::kTransformerEngineGatheredInput);
  } else {
    gemm("q_projection", t, heads * qk, hidden_, 1.0, WeightGemm::kTransformerEngineGatheredInput);
  }
  gemm("kv_down_projection", shard_tokens, kv_rank + rope, hidden_);
  elementwise("kv_latent_norm", OpKind::kNormalization, t * kv_rank, rms, 2.0 * e_, 3.0 * e_);
  gemm("kv_up_projection", t, heads * (nope + v), kv_rank, 1.0, WeightGemm::kTransformerEngineGatheredInput);
  // RoPE on each head's rope part of the query and on the one shared rope key.
  elementwise("rope", OpKind::kElementwise, t * (heads * rope + rope), options_.rope_flops_per_element, 2.0 * e_,
              2.0 * e_, 1.0);
  const double queries = static_cast<double>(shard_.seq_len) / static_cast<double>(shard_.cp);
  coreAttention(heads, queries, keysOf(kind), qk, v);
  gemm("attention_output_projection", t, hidden_, heads * v, 1.0, WeightGemm::kTransformerEngineGatheredGradient);
  const auto projection = overlapGemms(TpOverlapGemm::kProjFprop, TpOverlapGemm::kProjDgrad);
  ringExchangeReduction("attention_output_ring_reduction", TpOverlapGemm::kProjFprop, projection);
  residual("attention_residual", replicatedTokens());
  // What is gathered: the q latent (or the block input without q compression) and the kv latent with the rope key.
  const double latent_width = (mla.q_lora_rank > 0 ? q_rank : hidden_) + kv_rank + rope;
  tensorParallelBlock("attention_input", "attention_output", kAttentionGemms, std::nullopt, projection, latent_width);
  contextParallelExchanges(t * heads * (qk + v) * e_);
}

void WorkloadBuilder::denseMlp(double ffn) {
  const double t = tokens();
  const double width = ffn / tp_;
  norm("mlp_norm", replicatedTokens());
  std::optional<std::size_t> fc1;  // the GEMM beside the block input's collectives (the gate's when unfused)
  if (model_.architecture == Architecture::kGpt) {
    gemm("mlp_fc1", t, width, hidden_, 1.0, WeightGemm::kTransformerEngineGatheredInput);
    fc1 = overlapFc1();
    // Bias + GELU fused (Megatron's bias_gelu_impl): reads the fc1 output, writes its GELU.
    elementwise("mlp_gelu", OpKind::kElementwise, t * width, options_.gelu_flops_per_element, 2.0 * e_, 3.0 * e_);
  } else {
    if (options_.fuse_gate_up) {
      gemm("mlp_gate_up", t, 2.0 * width, hidden_, 1.0, WeightGemm::kTransformerEngineGatheredInput);
      fc1 = overlapFc1();
    } else {
      gemm("mlp_gate", t, width, hidden_, 1.0, WeightGemm::kTransformerEngineGatheredInput);
      fc1 = overlapFc1();
      gemm("mlp_up", t, width, hidden_, 1.0, WeightGemm::kTransformerEngineGatheredInput);
      (void)overlapFc1();
    }
    // silu(gate) * up: reads both halves, writes one; backward reads both and the output
    // gradient, writes both gradients.
    elementwise("mlp_swiglu", OpKind::kElementwise, t * width, options_.swiglu_flops_per_element, 3.0 * e_, 5.0 * e_);
  }
  gemm("mlp_fc2", t, hidden_, width, 1.0, WeightGemm::kTransformerEngineGatheredGradient);
  const auto fc2 = overlapGemms(TpOverlapGemm::kFc2Fprop, TpOverlapGemm::kFc2Dgrad);
  ringExchangeReduction("mlp_output_ring_reduction", TpOverlapGemm::kFc2Fprop, fc2);
  residual("mlp_residual", replicatedTokens());
  tensorParallelBlock("mlp_input", "mlp_output", kMlpGemms, fc1, fc2);
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
  gemm("moe_router", routed, experts, hidden_, 1.0, WeightGemm::kSixteenBit);
  // Softmax and top-k over the expert scores (fp32).
  elementwise("moe_router_topk", OpKind::kElementwise, routed * experts, options_.softmax_flops_per_element,
              2.0 * kFp32Bytes, 3.0 * kFp32Bytes);
  // Permute: copy every token once per chosen expert, grouped by expert.
  const double slot_bytes = routed * top_k * hidden_ * e_ * load * options_.moe_dispatch_byte_scale;
  elementwise("moe_permute", OpKind::kElementwise, routed * top_k * hidden_, 0.0, 2.0 * e_, 2.0 * e_, 0.0);
  if (shard_.ep > 1) {
    communicate("moe_dispatch_all_to_all", CollectiveOp::kAllToAll, ParallelGroup::kExpert, false, slot_bytes);
    communicate("moe_combine_all_to_all", CollectiveOp::kAllToAll, ParallelGroup::kExpert, false, slot_bytes);
    communicate("moe_combine_grad_all_to_all", CollectiveOp::kAllToAll, ParallelGroup::kExpert, true, slot_bytes);
    communicate("moe_dispatch_grad_all_to_all", CollectiveOp::kAllToAll, ParallelGroup::kExpert, true, slot_bytes);
  }
  if (shard_.etp > 1) {
    const double gathered = expert_tokens * hidden_ * e_;
    const auto group = ParallelGroup::kExpertTensor;
    communicate("moe_tokens_all_gather", CollectiveOp::kAllGather, group, false, gathered);
    communicate("moe_output_reduce_scatter", CollectiveOp::kReduceScatter, group, false, gathered);
    communicate("moe_output_grad_all_gather", CollectiveOp::kAllGather, group, true, gathered);
    communicate("moe_tokens_grad_reduce_scatter", CollectiveOp::kReduceScatter, group, true, gathered);
  }
  if (model_.architecture == Architecture::kGpt) {
    gemm("moe_expert_fc1", per_expert, width, hidden_, local_experts);
    elementwise("moe_expert_gelu", OpKind::kElementwise, expert_tokens * width, options_.gelu_flops_per_element,
                2.0 * e_, 3.0 * e_);
  } else {
    if (options_.fuse_gate_up) {
      gemm("moe_expert_gate_up", per_expert, 2.0 * width, hidden_, local_experts);
    } else {
      gemm("moe_expert_gate", per_expert, width, hidden_, local_experts);
      gemm("moe_expert_up", per_expert, width, hidden_, local_experts);
    }
    elementwise("moe_expert_swiglu", OpKind::kElementwise, expert_tokens * width, options_.swiglu_flops_per_element,
                3.0 * e_, 5.0 * e_);
  }
  gemm("moe_expert_fc2", per_expert, hidden_, width, local_experts);
  // Unpermute: weight each expert output by its router probability and sum a token's top_k.
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
  const double width = static_cast<double>(moe.shared_experts * moe.shared_ffn_hidden_size) / tp_;
  if (model_.architecture == Architecture::kGpt) {
    gemm("shared_expert_fc1", t, width, hidden_, 1.0, WeightGemm::kTransformerEngineGatheredInput);
    elementwise("shared_expert_gelu", OpKind::kElementwise, t * width, options_.gelu_flops_per_element, 2.0 * e_,
                3.0 * e_);
  } else {
    gemm("shared_expert_gate_up", t, 2.0 * width, hidden_, 1.0, WeightGemm::kTransformerEngineGatheredInput);
    elementwise("shared_expert_swiglu", OpKind::kElementwise, t * width, options_.swiglu_flops_per_element, 3.0 * e_,
                5.0 * e_);
  }
  gemm("shared_expert_fc2", t, hidden_, width, 1.0, WeightGemm::kTransformerEngineGatheredGradient);
  if (moe.shared_expert_gate) {
    gemm("shared_expert_gate", replicatedTokens(), 1.0, hidden_, 1.0, WeightGemm::kSixteenBit);
  }
  // The shared output added to the routed one (scaled by the gate where there is one).
  elementwise("shared_expert_add", OpKind::kElementwise, replicatedTokens() * hidden_,
              options_.moe_combine_flops_per_element, 3.0 * e_, 0.0, 0.0);
  tensorParallelBlock("shared_expert_input", "shared_expert_output", kMlpGemms);
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
    communicate("mtp_embedding_all_reduce", CollectiveOp::kAllReduce, group, false, bytes);
    communicate("mtp_projection_output_all_gather", CollectiveOp::kAllGather, group, false, bytes);
    communicate("mtp_projection_input_grad_all_reduce", CollectiveOp::kAllReduce, group, true, 2.0 * bytes);
  }
}

double sumFlops(const std::vector<Op>& ops, bool matmul_only, bool backward) {
  double total = 0.0;
  for (const Op& op : ops) {
    if (matmul_only && !op.matmul) continue;
    total += backward ? op.backward.flops : op.forward.flops;
  }
  return total;
}

}  // namespace

std::string_view opKindName(OpKind kind) {
  switch (kind) {
    case OpKind::kGemm: return "gemm";
    case OpKind::kAttention: return "attention";
    case OpKind::kElementwise: return "elementwise";
    case OpKind::kNormalization: return "normalization";
    case OpKind::kEmbedding: return "embedding";
    case OpKind::kLoss: return "loss";
  }
  return "unknown";
}

std::string_view parallelGroupName(ParallelGroup group) {
  switch (group) {
    case ParallelGroup::kTensor: return "tp";
    case ParallelGroup::kContext: return "cp";
    case ParallelGroup::kExpert: return "ep";
    case ParallelGroup::kExpertTensor: return "etp";
    case ParallelGroup::kPipeline: return "pp";
  }
  return "unknown";
}

double GemmShape::flops() const {
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) * static_cast<double>(batch);
}

int64_t GemmShape::concurrentRows() const {
  if (chunks <= 1) return m;
  return std::max<int64_t>(1, m * std::clamp<int64_t>(concurrent_chunks, 1, chunks) / chunks);
}

double GemmShape::chunkGroups() const {
  if (chunks <= 1) return 1.0;
  return static_cast<double>(chunks) / static_cast<double>(std::clamp<int64_t>(concurrent_chunks, 1, chunks));
}

double Workload::forwardFlops(bool matmul_only) const { return sumFlops(ops, matmul_only, false); }
double Workload::backwardFlops(bool matmul_only) const { return sumFlops(ops, matmul_only, true); }

double Workload::coreAttentionForwardFlops() const {
  double total = 0.0;
  for (const Op& op : ops) {
    if (op.core_attention && op.matmul) total += op.forward.flops;
  }
  return total;
}

const Op* Workload::find(std::string_view name) const {
  for (const Op& op : ops) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

Workload transformerLayer(const ModelSpec& model, const MicroBatchShard& shard, const FlopsOptions& options) {
  return transformerLayer(model, shard, options, model.layerKind(model.layers - 1));
}

Workload transformerLayer(const ModelSpec& model, const MicroBatchShard& shard, const FlopsOptions& options,
                          LayerKind kind) {
  WorkloadBuilder builder(model, shard, options);
  builder.attentionBlock(kind);
  if (model.moe && kind.moe) {
    builder.moeBlock();
  } else {
    builder.denseMlp(static_cast<double>(model.ffn_hidden_size));
  }
  return builder.take();
}

Workload multiTokenPredictionInput(const ModelSpec& model, const MicroBatchShard& shard, const FlopsOptions& options) {
  WorkloadBuilder builder(model, shard, options);
  builder.multiTokenPredictionInput();
  return builder.take();
}

Workload embeddingLayer(const ModelSpec& model, const MicroBatchShard& shard, const FlopsOptions& options) {
  WorkloadBuilder builder(model, shard, options);
  const double e = builder.e();
  const double elements = builder.tokens() * builder.hidden();
  // Vocabulary-parallel lookup: every tp rank writes the rows of the tokens in its part of the
  // vocabulary (zeros elsewhere), then the partial outputs are summed over tp. Backward
  // scatter-adds the output gradient rows into the table's dense 16-bit gradient (read, write).
  builder.elementwise("token_embedding", OpKind::kEmbedding, elements, 0.0,
                      2.0 * e + options.token_id_bytes / builder.hidden(), 2.0 * e, 1.0);
  // The dense gradient of this rank's part of the table: zero-filled, then added to the fp32
  // main gradient (backward only; see FlopsOptions::main_grad_bytes).
  const double table = static_cast<double>(model.vocab_size) / builder.tp() * builder.hidden();
  builder.elementwise("embedding_table_gradient", OpKind::kEmbedding, table, 0.0, 0.0,
                      2.0 * e + 2.0 * builder.mainGradBytes(), 0.0);
  if (shard.tp > 1) {
    const double bytes = elements * e;
    if (shard.sequence_parallel) {
      builder.communicate("embedding_reduce_scatter", CollectiveOp::kReduceScatter, ParallelGroup::kTensor, false,
                          bytes);
      builder.communicate("embedding_grad_all_gather", CollectiveOp::kAllGather, ParallelGroup::kTensor, true, bytes);
    } else {
      builder.communicate("embedding_all_reduce", CollectiveOp::kAllReduce, ParallelGroup::kTensor, false, bytes);
    }
  }
  if (model.architecture == Architecture::kGpt) {
    const double local = builder.replicatedTokens() * builder.hidden();
    // Learned absolute positions (GPT-2/3): add the position rows; backward accumulates their gradient.
    builder.elementwise("position_embedding", OpKind::kEmbedding, local, options.residual_flops_per_element, 3.0 * e,
                        e + 2.0 * builder.mainGradBytes(), 1.0);
    if (builder.hiddenDropout()) {
      const double mask = options.dropout_mask_bytes;
      builder.elementwise("embedding_dropout", OpKind::kElementwise, local, options.dropout_flops_per_element,
                          2.0 * e + mask, 2.0 * e + mask);
    }
  }
  return builder.take();
}

Workload outputLayer(const ModelSpec& model, const MicroBatchShard& shard, const FlopsOptions& options) {
  WorkloadBuilder builder(model, shard, options);
  const double e = builder.e();
  const double tokens = builder.tokens();
  const double vocab = static_cast<double>(model.vocab_size) / builder.tp();
  builder.norm("final_norm", builder.replicatedTokens());
  if (shard.tp > 1) {
    const double bytes = tokens * builder.hidden() * e;
    if (shard.sequence_parallel) {
      builder.communicate("logits_input_all_gather", CollectiveOp::kAllGather, ParallelGroup::kTensor, false, bytes);
      builder.communicate("logits_input_regather", CollectiveOp::kAllGather, ParallelGroup::kTensor, true, bytes);
      builder.communicate("logits_input_grad_reduce_scatter", CollectiveOp::kReduceScatter, ParallelGroup::kTensor,
                          true, bytes);
    } else {
      builder.communicate("logits_input_grad_all_reduce", CollectiveOp::kAllReduce, ParallelGroup::kTensor, true,
                          bytes);
    }
  }
  // Column-parallel over the vocabulary (the tied input embedding when tied_embeddings).
  builder.gemm("logits", tokens, vocab, builder.hidden(), 1.0, WorkloadBuilder::WeightGemm::kSixteenBit);
  // Vocabulary-parallel cross-entropy (Megatron's vocab_parallel_cross_entropy): reads the
  // logits, keeps the softmax in fp32; backward turns it into (softmax - one-hot) / tokens.
  // Fused: one pass over the 16-bit logits each way (FlopsOptions::fused_cross_entropy).
  const double fp32 = options.loss_element_bytes;
  const double forward_bytes_per_logit = options.fused_cross_entropy
                                             ? options.fused_cross_entropy_forward_accesses * e
                                             : e + options.cross_entropy_forward_fp32_accesses * fp32;
  const double backward_bytes_per_logit = options.fused_cross_entropy
                                              ? options.fused_cross_entropy_backward_accesses * e
                                              : options.cross_entropy_backward_fp32_accesses * fp32 + e;
  builder.elementwise("cross_entropy_loss", OpKind::kLoss, tokens * vocab, options.cross_entropy_flops_per_element,
                      forward_bytes_per_logit, backward_bytes_per_logit, 2.0 / options.cross_entropy_flops_per_element);
  if (shard.tp > 1) {
    // The per-token maximum, the target logit and the sum of exponentials, each all-reduced in fp32.
    builder.communicate("cross_entropy_all_reduce", CollectiveOp::kAllReduce, ParallelGroup::kTensor, false,
                        tokens * fp32, 3);
  }
  return builder.take();
}

double modelFlopsPerIteration(const ModelSpec& model, const TrainingSpec& training, const FlopsOptions& options) {
  const MicroBatchShard sequence = MicroBatchShard::wholeSequence(training);
  double layers = 0.0;  // every transformer layer, kind by kind
  for (const LayerKindCount& group : model.layerKinds(0, model.layers)) {
    const Workload layer = transformerLayer(model, sequence, options, group.kind);
    layers += static_cast<double>(group.count) * (layer.forwardFlops(true) + layer.backwardFlops(true));
  }
  const Workload output = outputLayer(model, sequence, options);
  const Workload input = embeddingLayer(model, sequence, options);
  double per_sequence = layers + output.forwardFlops(true) + output.backwardFlops(true) + input.forwardFlops(true) +
                        input.backwardFlops(true);
  if (model.mtp_layers > 0) {
    // Each MTP depth: its input projection, its transformer block and the shared output head.
    const Workload mtp_input = multiTokenPredictionInput(model, sequence, options);
    const Workload mtp_layer = transformerLayer(model, sequence, options, model.mtpLayerKind());
    double depth = 0.0;
    for (const Workload* part : {&mtp_input, &mtp_layer, &output})
      depth += part->forwardFlops(true) + part->backwardFlops(true);
    per_sequence += static_cast<double>(model.mtp_layers) * depth;
  }
  return per_sequence * static_cast<double>(training.global_batch_size);
}

double hardwareFlopsPerIteration(const ModelSpec& model, const TrainingSpec& training, Recompute recompute,
                                 const FlopsOptions& options) {
  const double model_flops = modelFlopsPerIteration(model, training, options);
  if (recompute == Recompute::kNone) return model_flops;
  const MicroBatchShard sequence = MicroBatchShard::wholeSequence(training);
  auto rerunOf = [&](LayerKind kind) {
    const Workload layer = transformerLayer(model, sequence, options, kind);
    return recompute == Recompute::kFull ? layer.forwardFlops(true) : layer.coreAttentionForwardFlops();
  };
  double rerun = 0.0;  // over every transformer layer (the MTP blocks' too: they are recomputable like the others)
  for (const LayerKindCount& group : model.layerKinds(0, model.layers)) {
    rerun += rerunOf(group.kind) * static_cast<double>(group.count);
  }
  if (model.mtp_layers > 0) rerun += rerunOf(model.mtpLayerKind()) * static_cast<double>(model.mtp_layers);
  return model_flops + rerun * static_cast<double>(training.global_batch_size);
}

}  // namespace trainsim::parallelism
