#include "parallelism/chunk_workload.h"

#include "parallelism/micro_batch_shard.h"

namespace trainsim::parallelism {

std::vector<ChunkPart> chunkWorkloads(const Experiment& experiment, int64_t stage, int64_t chunk,
                                      const FlopsOptions& base) {
  const auto& plan = experiment.plan;
  const MicroBatchShard shard = MicroBatchShard::of(experiment.training, plan);
  const auto layers = static_cast<double>(plan.layersOfChunk(experiment.model.layers, stage, chunk));
  const FlopsOptions kernels = kernelsFor(experiment, base);  // training.flash_attention
  FlopsOptions layer_kernels = kernels;
  layer_kernels.tp_comm_overlap = plan.tp_comm_overlap;
  layer_kernels.tp_overlap_config = plan.tp_comm_overlap_config;
  std::vector<ChunkPart> parts;
  parts.push_back({transformerLayer(experiment.model, shard, layer_kernels), layers, true});
  if (stage == 0 && chunk == 0) parts.push_back({embeddingLayer(experiment.model, shard, kernels), 1.0, false});
  if (stage == plan.pp - 1 && chunk == plan.virtual_stages - 1) {
    parts.push_back({outputLayer(experiment.model, shard, kernels), 1.0, false});
  }
  return parts;
}

}  // namespace trainsim::parallelism
