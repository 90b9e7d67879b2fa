// What one checkpoint of a training run weighs and costs: its size from the model's
// parameters and the optimizer's states, its write and load times on the cluster's
// checkpoint storage, and the stall it puts on the training step.
#pragma once

#include "goodput/job_exposure.h"
#include "parallelism/experiment.h"
#include "topology/reliability_spec.h"

namespace trainsim::goodput {

struct CheckpointCost {
  double bytes = 0.0;    // the whole checkpoint, over all shards
  double write_s = 0.0;  // until it is durable on the storage
  double load_s = 0.0;   // reading it back after a restart
  // How long the training step stops for it: the whole write when synchronous; with
  // training.checkpoint.async, the copy of each GPU's shard to host memory over its PCIe link.
  double stall_s = 0.0;
  bool async = false;
};

// A checkpoint holds what a restart needs to continue bit for bit: the weights and the
// optimizer's states (for mixed precision the fp32 master weights and Adam's moments), as
// Megatron-Core's distributed checkpoints and PyTorch DCP store them; gradients are not kept
// (they are recomputed by the next step). Sizes per parameter from the memory model
// (parallelism::stateBytesPerParameter), without FP8's cached weight copies. Every node of the
// job writes its share at once (Megatron-Core's fully parallel save, DCP's per-rank shards),
// so a write takes latency + bytes / min(aggregate, nodes x per node); a load likewise.
[[nodiscard]] CheckpointCost checkpointCost(const parallelism::Experiment& experiment, const JobDevices& devices,
                                            const topology::CheckpointStorage& storage);

}  // namespace trainsim::goodput
