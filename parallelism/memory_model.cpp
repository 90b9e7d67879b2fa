#include "parallelism/memory_model.h"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "base/units.h"

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

// One transformer layer on one GPU; with tp = ep = 1 the sums are ModelSpec::layerParameterCount().
LayerParameters layerParameters(const ModelSpec& model, const ParallelPlan& plan) {
  const auto hidden = static_cast<double>(model.hidden_size);
  const auto query = static_cast<double>(model.queryDim());
  const auto kv = static_cast<double>(model.kvDim());
  const auto tp = static_cast<double>(plan.tp);
  const bool gpt = model.architecture == Architecture::kGpt;
  LayerParameters layer;
  // QKV split by columns (whole heads), the output projection by rows.
  layer.dense = hidden * (2.0 * query + 2.0 * kv) / tp;
  if (gpt) layer.dense += (query + 2.0 * kv) / tp + hidden;  // QKV biases split, output bias replicated
  layer.dense += gpt ? 4.0 * hidden : 2.0 * hidden;          // norms, replicated
  if (model.moe) {
    const double local_experts = static_cast<double>(model.moe->experts) / static_cast<double>(plan.ep);
    layer.dense += hidden * static_cast<double>(model.moe->experts);  // router, replicated
    layer.expert =
        local_experts * mlpWeights(model.architecture, hidden, static_cast<double>(model.moe->ffn_hidden_size), tp);
  } else {
    layer.dense += mlpWeights(model.architecture, hidden, static_cast<double>(model.ffn_hidden_size), tp);
  }
  return layer;
}

// Activation bytes of the core attention (what selective recompute drops).
double coreAttentionBytes(const ModelSpec& model, const MicroBatchShard& shard, const MemoryOptions& options) {
  const double heads = static_cast<double>(model.attention_heads) / static_cast<double>(shard.tp);
  const double batch = static_cast<double>(shard.micro_batch_size) * heads;
  const double queries = static_cast<double>(shard.seq_len) / static_cast<double>(shard.cp);
  if (options.kernels.fused_attention) return kFp32Bytes * batch * queries;  // the logsumexp
  const double scores = batch * queries * static_cast<double>(shard.seq_len);
  const double e = shard.activationBytes();
  // Softmax output; with dropout also its mask and its output (the input of the context matmul).
  return scores * (e + (model.hasAttentionDropout() ? options.kernels.dropout_mask_bytes + e : 0.0));
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

int64_t communicatorCount(const ParallelPlan& plan) {
  int64_t count = 0;
  for (int64_t degree : {plan.tp, plan.pp, plan.dp, plan.cp, plan.ep}) count += degree > 1 ? 1 : 0;
  return count;
}

}  // namespace

