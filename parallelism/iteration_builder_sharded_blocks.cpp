// Phases 5 and 7 of IterationBuilder::build (iteration_builder.h) for ZeRO-3 in transformer
// blocks (training.zero3.unit: block; sharded_data_parallel.h says what PyTorch FSDP does and
// where): each block's parameter all-gather before the block computes, prefetched, and its
// gradients' reduce-scatter after, on two chains of their own per data-parallel group.
#include <deque>
#include <vector>

#include "parallelism/iteration_builder.h"
#include "parallelism/micro_batch_shard.h"

namespace trainsim::parallelism {

using sim::TaskId;

int64_t IterationBuilder::shardedBlocks(const StageSchedule& schedule, int64_t stage, std::size_t step) const {
  const PipelineStep& pass = schedule.order[step];
  // With pipeline parallelism only a chunk's first forward gathers by block; its gradients
  // are reduced after its last backward, whole (PyTorch pipelining's post-backward).
  if (experiment_.plan.pp > 1 && (pass.pass != PassKind::kForward || pass.microbatch != 0)) return 0;
  return std::max<int64_t>(1, experiment_.plan.layersOfChunk(experiment_.model.layers, stage, pass.chunk));
}

std::vector<std::vector<TaskId>> IterationBuilder::addShardedBlockCollectives(IterationGraph& result,
                                                                              const std::vector<StageSchedule>& stages,
                                                                              const BucketTasks& buckets) {
  for (auto& rank : result.ranks) {
    if (rank.simulated) rank.last_backward_end = rank.step_end.back();
  }
  std::vector<std::vector<TaskId>> reductions(static_cast<std::size_t>(layout_.ranks()));
  for (int64_t r = 0; r < layout_.ranks(); ++r) {
    const int64_t stage = layout_.coordinate(r).pp;
    for (const ReplicaGroup& replicas : replicaGroupsLedBy(r)) {
      addBlockCollectives(result, stages[static_cast<std::size_t>(stage)], buckets, replicas, stage, reductions);
    }
  }
  return reductions;
}

// The block collectives of one data-parallel group (`replicas`) over its stage's schedule.
// Without pipeline parallelism every pass gathers its blocks (a backward only where the
// forward resharded them, and not the block the forward ended with: torchtitan leaves the
// last block gathered, parallelize.py apply_fsdp) and every backward reduce-scatters each
// block's gradients as the block is done. With it, a chunk's first forward gathers its blocks
// and, after its last backward, each block's gradients are reduce-scattered in turn. Under
// hybrid sharding (training.zero3.replicas > 1, pp = 1) the group is split into shard groups of
// consecutive members, each with its own gathers and reduce-scatters, and after a block's
// reduce-scatters the members holding the same shard all-reduce it on a stream of its own, so
// the next block's reduce-scatter does not wait for it (FSDP2's foreach_reduce: the all-reduce
// stream waits for the reduce-scatter stream; FSDP1's _reduce_grad: _all_reduce_stream, "so
// that the all-reduce overlaps with the reduce-scatter"; sharded_data_parallel.h). Returns, per
// member, the chunk's last reduction in `reductions`.
void IterationBuilder::addBlockCollectives(IterationGraph& result, const StageSchedule& schedule,
                                           const BucketTasks& buckets, const ReplicaGroup& replicas, int64_t stage,
                                           std::vector<std::vector<TaskId>>& reductions) {
  const auto& plan = experiment_.plan;
  const ShardedDataParallel& sharding = experiment_.training.zero3;
  const bool pipelined = plan.pp > 1;
  const bool reshard = sharding.reshardsAfterForward(plan.pp);
  const MicroBatchShard shard = MicroBatchShard::of(experiment_.training, plan);
  const double gather_bytes = shard.parameterGatherBytes();
  const double grad_bytes = options_.grad_reduce_bytes_per_parameter.value_or(shard.mainGradientBytes());
  const std::vector<int64_t>& group = replicas.ranks;
  std::vector<int64_t> members;
  for (int64_t member : group) {
    if (simulated(member)) members.push_back(member);
  }
  // A shard group: its ranks, its simulated members, its two chains and the gathered blocks'
  // compute, oldest first, as far back as the prefetch reaches (a gather is issued once the
  // block `prefetch + 1` before it has computed: its buffer is free).
  struct ShardGroup {
    std::vector<int64_t> ranks;
    std::vector<int64_t> members;
    TaskId gather_chain = sim::kNoTask;
    TaskId reduce_chain = sim::kNoTask;
    std::deque<std::vector<TaskId>> consumers;
  };
  const std::size_t shard_count =
      group.size() % static_cast<std::size_t>(sharding.replicas) == 0 ? static_cast<std::size_t>(sharding.replicas) : 1;
  const std::size_t shard_size = group.size() / shard_count;
  std::vector<ShardGroup> shards(shard_count);
  for (std::size_t g = 0; g < shard_count; ++g) {
    const auto first = group.begin() + static_cast<std::ptrdiff_t>(g * shard_size);
    shards[g].ranks.assign(first, first + static_cast<std::ptrdiff_t>(shard_size));
    for (int64_t member : shards[g].ranks) {
      if (simulated(member)) shards[g].members.push_back(member);
    }
  }
  // Whose compute a shard group's collectives wait for: its simulated members, or, where
  // symmetric mode simulates none of them, the simulated ones of the group (the replicas run
  // alike).
  auto waitedOn = [&](const ShardGroup& sharded) -> const std::vector<int64_t>& {
    return sharded.members.empty() ? members : sharded.members;
  };
  auto partsOf = [&](int64_t member, std::size_t step) -> const std::vector<TaskId>& {
    return buckets.blocks[static_cast<std::size_t>(member)][step];
  };
  // A block's gather or reduce-scatter takes `calls` calls (training.zero3.gathers_per_block,
  // reduce_scatters_per_block), each through PyTorch's list-form collectives where the stack
  // issues them so: a copy kernel per rank beside each call (sharded_data_parallel.h).
  auto chainAfter = [&](TaskId& chain, std::vector<TaskId> dependencies, perf::CollectiveOp op, double bytes,
                        const std::vector<int64_t>& ranks, int64_t calls = 1, bool list_calls = false) {
    if (chain != sim::kNoTask) dependencies.push_back(chain);
    std::vector<TaskId> call_tasks;
    chain =
        addCollective(result, op, ranks, bytes, calls, std::move(dependencies), TaskCategory::kDataComm, &call_tasks);
    for (TaskId call : call_tasks) contendWithCompute(result, call, ranks);
    if (list_calls) {
      const auto parts = static_cast<double>(calls) * static_cast<double>(ranks.size());
      const double copies = parts * timer_.memoryBoundSeconds(2.0 * bytes / parts);
      chain = result.graph.addCompute(sim::secondsToSimTime(copies), {chain}, tagged(TaskCategory::kDataComm));
    }
    return chain;
  };
  // The host's share of list-form calls (HostCosts::per_bare_op_s, per_native_kernel_s: a
  // Python view and a launched copy per rank and call), done with the device synchronized on
  // the thread that launches the compute: before issuing a block's gather the host waits for
  // the compute and the gathers before it, then spends that share, and only then launches the
  // block computing next, which waits for it (none after the last). In a backward the share
  // holds the reduce-scatter calls of a block as well: their hook runs between the same two
  // blocks' launches.
  const bool list_form = sharding.list_collectives;
  const double per_call_rank_s = options_.host.per_bare_op_s + options_.host.per_native_kernel_s;
  auto hostStall = [&](const ShardGroup& sharded, std::vector<TaskId> dependencies, int64_t calls,
                       const std::vector<TaskId>& next) {
    const double seconds = static_cast<double>(calls) * static_cast<double>(sharded.ranks.size()) * per_call_rank_s;
    if (seconds <= 0.0) return sim::kNoTask;
    const TaskId stall =
        result.graph.addCompute(sim::secondsToSimTime(seconds), dependencies, tagged(TaskCategory::kHostDispatch));
    for (TaskId task : next) result.graph.addDependency(stall, task);
    return stall;
  };
  // Under hybrid sharding: the ranks holding each shard position, one per shard group, and the
  // chain of all-reduces of each (its last one the position's last reduction).
  std::vector<std::vector<int64_t>> shard_replicas;
  std::vector<TaskId> replica_reductions;
  if (shard_count > 1) {
    shard_replicas.resize(shard_size);
    replica_reductions.assign(shard_size, sim::kNoTask);
    for (std::size_t j = 0; j < shard_size; ++j) {
      for (const ShardGroup& sharded : shards) shard_replicas[j].push_back(sharded.ranks[j]);
    }
  }
  for (std::size_t i = 0; i < schedule.order.size(); ++i) {
    const PipelineStep& step = schedule.order[i];
    const bool backward = step.pass == PassKind::kBackward;
    const auto blocks = static_cast<std::size_t>(shardedBlocks(schedule, stage, i));
    const double block_parameters = replicas.chunk_parameters / static_cast<double>(std::max<std::size_t>(1, blocks));
    const bool after_own_forward = backward && i > 0 && schedule.order[i - 1].pass == PassKind::kForward &&
                                   schedule.order[i - 1].chunk == step.chunk &&
                                   schedule.order[i - 1].microbatch == step.microbatch;
    const bool gathers = pipelined ? blocks > 0 : !backward || reshard;
    for (std::size_t k = 0; k < blocks; ++k) {
      for (ShardGroup& sharded : shards) {
        std::deque<std::vector<TaskId>>& consumers = sharded.consumers;
        // The block the forward ended with is still gathered: it takes its place in the window
        // the prefetch looks back over, without a gather of its own.
        if (gathers && backward && k == 0 && after_own_forward) {
          if (consumers.size() > static_cast<std::size_t>(sharding.prefetch)) consumers.pop_front();
          std::vector<TaskId> parts;
          for (int64_t member : waitedOn(sharded)) parts.push_back(partsOf(member, i)[k]);
          consumers.push_back(std::move(parts));
        } else if (gathers) {
          std::vector<TaskId> dependencies;
          if (consumers.size() > static_cast<std::size_t>(sharding.prefetch)) {
            dependencies = consumers.front();
            consumers.pop_front();
          }
          // The host issues the gather once the device is idle (the compute waited on and the
          // gathers before), then launches the block computing next: that block waits for it.
          // A chunk's first forward also gathers the block's persistent tensors.
          const int64_t calls =
              sharding.gathers_per_block +
              (step.pass == PassKind::kForward && step.microbatch == 0 ? sharding.persistent_gathers_per_block : 0);
          if (list_form) {
            std::vector<TaskId> synchronized = dependencies;
            if (sharded.gather_chain != sim::kNoTask) synchronized.push_back(sharded.gather_chain);
            const int64_t host_calls = calls + (backward ? sharding.reduce_scatters_per_block : 0);
            const TaskId stall = hostStall(sharded, std::move(synchronized), host_calls,
                                           consumers.empty() ? std::vector<TaskId>{} : consumers.front());
            if (stall != sim::kNoTask) dependencies = {stall};
          }
          const TaskId gather = chainAfter(sharded.gather_chain, dependencies, perf::CollectiveOp::kAllGather,
                                           block_parameters * gather_bytes, sharded.ranks, calls, list_form);
          for (int64_t member : sharded.members) {
            result.graph.addDependency(gather, partsOf(member, i)[k]);
            RankTasks& rank = result.ranks[static_cast<std::size_t>(member)];
            if (rank.step_gather[i] == sim::kNoTask) rank.step_gather[i] = gather;
          }
          std::vector<TaskId> parts;
          for (int64_t member : waitedOn(sharded)) parts.push_back(partsOf(member, i)[k]);
          consumers.push_back(std::move(parts));
        }
      }
      if (backward && !pipelined) {
        std::vector<TaskId> scattered;
        for (ShardGroup& sharded : shards) {
          std::vector<TaskId> done;
          for (int64_t member : waitedOn(sharded)) done.push_back(partsOf(member, i)[k]);
          scattered.push_back(chainAfter(sharded.reduce_chain, done, perf::CollectiveOp::kReduceScatter,
                                         block_parameters * grad_bytes, sharded.ranks,
                                         sharding.reduce_scatters_per_block, list_form));
        }
        for (std::size_t j = 0; j < shard_replicas.size(); ++j) {
          chainAfter(replica_reductions[j], scattered, perf::CollectiveOp::kAllReduce,
                     block_parameters / static_cast<double>(shard_size) * grad_bytes, shard_replicas[j]);
        }
      }
    }
    // The chunk's gradients are final after its last backward (its last weight-gradient pass
    // where the schedule splits the backward).
    if (step.pass == PassKind::kForward || i != schedule.last_backward[static_cast<std::size_t>(step.chunk)]) {
      continue;
    }
    if (pipelined) {
      const int64_t chunk_blocks =
          std::max<int64_t>(1, plan.layersOfChunk(experiment_.model.layers, stage, step.chunk));
      std::vector<TaskId> ended;
      for (int64_t member : members) ended.push_back(result.ranks[static_cast<std::size_t>(member)].step_end[i]);
      for (int64_t k = 0; k < chunk_blocks; ++k) {
        chainAfter(shards.front().reduce_chain, ended, perf::CollectiveOp::kReduceScatter,
                   replicas.chunk_parameters / static_cast<double>(chunk_blocks) * grad_bytes, group,
                   sharding.reduce_scatters_per_block, list_form);
      }
    }
    for (const ShardGroup& sharded : shards) {
      for (std::size_t j = 0; j < sharded.ranks.size(); ++j) {
        const int64_t member = sharded.ranks[j];
        if (!simulated(member)) continue;
        reductions[static_cast<std::size_t>(member)].push_back(replica_reductions.empty() ? sharded.reduce_chain
                                                                                          : replica_reductions[j]);
      }
    }
  }
}

}  // namespace trainsim::parallelism
