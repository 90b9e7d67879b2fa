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
  // The all-gathers and the reduce-scatters one block's parameters take (block only): 1 where
  // a block is one flat parameter (PyTorch FSDP). DeepSpeed's ZeRO-3 gathers and reduces each
  // parameter tensor on its own (deepspeed/runtime/zero/partition_parameters.py at v0.3.16,
  // _allgather_param and _reduce_scatter_gradients): every pass it gathers the tensors above
  // stage3_param_persistence_threshold (1e5 elements; the smaller ones: persistent_gathers_
  // per_block), a Megatron-LM block's 4 weight matrices, and reduce-scatters every tensor's
  // gradient, the block's 12 (weights, biases and norms).
  // The block's bytes are split evenly over the calls; each call pays a collective's latency.
  int64_t gathers_per_block = 1;
  int64_t reduce_scatters_per_block = 1;
  // The tensors of a block gathered once an iteration rather than every pass (DeepSpeed's
  // persistent parameters, those of stage3_param_persistence_threshold or fewer elements: "only
  // communicated once after the parameters are updated", deepspeed/runtime/zero/constants.py at
  // v0.3.16; a Megatron-LM block's 4 biases and 2 LayerNorms' weights and biases: 8): their
  // calls, which move next to nothing, go with the block's gather in each chunk's first forward.
  int64_t persistent_gathers_per_block = 0;
  // Whether each call is issued as DeepSpeed 0.3.13-0.5's ZeRO-3 issues it (same file): a
  // Python loop takes a view of every rank's part (narrow) and PyTorch's list-form collective
  // (torch.distributed.all_gather with a tensor per rank, reduce_scatter with an input per
  // rank) copies each part between the flat NCCL buffer and its tensor one copy at a time on
  // the collective's stream (ProcessGroupNCCL::allgather's post-processing and reduce_scatter's
  // flatten_for_scatter_gather, pytorch/pytorch torch/lib/c10d/ProcessGroupNCCL.cpp, 1.8-1.x).
  // Per call and rank: a memory-bound copy kernel on the GPU, and on the host one Python op
  // and one kernel launch from C++ (HostCosts::per_bare_op_s, per_native_kernel_s). The host
  // does it on the thread that launches the compute, after synchronizing the device
  // (torch.cuda.synchronize() before each gather, the reduction stream's synchronize() after
  // each reduce, deepspeed/runtime/zero/stage3.py): the block computing next waits for it.
  bool list_collectives = false;

  // The ranks one parameter is sharded over out of a data-parallel group of `data_ranks`
  // (dp x cp): the shard group under HSDP, else the whole group.
  [[nodiscard]] int64_t shardRanks(int64_t data_ranks) const { return data_ranks / replicas; }
  // Whether a block's gathered parameters are freed after its forward, with `pp` stages.
  [[nodiscard]] bool reshardsAfterForward(int64_t pp) const {
    return reshard_after_forward == ReshardAfterForward::kAlways ||
           (reshard_after_forward == ReshardAfterForward::kUnlessPipelined && pp == 1);
  }
};

// A `zero3:` mapping (unit, reshard_after_forward, prefetch, replicas, gathers_per_block,
// reduce_scatters_per_block, persistent_gathers_per_block, list_collectives) over `defaults`;
// throws InputError naming the key.
[[nodiscard]] ShardedDataParallel readShardedDataParallel(const ConfigNode& section, ShardedDataParallel defaults);

}  // namespace trainsim::parallelism
