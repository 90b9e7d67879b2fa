#include "parallelism/transformer_workload.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "parallelism/workload_builder.h"

namespace trainsim::parallelism {
namespace {

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
  detail::WorkloadBuilder builder(model, shard, options);
  builder.attentionBlock(kind);
  if (model.moe && kind.moe) {
    builder.moeBlock();
  } else {
    builder.denseMlp(static_cast<double>(model.ffn_hidden_size));
  }
  return builder.take();
}

Workload multiTokenPredictionInput(const ModelSpec& model, const MicroBatchShard& shard, const FlopsOptions& options) {
  detail::WorkloadBuilder builder(model, shard, options);
  builder.multiTokenPredictionInput();
  return builder.take();
}

Workload embeddingLayer(const ModelSpec& model, const MicroBatchShard& shard, const FlopsOptions& options) {
  detail::WorkloadBuilder builder(model, shard, options);
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
      builder.communicate("embedding_reduce_scatter", perf::CollectiveOp::kReduceScatter, ParallelGroup::kTensor, false,
                          bytes);
      builder.communicate("embedding_grad_all_gather", perf::CollectiveOp::kAllGather, ParallelGroup::kTensor, true,
                          bytes);
    } else {
      builder.communicate("embedding_all_reduce", perf::CollectiveOp::kAllReduce, ParallelGroup::kTensor, false, bytes);
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
  detail::WorkloadBuilder builder(model, shard, options);
  const double e = builder.e();
  const double tokens = builder.tokens();
  const double vocab = static_cast<double>(model.vocab_size) / builder.tp();
  builder.norm("final_norm", builder.replicatedTokens());
  if (shard.tp > 1) {
    const double bytes = tokens * builder.hidden() * e;
    if (shard.sequence_parallel) {
      builder.communicate("logits_input_all_gather", perf::CollectiveOp::kAllGather, ParallelGroup::kTensor, false,
                          bytes);
      builder.communicate("logits_input_regather", perf::CollectiveOp::kAllGather, ParallelGroup::kTensor, true, bytes);
      builder.communicate("logits_input_grad_reduce_scatter", perf::CollectiveOp::kReduceScatter,
                          ParallelGroup::kTensor, true, bytes);
    } else {
      builder.communicate("logits_input_grad_all_reduce", perf::CollectiveOp::kAllReduce, ParallelGroup::kTensor, true,
                          bytes);
    }
  }
  // Column-parallel over the vocabulary (the tied input embedding when tied_embeddings).
  builder.gemm("logits", tokens, vocab, builder.hidden(), 1.0, detail::WorkloadBuilder::WeightGemm::kSixteenBit);
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
    builder.communicate("cross_entropy_all_reduce", perf::CollectiveOp::kAllReduce, ParallelGroup::kTensor, false,
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

double rerunShare(const Op& op, Recompute recompute, uint32_t recompute_modules) {
  switch (recompute) {
    case Recompute::kNone: return 0.0;
    case Recompute::kSelective: return (op.recompute_module & recompute_modules) != 0 ? 1.0 : 0.0;
    case Recompute::kFull: return 1.0;
    case Recompute::kSelectiveOp: return op.op_checkpoint_rerun;
  }
  return 0.0;
}

double hardwareFlopsPerIteration(const ModelSpec& model, const TrainingSpec& training, Recompute recompute,
                                 const FlopsOptions& options) {
  ParallelPlan plan;
  plan.recompute = recompute;
  return hardwareFlopsPerIteration(model, training, plan, options);
}

double hardwareFlopsPerIteration(const ModelSpec& model, const TrainingSpec& training, const ParallelPlan& plan,
                                 const FlopsOptions& options) {
  const double model_flops = modelFlopsPerIteration(model, training, options);
  const Recompute recompute = plan.recompute;
  if (recompute == Recompute::kNone) return model_flops;
  const MicroBatchShard sequence = MicroBatchShard::wholeSequence(training);
  auto rerunOf = [&](LayerKind kind) {
    const Workload layer = transformerLayer(model, sequence, options, kind);
    if (recompute == Recompute::kFull) return layer.forwardFlops(true);
    double rerun = 0.0;  // selective: the modules' matmuls; selective_op: each matmul's rerun share
    for (const Op& op : layer.ops) {
      if (op.matmul) rerun += rerunShare(op, recompute, plan.recompute_modules) * op.forward.flops;
    }
    return rerun;
  };
  // Over the recomputed transformer layers: every one, or each chunk's first
  // recompute_num_layers (the MTP blocks are recomputable like the others).
  std::vector<LayerKindCount> recomputed;
  if (plan.partialRecompute(model.layers)) {
    for (int64_t stage = 0; stage < plan.pp; ++stage) {
      for (int64_t chunk = 0; chunk < plan.virtual_stages; ++chunk) {
        const int64_t first = plan.firstLayerOfChunk(model.layers, stage, chunk);
        const int64_t count = plan.recomputedLayersOfChunk(plan.layersOfChunk(model.layers, stage, chunk));
        for (const LayerKindCount& group : model.layerKinds(first, count)) recomputed.push_back(group);
      }
    }
  } else {
    recomputed = model.layerKinds(0, model.layers);
  }
  double rerun = 0.0;
  for (const LayerKindCount& group : recomputed) rerun += rerunOf(group.kind) * static_cast<double>(group.count);
  if (model.mtp_layers > 0) rerun += rerunOf(model.mtpLayerKind()) * static_cast<double>(model.mtp_layers);
  return model_flops + rerun * static_cast<double>(training.global_batch_size);
}

}  // namespace trainsim::parallelism
