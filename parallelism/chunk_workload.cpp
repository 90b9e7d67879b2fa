#include "parallelism/chunk_workload.h"

#include "parallelism/micro_batch_shard.h"
#include "parallelism/moe_dispatch.h"

namespace trainsim::parallelism {

std::vector<ChunkPart> chunkWorkloads(const Experiment& experiment, int64_t stage, int64_t chunk,
                                      const FlopsOptions& base) {
  const auto& plan = experiment.plan;
  const MicroBatchShard shard = MicroBatchShard::of(experiment.training, plan);
  const ModelSpec& model = experiment.model;
  const int64_t layers = plan.layersOfChunk(model.layers, stage, chunk);
  const FlopsOptions kernels = kernelsFor(experiment, base);  // training.flash_attention
  FlopsOptions layer_kernels = kernels;
  layer_kernels.tp_comm_overlap = plan.tp_comm_overlap;
  layer_kernels.tp_overlap_config = plan.tp_comm_overlap_config;
  if (model.moe) {
    layer_kernels.moe_dispatch_byte_scale = dispatchByteScale(*model.moe, plan, experiment.cluster.gpus_per_node);
    layer_kernels.moe_sort_by_local_expert = plan.moe_dispatcher == MoeDispatcher::kAllToAll;
    layer_kernels.moe_probs_fp32 = plan.moe_dispatcher == MoeDispatcher::kFlex;
  }
  std::vector<ChunkPart> parts;
  // The chunk's first layers run under the plan's recomputation, the rest (with
  // recompute_num_layers) without it.
  const int64_t first = plan.firstLayerOfChunk(model.layers, stage, chunk);
  const int64_t recomputed = plan.recompute == Recompute::kNone ? layers : plan.recomputedLayersOfChunk(layers);
  auto addLayers = [&](int64_t begin, int64_t count, bool beyond) {
    if (count <= 0) return;
    if (model.uniformLayers()) {
      parts.push_back({transformerLayer(model, shard, layer_kernels), static_cast<double>(count), true, beyond});
      return;
    }
    // One part per kind of layer (dense and MoE, sliding-window and full).
    for (const LayerKindCount& group : model.layerKinds(begin, count)) {
      parts.push_back(
          {transformerLayer(model, shard, layer_kernels, group.kind), static_cast<double>(group.count), true, beyond});
    }
  };
  addLayers(first, recomputed, false);
  addLayers(first + recomputed, layers - recomputed, true);
  if (plan.holdsEmbedding(stage, chunk)) parts.push_back({embeddingLayer(model, shard, kernels), 1.0, false});
  if (plan.holdsOutput(stage, chunk)) {
    parts.push_back({outputLayer(model, shard, kernels), 1.0, false});
    if (model.mtp_layers > 0) {
      // The MTP modules follow the output layer on the last stage (Megatron-Core places them
      // there: multi_token_prediction.py, "mtp_on_this_rank" for the last pipeline stage),
      // each an input projection, a transformer block (recomputed like the others) and the
      // shared output head and loss.
      const auto depth = static_cast<double>(model.mtp_layers);
      parts.push_back({multiTokenPredictionInput(model, shard, kernels), depth, false});
      parts.push_back({transformerLayer(model, shard, layer_kernels, model.mtpLayerKind()), depth, true});
      parts.push_back({outputLayer(model, shard, kernels), depth, false});
    }
  }
  return parts;
}

}  // namespace trainsim::parallelism
