#include "parallelism/sharded_data_parallel.h"

namespace trainsim::parallelism {

// More blocks in flight than any framework keeps (FSDP2 and FSDP1 keep one, DeepSpeed's
// prefetch bucket a few); a model has at most a few hundred blocks.
constexpr int64_t kMaxPrefetchBlocks = 64;

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
  section.allowKeys({"unit", "reshard_after_forward", "prefetch", "replicas"});
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
  return defaults;
}

}  // namespace trainsim::parallelism
