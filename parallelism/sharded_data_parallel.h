// How a software stack runs ZeRO-3 / fully sharded data parallelism (parallelism.zero: 3):
// the experiment's `training.zero3` mapping, which a stack (configs/stacks/) defaults.
//
// Two runtimes differ in what the iteration graph holds (IterationBuilder):
//  - bucket (trainsim's default; Megatron-Core's and DeepSpeed's buckets): a chunk's
//    parameters are gathered bucket by bucket under its first forward and again, whole,
//    before every later pass (prefetched one pass ahead); every backward's gradients are
//    reduce-scattered once it ends, the last backward's bucket by bucket beneath it.
//  - block (PyTorch FSDP: fully_shard / FullyShardedDataParallel wrapping each transformer
//    block, as torchtitan and llm-foundry apply it): each block's parameters are one
//    all-gather and its gradients one reduce-scatter. A pass waits for each block's gather
//    as it reaches the block; the gather for a block is issued once the block `prefetch + 1`
//    before it has finished (FSDP2 keeps one all-gather ahead of the block that computes,
//    torch/distributed/fsdp/_fully_shard/_fsdp_param_group.py at torch 2.6; FSDP1's
//    limit_all_gathers rate limiter with backward prefetch does the same). The all-gathers and the
//    reduce-scatters run on streams of their own, beside each other.
// With pipeline parallelism (block only) PyTorch's pipelining runtime
// (torch/distributed/pipelining/stage.py at torch 2.6, backward_maybe_with_nosync) keeps
// every micro-batch's gradients unsharded and unreduced until the stage's last backward,
// after which each block's are reduce-scattered; torchtitan then keeps the gathered
// parameters for the whole iteration (reshard_after_forward "default" = not pp_enabled,
// torchtitan/models/llama3/infra/parallelize.py apply_fsdp at v0.2.0).
//
// Hybrid sharding (HSDP, `replicas` > 1, block only, pp = 1): the data-parallel group is split
// into `replicas` shard groups of consecutive members; each shard group holds the model sharded
// as above, gathering each block and reduce-scattering its gradients among its own members, and
// the members holding the same shard (one per shard group) all-reduce each block's gradient
// shard right after its reduce-scatter. PyTorch FSDP1's ShardingStrategy.HYBRID_SHARD
// (torch/distributed/fsdp/api.py ShardingStrategy docs, torch 2.x: "apply FULL_SHARD within a
// node, and replicate parameters across nodes"); FSDP2's fully_shard(mesh=<2-D DeviceMesh>) with
// a replicate and a shard dimension (torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py
// foreach_reduce: the reduce-scatter over the shard dimension, then an all-reduce of its output
// over the replicate dimension); torchtitan's data_parallel_replicate_degree x
// data_parallel_shard_degree (torchtitan/config/job_config.py, parallelize.py apply_fsdp).
#pragma once

#include <cstdint>
#include <string_view>

#include "base/config_node.h"

namespace trainsim::parallelism {

enum class ShardingUnit : uint8_t { kBucket, kBlock };
[[nodiscard]] std::string_view shardingUnitName(ShardingUnit unit);

// When a block's gathered parameters are freed after its forward (torchtitan's
// fsdp_reshard_after_forward policy): always, never (kept for its backward: no second
// gather, more memory), or unless pipeline parallelism is on (torchtitan's "default").
enum class ReshardAfterForward : uint8_t { kAlways, kNever, kUnlessPipelined };
[[nodiscard]] std::string_view reshardAfterForwardName(ReshardAfterForward policy);

struct ShardedDataParallel {
  ShardingUnit unit = ShardingUnit::kBucket;
  ReshardAfterForward reshard_after_forward = ReshardAfterForward::kAlways;
  // Blocks whose gathers may run ahead of the block computing (block only).
  int64_t prefetch = 1;
  // Shard groups the data-parallel group is split into (HSDP); 1 = fully sharded.
  int64_t replicas = 1;

  // The ranks one parameter is sharded over out of a data-parallel group of `data_ranks`
  // (dp x cp): the shard group under HSDP, else the whole group.
  [[nodiscard]] int64_t shardRanks(int64_t data_ranks) const { return data_ranks / replicas; }
  // Whether a block's gathered parameters are freed after its forward, with `pp` stages.
  [[nodiscard]] bool reshardsAfterForward(int64_t pp) const {
    return reshard_after_forward == ReshardAfterForward::kAlways ||
           (reshard_after_forward == ReshardAfterForward::kUnlessPipelined && pp == 1);
  }
};

// A `zero3:` mapping (unit, reshard_after_forward, prefetch, replicas) over `defaults`; throws
// InputError naming the key.
[[nodiscard]] ShardedDataParallel readShardedDataParallel(const ConfigNode& section, ShardedDataParallel defaults);

}  // namespace trainsim::parallelism
