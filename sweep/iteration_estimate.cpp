#include "sweep/iteration_estimate.h"

#include <algorithm>
#include <cmath>

#include "parallelism/compute_timer.h"
#include "parallelism/flops_model.h"
#include "parallelism/memory_model.h"
#include "parallelism/micro_batch_shard.h"
#include "parallelism/rank_layout.h"
#include "sim/collective_builder.h"

namespace trainsim::sweep {
namespace {

using parallelism::ParallelGroup;
using parallelism::PassKind;
using parallelism::Recompute;

// One model chunk's pass times for one micro-batch on one GPU.
struct ChunkTimes {
  double forward_compute = 0.0;
  double backward_compute = 0.0;  // recomputation included
  double forward_comm = 0.0;      // tensor/context/expert-parallel collectives
  double backward_comm = 0.0;
  double tensor_forward_comm = 0.0;  // the part tp_comm_overlap can hide
  double tensor_backward_comm = 0.0;

  void add(const ChunkTimes& other) {
    forward_compute += other.forward_compute;
    backward_compute += other.backward_compute;
    forward_comm += other.forward_comm;
    backward_comm += other.backward_comm;
    tensor_forward_comm += other.tensor_forward_comm;
    tensor_backward_comm += other.tensor_backward_comm;
  }
  // Forward plus backward; overlapped tensor-parallel collectives cost only what exceeds the pass's compute.
  [[nodiscard]] double total(bool overlap_tensor) const {
    if (!overlap_tensor) return forward_compute + backward_compute + forward_comm + backward_comm;
    const double forward = std::max(forward_compute, tensor_forward_comm) + forward_comm - tensor_forward_comm;
    const double backward = std::max(backward_compute, tensor_backward_comm) + backward_comm - tensor_backward_comm;
    return forward + backward;
  }
};

}  // namespace

IterationEstimator::IterationEstimator(const topology::ClusterSpec& spec, topology::Precision precision,
                                       const parallelism::SimulationOptions& options)
    : cluster_(std::make_unique<topology::Cluster>(valueOrThrow(topology::Cluster::build(spec)))),
      router_(std::make_unique<topology::Router>(*cluster_)),
      compute_(valueOrThrow(sim::ComputeModel::create(spec.gpu, precision, options.compute))),
      options_(options) {}

double IterationEstimator::collectiveSeconds(sim::CollectiveOp op, const std::vector<int64_t>& ranks, double bytes) {
  if (ranks.size() < 2) return 0.0;
  auto key = std::make_tuple(static_cast<int>(op), ranks, bytes);
  auto cached = collective_cache_.find(key);
  if (cached != collective_cache_.end()) return cached->second;
  sim::CollectiveBuilder builder(*cluster_, *router_, scratch_graph_, options_.communication);
  const sim::CollectiveRequest request{op, ranks, bytes, {}, {}};
  const double seconds = valueOrThrow(builder.choose(request)).estimated_time_s;
  collective_cache_.emplace(std::move(key), seconds);
  return seconds;
}

double IterationEstimator::iterationSeconds(const parallelism::Experiment& experiment) {
  const auto& plan = experiment.plan;
  const auto& model = experiment.model;
  const auto& training = experiment.training;
  const auto& iteration = options_.iteration;
  const parallelism::ComputeTimer timer(compute_);
  const parallelism::RankLayout layout(plan);
  const parallelism::RankCoordinate first_rank;
  const auto shard = parallelism::MicroBatchShard::of(training, plan);
  const double chunks = static_cast<double>(plan.virtual_stages);

  auto groupOf = [&](ParallelGroup group) -> std::vector<int64_t> {
    switch (group) {
      case ParallelGroup::kTensor: return layout.tensorGroup(first_rank);
      case ParallelGroup::kContext: return layout.contextGroup(first_rank);
      case ParallelGroup::kExpert: return layout.expertGroup(first_rank);
      case ParallelGroup::kPipeline: break;
    }
    return {};
  };
  // As IterationBuilder::addWorkload: `layers` copies of the workload, each collective kind
  // summed into one call plus the fixed latency of the others.
  auto chunkTimes = [&](const parallelism::Workload& workload, double layers) {
    ChunkTimes times;
    for (const auto& op : workload.ops) {
      const double forward = timer.seconds(op, PassKind::kForward);
      times.forward_compute += layers * forward;
      times.backward_compute += layers * timer.seconds(op, PassKind::kBackward);
      if (plan.recompute == Recompute::kFull || (plan.recompute == Recompute::kSelective && op.core_attention)) {
        times.backward_compute += layers * forward;
      }
    }
    for (const auto& comm : workload.communications) {
      if (comm.group == ParallelGroup::kPipeline) continue;
      const std::vector<int64_t> group = groupOf(comm.group);
      const double count = std::round(layers) * static_cast<double>(comm.count);
      const double seconds = collectiveSeconds(comm.op, group, layers * comm.bytes * static_cast<double>(comm.count)) +
                             std::max(0.0, count - 1.0) * collectiveSeconds(comm.op, group, 0.0);
      const bool tensor = comm.group == ParallelGroup::kTensor;
      const int repeats = plan.recompute == Recompute::kFull && !comm.backward && tensor ? 2 : 1;
      for (int repeat = 0; repeat < repeats; ++repeat) {
        const bool backward = comm.backward || repeat == 1;
        (backward ? times.backward_comm : times.forward_comm) += seconds;
        if (tensor) (backward ? times.tensor_backward_comm : times.tensor_forward_comm) += seconds;
      }
    }
    return times;
  };

  // Pipeline: m micro-batches of the slowest stage, plus the fill and drain bubble.
  const double layers_per_chunk = static_cast<double>(model.layers) / static_cast<double>(plan.pp) / chunks;
  const parallelism::FlopsOptions kernels = parallelism::kernelsFor(training, iteration.flops);  // flash_attention
  const ChunkTimes middle = chunkTimes(parallelism::transformerLayer(model, shard, kernels), layers_per_chunk);
  ChunkTimes first_stage = middle;
  first_stage.add(chunkTimes(parallelism::embeddingLayer(model, shard, kernels), 1.0));
  ChunkTimes last_stage = plan.pp == 1 ? first_stage : middle;
  last_stage.add(chunkTimes(parallelism::outputLayer(model, shard, kernels), 1.0));
  const bool overlap_tensor = plan.tp_comm_overlap && plan.tp > 1;
  const double chunk_time = middle.total(overlap_tensor);
  const double stage_time =
      std::max({first_stage.total(overlap_tensor) + (chunks - 1.0) * chunk_time,
                last_stage.total(overlap_tensor) + (chunks - 1.0) * chunk_time, chunks * chunk_time});
  const auto microbatches = static_cast<double>(plan.microbatches(training));
  double seconds = microbatches * stage_time + static_cast<double>(plan.pp - 1) * stage_time / chunks;

  // Pipeline sends: each chunk boundary, both directions, stretches the 1F1B cycle.
  if (plan.pp > 1) {
    const double activation_bytes = (plan.sequence_parallel ? shard.replicatedRegionTokens() : shard.tokens()) *
                                    static_cast<double>(model.hidden_size) * shard.activationBytes();
    parallelism::RankCoordinate next_stage = first_rank;
    next_stage.pp = 1;
    const double send = collectiveSeconds(sim::CollectiveOp::kSendRecv, {0, layout.rank(next_stage)}, activation_bytes);
    seconds += 2.0 * (microbatches * chunks + static_cast<double>(plan.pp - 1)) * send;
  }

  // Data parallelism and the optimizer, on the stage with the most parameters.
  double stage_parameters = 0.0;
  const auto layers_per_stage = plan.layersPerStage(model.layers);
  for (int64_t stage : {int64_t{0}, plan.pp - 1}) {
    stage_parameters = std::max(
        stage_parameters,
        parallelism::stageParameters(model, training, plan, stage, layers_per_stage[static_cast<std::size_t>(stage)])
            .total());
  }
  const double chunk_parameters = stage_parameters / chunks;
  const auto buckets = static_cast<double>(iteration.grad_buckets.count(plan, chunk_parameters));
  const double grad_bytes = iteration.grad_reduce_bytes_per_parameter.value_or(shard.mainGradientBytes());
  if (plan.dp > 1) {
    const std::vector<int64_t> group = layout.dataGroup(first_rank);
    const auto reduce = plan.zero >= 1 ? sim::CollectiveOp::kReduceScatter : sim::CollectiveOp::kAllReduce;
    const bool overlap_grads = plan.overlap_grad_reduce && plan.zero < 3;
    if (overlap_grads) {
      const double bucket = collectiveSeconds(reduce, group, chunk_parameters / buckets * grad_bytes);
      // Reduction runs under the last backward of each chunk; what exceeds it is exposed.
      const double reduction = chunks * buckets * bucket;
      const double hidden_under = chunks * (middle.backward_compute + middle.backward_comm);
      seconds += std::max(bucket, reduction - hidden_under);
    } else {
      seconds += chunks * collectiveSeconds(reduce, group, chunk_parameters * grad_bytes);
    }
    if (plan.zero >= 1) {
      const double bucket =
          collectiveSeconds(sim::CollectiveOp::kAllGather, group, chunk_parameters / buckets * shard.activationBytes());
      // Overlapped with the next forward, only the first bucket is waited for.
      seconds += plan.overlap_param_gather ? bucket : chunks * buckets * bucket;
    }
  }
  seconds += timer.memoryBoundSeconds(
      parallelism::optimizerStepTraffic(training, plan, stage_parameters, iteration.optimizer_step));
  return seconds;
}

}  // namespace trainsim::sweep