StateBytes stateBytesPerParameter(const TrainingSpec& training, const MemoryOptions& options) {
  // Adam's m and v, or SGD's momentum, in the optimizer's state type.
  const double moment_bytes = training.optimizer_state_precision == Precision::kBf16 ? 2.0 : 4.0;
  const double moments = (training.optimizer == Optimizer::kAdam ? 2.0 : 1.0) * moment_bytes;
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

StageParameters stageParameters(const ModelSpec& model, const TrainingSpec& training, const ParallelPlan& plan,
                                int64_t stage, int64_t layers) {
  const LayerParameters layer = layerParameters(model, plan);
  StageParameters parameters;
  parameters.dense = static_cast<double>(layers) * layer.dense;
  parameters.expert = static_cast<double>(layers) * layer.expert;
  parameters.largest_layer = layer.dense + layer.expert;
  const auto hidden = static_cast<double>(model.hidden_size);
  const double table = static_cast<double>(model.vocab_size) * hidden / static_cast<double>(plan.tp);
  const bool gpt = model.architecture == Architecture::kGpt;
  if (stage == 0) {
    parameters.dense += table;  // vocabulary-parallel input embedding
    // GPT-2/3 learned positions, one row per position, replicated over tp (Megatron's
    // position_embeddings is a plain nn.Embedding(max_position_embeddings = seq_len, h)).
    if (gpt) parameters.dense += static_cast<double>(training.seq_len) * hidden;
  }
  if (stage == plan.pp - 1) {
    parameters.dense += gpt ? 2.0 * hidden : hidden;  // final norm
    if (!model.tied_embeddings || plan.pp > 1) parameters.dense += table;
  }
  return parameters;
}

double layerActivationBytes(const ModelSpec& model, const MicroBatchShard& shard, Recompute recompute,
                            const MemoryOptions& options) {
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

  if (recompute == Recompute::kFull) return e * replicated * hidden;  // the layer's input only

  double bytes = 0.0;
  // Attention block.
  bytes += e * replicated * hidden;         // input-norm input
  bytes += eg * replicated * hidden;        // QKV GEMM input (norm output)
  bytes += e * tokens * (query + kv) / tp;  // Q and K (after RoPE) for the scores
  bytes += e * tokens * kv / tp;            // V for the context
  bytes += eg * tokens * query / tp;        // output-projection input (the attention context)
  if (dropout) bytes += mask * replicated * hidden;
  // MLP or MoE block.
  bytes += e * replicated * hidden;  // norm input
  // The expert MLP (or the dense one) on `slots` tokens: fc1 input, then GELU input and fc2
  // input (gpt) or the SwiGLU input of twice the width and the fc2 input (llama).
  auto mlp = [&](double slots, double ffn, double fc1_input_tokens) {
    return eg * fc1_input_tokens * hidden + (e * (gated ? 2.0 : 1.0) + eg) * slots * ffn / tp;
  };
  if (model.moe) {
    const double top_k = static_cast<double>(model.moe->top_k);
    bytes += e * replicated * hidden;                                            // router input
    bytes += kFp32Bytes * replicated * static_cast<double>(model.moe->experts);  // fp32 router probabilities
    bytes += mlp(tokens * top_k, static_cast<double>(model.moe->ffn_hidden_size), tokens * top_k);
  } else {
    bytes += mlp(tokens, static_cast<double>(model.ffn_hidden_size), replicated);
  }
  if (dropout) bytes += mask * replicated * hidden;
  if (recompute == Recompute::kNone) bytes += coreAttentionBytes(model, shard, options);
  return bytes;
}

int64_t inFlightMicrobatches(const ParallelPlan& plan, int64_t microbatches, int64_t stage) {
  assert(stage >= 0 && stage < plan.pp);
  if (plan.schedule == PipelineSchedule::kGpipe) return microbatches;
  if (plan.virtual_stages > 1) {
    const int64_t total = microbatches * plan.virtual_stages;
    if (microbatches == plan.pp) return total;  // Megatron runs every forward as warm-up then
    const int64_t warmup = 2 * (plan.pp - stage - 1) + (plan.virtual_stages - 1) * plan.pp;
    return std::min(warmup + 1, total);
  }
  return std::min(plan.pp - stage, microbatches);
}

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
  const double expert_replicas = dense_replicas / static_cast<double>(plan.ep);
  auto sharded = [](double bytes, double replicas, bool shard_it) { return shard_it ? bytes / replicas : bytes; };

  const double per_layer = layerActivationBytes(model, shard, plan.recompute, options);
  double working_set = 0.0;  // one layer recomputed during its backward, for one micro-batch
  if (plan.recompute != Recompute::kNone) {
    working_set = layerActivationBytes(model, shard, Recompute::kNone, options) -
                  (plan.recompute == Recompute::kSelective ? per_layer : 0.0);
  }
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

    const double chunk_layers = static_cast<double>(memory.layers) / v;
    memory.activations = static_cast<double>(memory.in_flight) * chunk_layers * per_layer + working_set;
    if (stage == 0) {
      // The first model chunk holds about in_flight / v of the stage's micro-batches.
      const double first_chunk = std::ceil(static_cast<double>(memory.in_flight) / v);
      memory.activations += first_chunk * embeddingActivationBytes(model, shard, options);
    }
    if (stage == plan.pp - 1) {
      // The last stage starts each micro-batch's backward right after its forward (1F1B); gpipe keeps all.
      const double last_chunk = plan.schedule == PipelineSchedule::kGpipe ? static_cast<double>(microbatches) : 1.0;
      memory.activations += last_chunk * outputActivationBytes(model, shard, options);
    }

    double buffers = 0.0;
    if (plan.pp > 1) buffers += 2.0 * e * shard.replicatedRegionTokens() * hidden;  // send + receive
    if (shard.sequence_parallel) buffers += e * shard.tokens() * hidden;            // an all-gathered input
    if (plan.zero >= 2) {
      const double bucket = options.grad_buckets.bucketParameters(plan);
      buffers += std::min(options.grad_buckets_in_flight * bucket, p.total()) * state.gradients;
    }
    if (plan.zero >= 3) buffers += options.zero3_gathered_layers * p.largest_layer * state.weights;
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
