#include "goodput/checkpoint_cost.h"

#include <algorithm>

#include "parallelism/memory_model.h"

namespace trainsim::goodput {

CheckpointCost checkpointCost(const parallelism::Experiment& experiment, const JobDevices& devices,
                              const topology::CheckpointStorage& storage) {
  // The FP8 weight cache is rebuilt from the weights, not saved; it is the only part of the
  // state bytes a memory constant (configs/defaults/memory.yaml) sizes, so no default of
  // those reaches a checkpoint's size.
  parallelism::MemoryOptions options;
  options.fp8_weight_copy_bytes = 0.0;
  const parallelism::StateBytes per_parameter = parallelism::stateBytesPerParameter(experiment.training, options);
  CheckpointCost cost;
  cost.bytes = experiment.model.parameterCount() * (per_parameter.weights + per_parameter.optimizer);
  const auto nodes = static_cast<double>(devices.nodes);
  const double write_Bps = std::min(storage.write_GBps, nodes * storage.node_write_GBps) * 1e9;
  const double read_Bps = std::min(storage.read_GBps, nodes * storage.node_read_GBps) * 1e9;
  cost.write_s = storage.latency_s + cost.bytes / write_Bps;
  cost.load_s = storage.latency_s + cost.bytes / read_Bps;
  cost.async = experiment.training.checkpoint.async;
  const double shard_bytes = cost.bytes / static_cast<double>(devices.gpus);
  cost.stall_s = cost.async ? shard_bytes / (experiment.cluster.gpu.pcie_bandwidth_GBps * 1e9) : cost.write_s;
  return cost;
}

}  // namespace trainsim::goodput
