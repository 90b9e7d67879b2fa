#include "parallelism/sharded_data_parallel.h"

namespace trainsim::parallelism {

// More blocks in flight than any framework keeps (FSDP2 and FSDP1 keep one, DeepSpeed's
// prefetch bucket a few); a model has at most a few hundred blocks.
constexpr int64_t kMaxPrefetchBlocks = 64;
// More parameter tensors than a transformer block holds (a Llama block in Hugging Face's
// modules: 9, norms included; a mixture-of-experts block's experts are not gathered apart).
constexpr int64_t kMaxCollectivesPerBlock = 64;

std::string_view shardingUnitName(ShardingUnit unit) {
  switch (unit) {
    case ShardingUnit::kBucket: return "bucket";
    case ShardingUnit::kBlock: return "block";
  }
  return "unknown";
}

std::string_view reshardAfterForwardName(ReshardAfterForward policy) {
  switch (policy) {
    case ReshardAfterForward::kAlways: return "always";
    case ReshardAfterForward::kNever: return "never";
    case ReshardAfterForward::kUnlessPipelined: return "unless_pipelined";
  }
  return "unknown";
}

ShardedDataParallel readShardedDataParallel(const ConfigNode& section, ShardedDataParallel defaults) {
  section.requireMap();
  section.allowKeys({"unit", "reshard_after_forward", "prefetch", "replicas", "gathers_per_block",
                     "reduce_scatters_per_block", "persistent_gathers_per_block", "list_collectives"});
  if (auto unit = section.optionalChild("unit")) {
    defaults.unit = unit->asEnum({"bucket", "block"}) == "block" ? ShardingUnit::kBlock : ShardingUnit::kBucket;
  }
  if (auto policy = section.optionalChild("reshard_after_forward")) {
    const std::string name = policy->asEnum({"always", "never", "unless_pipelined"});
    for (const auto value :
         {ReshardAfterForward::kAlways, ReshardAfterForward::kNever, ReshardAfterForward::kUnlessPipelined}) {
      if (reshardAfterForwardName(value) == name) defaults.reshard_after_forward = value;
    }
  }
  defaults.prefetch = section.integerIn("prefetch", defaults.prefetch, 0, kMaxPrefetchBlocks);
  defaults.replicas = section.positiveInteger("replicas", defaults.replicas);
  defaults.gathers_per_block =
      section.integerIn("gathers_per_block", defaults.gathers_per_block, 1, kMaxCollectivesPerBlock);
  defaults.reduce_scatters_per_block =
      section.integerIn("reduce_scatters_per_block", defaults.reduce_scatters_per_block, 1, kMaxCollectivesPerBlock);
  defaults.persistent_gathers_per_block = section.integerIn(
      "persistent_gathers_per_block", defaults.persistent_gathers_per_block, 0, kMaxCollectivesPerBlock);
  if (auto list = section.optionalChild("list_collectives")) defaults.list_collectives = list->asBool();
  return defaults;
}

}  // namespace trainsim::parallelism
