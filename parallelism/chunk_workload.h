// What one model chunk of one pipeline stage runs per micro-batch: its share of the
// transformer layers, plus the embedding on the first chunk of the first stage and the
// output layer and loss on the last chunk of the last stage. The iteration builder times
// these into compute tasks and the op profile (op_profile.h) reports them op by op, so both
// read the same list.
#pragma once

#include <cstdint>
#include <vector>

#include "parallelism/experiment.h"
#include "parallelism/transformer_workload.h"

namespace trainsim::parallelism {

struct ChunkPart {
  Workload workload;
  double repeats = 1.0;  // layers of the chunk for the transformer layer; 1 otherwise
  // Transformer layers: what activation recomputation reruns. Megatron checkpoints inside the
  // transformer block only (TransformerBlock / ParallelTransformer with --recompute-granularity
  // full or selective); the embedding, the output layer and the loss run once.
  bool recomputable = false;
  // A transformer layer past the chunk's parallelism.recompute_num_layers: it keeps its
  // activations and runs without recomputation.
  bool beyond_recompute_layers = false;
};

// `base`: the kernel choices (kernelsFor(training, base) applies training.flash_attention;
// the plan's tp_comm_overlap is applied to the transformer layers). `stage` in [0, pp),
// `chunk` in [0, virtual_stages); needs a plan that passed checkPlan.
[[nodiscard]] std::vector<ChunkPart> chunkWorkloads(const Experiment& experiment, int64_t stage, int64_t chunk,
                                                    const FlopsOptions& base);

}  // namespace trainsim::parallelism
