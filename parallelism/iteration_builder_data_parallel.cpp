// The data-parallel phases of IterationBuilder::build (iteration_builder.h): gradient
// reduction per chunk (bucketed, overlapped with the last backward when asked), the
// optimizer step, and the ZeRO parameter all-gathers, with ZeRO-3's per-pass gathers and
// reduce-scatters.
#include <vector>

#include "parallelism/iteration_builder.h"
#include "parallelism/micro_batch_shard.h"
#include "parallelism/optimizer_step.h"

namespace trainsim::parallelism {

using sim::TaskId;

// Phase 5: each chunk's gradients reduced over its data-parallel group (all-reduce, or
// reduce-scatter into the shards under ZeRO), once per group from its first rank, on one
// NCCL stream (in order). Bucket by bucket under the chunk's last backward when the
// reduction overlaps it (Megatron-Core's DDP buckets, gradient_buckets.h), else after the
// rank's last pass. Returns, per rank, the reductions its optimizer step waits for.
std::vector<std::vector<TaskId>> IterationBuilder::addGradientReductions(IterationGraph& result,
                                                                         const std::vector<StageSchedule>& stages,
                                                                         const BucketTasks& buckets) {
  for (auto& rank : result.ranks) {
    if (rank.simulated) rank.last_backward_end = rank.step_end.back();
  }
  const auto& plan = experiment_.plan;
  std::vector<std::vector<TaskId>> reductions(static_cast<std::size_t>(layout_.ranks()));
  if (!features_.data_parallel) return reductions;
  const perf::CollectiveOp reduce =
      plan.zero >= 1 ? perf::CollectiveOp::kReduceScatter : perf::CollectiveOp::kAllReduce;
  const MicroBatchShard shard = MicroBatchShard::of(experiment_.training, plan);
  const double grad_bytes = options_.grad_reduce_bytes_per_parameter.value_or(shard.mainGradientBytes());
  for (int64_t r = 0; r < layout_.ranks(); ++r) {
    for (const ReplicaGroup& replicas : replicaGroupsLedBy(r)) {
      addChunkReductions(result, stages, buckets, replicas, layout_.coordinate(r).pp, reduce, grad_bytes, reductions);
    }
  }
  return reductions;
}

// Part of phase 5: the reductions of one data-parallel group (`replicas`), chunk by chunk.
void IterationBuilder::addChunkReductions(IterationGraph& result, const std::vector<StageSchedule>& stages,
                                          const BucketTasks& buckets, const ReplicaGroup& replicas, int64_t stage,
                                          perf::CollectiveOp reduce, double grad_bytes,
                                          std::vector<std::vector<TaskId>>& reductions) {
  const std::vector<int64_t>& group = replicas.ranks;
  for (int64_t c = 0; c < experiment_.plan.virtual_stages; ++c) {
    const int64_t count = features_.overlap_grads ? bucketCount(stage) : 1;
    const double bytes = replicas.chunk_parameters / static_cast<double>(count) * grad_bytes;
    TaskId previous = sim::kNoTask;
    if (features_.zero3) {
      previous = addZero3Reductions(result, stages[static_cast<std::size_t>(stage)], c, group, reduce,
                                    replicas.chunk_parameters * grad_bytes);
    }
    for (int64_t b = 0; b < count; ++b) {
      std::vector<TaskId> dependencies;
      for (int64_t member : group) {
        const auto& rank = result.ranks[static_cast<std::size_t>(member)];
        if (!rank.simulated) continue;
        dependencies.push_back(features_.overlap_grads
                                   ? buckets.gradient[static_cast<std::size_t>(member)][static_cast<std::size_t>(c)]
                                                     [static_cast<std::size_t>(b)]
                                   : rank.last_backward_end);
      }
      if (previous != sim::kNoTask) dependencies.push_back(previous);  // one NCCL stream: buckets in order
      previous = addCollective(result, reduce, group, bytes, 1, dependencies, TaskCategory::kDataComm);
      contendWithCompute(result, previous, group);
    }
    for (int64_t member : group) {
      if (simulated(member)) reductions[static_cast<std::size_t>(member)].push_back(previous);
    }
  }
}

// Part of phase 5 under ZeRO-3: each micro-batch's gradients are reduce-scattered into the
// shards as its backward ends (there is no unsharded accumulation buffer); the last
// backward's are the bucketed ones of addGradientReductions. One NCCL stream: in order.
// Returns the last of them (kNoTask if none).
TaskId IterationBuilder::addZero3Reductions(IterationGraph& result, const StageSchedule& schedule, int64_t chunk,
                                            const std::vector<int64_t>& group, perf::CollectiveOp reduce,
                                            double bytes) {
  TaskId previous = sim::kNoTask;
  const std::size_t last = schedule.last_backward[static_cast<std::size_t>(chunk)];
  for (std::size_t i = 0; i < last; ++i) {
    if (schedule.order[i].pass != PassKind::kBackward || schedule.order[i].chunk != chunk) continue;
    std::vector<TaskId> dependencies;
    for (int64_t member : group) {
      if (simulated(member)) dependencies.push_back(result.ranks[static_cast<std::size_t>(member)].step_end[i]);
    }
    if (previous != sim::kNoTask) dependencies.push_back(previous);
    previous = addCollective(result, reduce, group, bytes, 1, dependencies, TaskCategory::kDataComm);
    contendWithCompute(result, previous, group);
  }
  return previous;
}

// Phase 6: the optimizer step on each rank's compute stream, a memory-bound kernel over the
// rank's parameters (optimizer_step.h), after its last pass and its gradient reductions.
void IterationBuilder::addOptimizerSteps(IterationGraph& result, const std::vector<std::vector<TaskId>>& reductions) {
  const auto& plan = experiment_.plan;
  for (int64_t r = 0; r < layout_.ranks(); ++r) {
    RankTasks& rank = result.ranks[static_cast<std::size_t>(r)];
    if (!rank.simulated) continue;
    const StageParameters& parameters = stage_parameters_[static_cast<std::size_t>(layout_.coordinate(r).pp)];
    const double traffic =
        optimizerStepTraffic(experiment_.training, plan, parameters.dense, parameters.expert, options_.optimizer_step);
    std::vector<TaskId> dependencies = reductions[static_cast<std::size_t>(r)];
    dependencies.push_back(rank.step_end.back());
    rank.optimizer = result.graph.addCompute(sim::secondsToSimTime(timer_.memoryBoundSeconds(traffic)), dependencies,
                                             tagged(TaskCategory::kOptimizer, rank.compute_stream));
  }
}

// Phase 5, DualPipe: each GPU's chunk of one direction and its mirror GPU's chunk of the other
// are copies of one stage, whose gradients are summed before either copy steps (deepseek-ai/
// DualPipe examples/example_dualpipe.py adds each rank's gradients to its mirror's). Each pair of
// copies exchanges its gradients, as fp32 main gradients or the reduction's bytes, once the
// chunk's last weight-gradient pass has run on both; the exchange runs beside the data-parallel
// reduction and the optimizer step waits for both.
void IterationBuilder::addCopyGradientExchanges(IterationGraph& result, const std::vector<StageSchedule>& stages,
                                                std::vector<std::vector<TaskId>>& reductions) {
  const auto& plan = experiment_.plan;
  if (!runsBothDirections(plan.schedule)) return;
  const MicroBatchShard shard = MicroBatchShard::of(experiment_.training, plan);
  const double grad_bytes = options_.grad_reduce_bytes_per_parameter.value_or(shard.mainGradientBytes());
  for (int64_t r = 0; r < layout_.ranks(); ++r) {
    RankCoordinate coordinate = layout_.coordinate(r);
    const int64_t stage = coordinate.pp;
    if (stage >= plan.pp / 2 || !result.ranks[static_cast<std::size_t>(r)].simulated) continue;
    const int64_t mirror_stage = plan.pp - 1 - stage;
    coordinate.pp = mirror_stage;
    const int64_t mirror = layout_.rank(coordinate);  // the same tp, cp and dp coordinates
    const StageSchedule& own = stages[static_cast<std::size_t>(stage)];
    const StageSchedule& other = stages[static_cast<std::size_t>(mirror_stage)];
    for (int64_t chunk = 0; chunk < 2; ++chunk) {
      const auto own_last = own.last_backward[static_cast<std::size_t>(chunk)];
      const auto other_last = other.last_backward[static_cast<std::size_t>(1 - chunk)];
      const double bytes = chunkParameters(stage) * grad_bytes;
      const TaskId exchange = addCollective(result, perf::CollectiveOp::kSendRecv, {r, mirror}, bytes, 1,
                                            {result.ranks[static_cast<std::size_t>(r)].step_end[own_last],
                                             result.ranks[static_cast<std::size_t>(mirror)].step_end[other_last]},
                                            TaskCategory::kDataComm);
      reductions[static_cast<std::size_t>(r)].push_back(exchange);
      reductions[static_cast<std::size_t>(mirror)].push_back(exchange);
    }
  }
}

// Phase 7 (ZeRO >= 1): the updated parameter shards are all-gathered (2 bytes per parameter
// in bf16; FP8 parameters, training.fp8_param_gather, as they are held: 1 byte), bucket by
// bucket like the gradients. With overlap_param_gather Megatron-Core hides this behind the
// next iteration's forward (megatron/core/optimizer/distrib_optimizer.py, r0.8): zero_grad()
// dispatches the first bucket's gather at the start of the iteration, and the forward
// pre-hook of a module waits for its bucket's gather and dispatches the next. The host runs
// ahead of the GPU, so the gathers run back to back on the one NCCL stream, chunk after
// chunk, and the chunk's first forward waits for each bucket as it reaches it (its parts of
// phase 1). Without the overlap they follow the optimizer step.
void IterationBuilder::addParameterGathers(IterationGraph& result, const std::vector<StageSchedule>& stages,
                                           const BucketTasks& buckets) {
  const auto& plan = experiment_.plan;
  if (!features_.data_parallel || plan.zero < 1) return;
  const double bytes_per_parameter = MicroBatchShard::of(experiment_.training, plan).parameterGatherBytes();
  for (int64_t r = 0; r < layout_.ranks(); ++r) {
    for (const ReplicaGroup& replicas : replicaGroupsLedBy(r)) {
      addChunkGathers(result, stages, buckets, replicas, layout_.coordinate(r).pp, bytes_per_parameter);
    }
  }
}

// Part of phase 7: the gathers of one data-parallel group (`replicas`), chunk by chunk.
void IterationBuilder::addChunkGathers(IterationGraph& result, const std::vector<StageSchedule>& stages,
                                       const BucketTasks& buckets, const ReplicaGroup& replicas, int64_t stage,
                                       double bytes_per_parameter) {
  const auto& plan = experiment_.plan;
  const std::vector<int64_t>& group = replicas.ranks;
  const StageSchedule& schedule = stages[static_cast<std::size_t>(stage)];
  const int64_t count = bucketCount(stage);
  const double bytes = replicas.chunk_parameters / static_cast<double>(count) * bytes_per_parameter;
  TaskId previous = sim::kNoTask;
  for (int64_t c = 0; c < plan.virtual_stages; ++c) {
    const TaskId first = addBucketedGather(result, group, c, count, bytes, previous, buckets);
    if (features_.zero3) addZero3PassGathers(result, schedule, c, group, previous, bytes * static_cast<double>(count));
    if (!features_.gathered_forward) continue;
    // The chunk's first forward waits for the first bucket (its later parts for theirs).
    const std::size_t j = schedule.index(PipelineStep{PassKind::kForward, 0, static_cast<int32_t>(c)});
    for (int64_t member : group) {
      if (simulated(member)) {
        RankTasks& rank = result.ranks[static_cast<std::size_t>(member)];
        result.graph.addDependency(first, rank.step_compute[j]);
        rank.step_gather[j] = first;
      }
    }
  }
}

// Part of phase 7: chunk `chunk`'s bucketed gather, chained after `previous` (one NCCL
// stream), which it updates to its last bucket. Under gathered_forward each bucket after the
// first precedes its part of the chunk's first forward; otherwise the gather follows the
// optimizer steps. (ZeRO-3 gathers before use in any case: its first gather is the next
// iteration's.) Returns the first bucket's gather.
TaskId IterationBuilder::addBucketedGather(IterationGraph& result, const std::vector<int64_t>& group, int64_t chunk,
                                           int64_t count, double bytes, TaskId& previous, const BucketTasks& buckets) {
  std::vector<TaskId> after_optimizer;
  if (!features_.gathered_forward) {
    for (int64_t member : group) {
      if (simulated(member)) after_optimizer.push_back(result.ranks[static_cast<std::size_t>(member)].optimizer);
    }
  }
  TaskId first = sim::kNoTask;
  for (int64_t b = 0; b < count; ++b) {
    std::vector<TaskId> dependencies = after_optimizer;
    if (previous != sim::kNoTask) dependencies.push_back(previous);
    previous =
        addCollective(result, perf::CollectiveOp::kAllGather, group, bytes, 1, dependencies, TaskCategory::kDataComm);
    contendWithCompute(result, previous, group);
    if (first == sim::kNoTask) first = previous;
    if (!features_.gathered_forward || b == 0) continue;
    for (int64_t member : group) {
      if (simulated(member)) {
        result.graph.addDependency(previous, buckets.gather[static_cast<std::size_t>(member)][static_cast<std::size_t>(
                                                 chunk)][static_cast<std::size_t>(b)]);
      }
    }
  }
  return first;
}

// Part of phase 7 under ZeRO-3: every later pass of the chunk gathers its parameters again
// (they are freed after use), prefetched: the gather for a pass is issued when the pass
// before it starts, after the previous gather (`gather`: the bucketed one the first pass
// uses), so only what outlasts that pass's compute is exposed.
void IterationBuilder::addZero3PassGathers(IterationGraph& result, const StageSchedule& schedule, int64_t chunk,
                                           const std::vector<int64_t>& group, TaskId gather, double bytes) {
  std::size_t before = schedule.index(PipelineStep{PassKind::kForward, 0, static_cast<int32_t>(chunk)});
  for (std::size_t i = before + 1; i < schedule.order.size(); ++i) {
    if (schedule.order[i].chunk != chunk) continue;
    std::vector<TaskId> dependencies{gather};
    for (int64_t member : group) {
      if (simulated(member))
        dependencies.push_back(result.ranks[static_cast<std::size_t>(member)].step_compute[before]);
    }
    gather =
        addCollective(result, perf::CollectiveOp::kAllGather, group, bytes, 1, dependencies, TaskCategory::kDataComm);
    contendWithCompute(result, gather, group);
    for (int64_t member : group) {
      if (simulated(member)) {
        RankTasks& rank = result.ranks[static_cast<std::size_t>(member)];
        result.graph.addDependency(gather, rank.step_compute[i]);
        rank.step_gather[i] = gather;
      }
    }
    before = i;
  }
}

}  // namespace trainsim::parallelism
