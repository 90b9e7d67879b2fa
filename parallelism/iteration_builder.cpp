#include "parallelism/iteration_builder.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <map>

#include "parallelism/chunk_workload.h"
#include "parallelism/memory_model.h"
#include "parallelism/micro_batch_shard.h"
#include "parallelism/ring_attention_exposure.h"
#include "parallelism/tp_overlap_exposure.h"
#include "sim/engine.h"
#include "sim/flow_network.h"
#include "sim/task_executor.h"

namespace trainsim::parallelism {
namespace {

using sim::TaskId;

// Position of (pass, chunk, micro-batch) in a stage's order.
class StepIndex {
 public:
  StepIndex(const std::vector<PipelineStep>& order, int64_t chunks, int64_t microbatches)
      : chunks_(chunks), microbatches_(microbatches), position_(static_cast<std::size_t>(2 * chunks * microbatches)) {
    for (std::size_t i = 0; i < order.size(); ++i) position_[slot(order[i])] = i;
  }
  [[nodiscard]] std::size_t operator()(const PipelineStep& step) const { return position_[slot(step)]; }

 private:
  [[nodiscard]] std::size_t slot(const PipelineStep& step) const {
    return static_cast<std::size_t>(
        ((step.pass == PassKind::kBackward ? 1 : 0) * chunks_ + step.chunk) * microbatches_ + step.microbatch);
  }
  int64_t chunks_;
  int64_t microbatches_;
  std::vector<std::size_t> position_;
};

sim::TaskOptions tagged(TaskCategory category, sim::StreamId stream = sim::kNoStream) {
  return sim::TaskOptions{stream, sim::kNoTask, static_cast<uint32_t>(category)};
}

TaskCategory categoryOf(ParallelGroup group) {
  switch (group) {
    case ParallelGroup::kTensor: return TaskCategory::kTensorComm;
    case ParallelGroup::kContext: return TaskCategory::kContextComm;
    case ParallelGroup::kExpert: return TaskCategory::kExpertComm;
    case ParallelGroup::kPipeline: return TaskCategory::kPipelineComm;
  }
  return TaskCategory::kOther;
}

}  // namespace

std::string taskCategoryName(uint32_t tag) {
  switch (static_cast<TaskCategory>(tag)) {
    case TaskCategory::kOther: return "other";
    case TaskCategory::kCompute: return "compute";
    case TaskCategory::kTensorComm: return "tp_comm";
    case TaskCategory::kContextComm: return "cp_comm";
    case TaskCategory::kExpertComm: return "ep_comm";
    case TaskCategory::kPipelineComm: return "pp_send";
    case TaskCategory::kDataComm: return "dp_comm";
    case TaskCategory::kOptimizer: return "optimizer";
  }
  return std::to_string(tag);
}

double OpTimer::gemmSeconds(const Op& op, PassKind pass, std::size_t index) const {
  const auto& gemms = pass == PassKind::kBackward ? op.backward_gemms : op.forward_gemms;
  if (index >= gemms.size()) return 0.0;
  return seconds(op, pass) / static_cast<double>(gemms.size());
}

IterationBuilder::IterationBuilder(const Experiment& experiment, const topology::Cluster& cluster,
                                   topology::Router& router, const sim::CommunicationParameters& communication,
                                   const OpTimer& timer, IterationOptions options)
    : experiment_(experiment),
      cluster_(cluster),
      router_(router),
      communication_(communication),
      timer_(timer),
      options_(options),
      layout_(experiment.plan),
      layers_per_stage_(experiment.plan.layersPerStage(experiment.model.layers)) {}

void IterationBuilder::addWorkload(PassWork& work, const ChunkPart& part) const {
  const Workload& workload = part.workload;
  const double layers = part.repeats;
  // Only the transformer layers are recomputed (ChunkPart::recomputable).
  const Recompute recompute = part.recomputable ? experiment_.plan.recompute : Recompute::kNone;
  for (const Op& op : workload.ops) {
    const double forward = timer_.seconds(op, PassKind::kForward);
    work.forward_s += layers * forward;
    work.backward_s += layers * timer_.seconds(op, PassKind::kBackward);
    // Recomputation re-runs forward work inside the backward pass (Korthikanti et al. 2022:
    // full = the whole layer, selective = the core attention only).
    if (recompute == Recompute::kFull || (recompute == Recompute::kSelective && op.core_attention)) {
      work.backward_s += layers * forward;
    }
  }
  for (const Communication& comm : workload.communications) {
    const bool overlapped = comm.beside.has_value() || comm.beside_attention;
    auto same = std::find_if(work.comms.begin(), work.comms.end(), [&](const PassWork::Comm& c) {
      return c.group == comm.group && c.op == comm.op && c.backward == comm.backward && c.overlapped == overlapped;
    });
    const double bytes = layers * comm.bytes * static_cast<double>(comm.count);
    const auto count = static_cast<int64_t>(std::llround(layers)) * comm.count;
    if (same == work.comms.end()) {
      work.comms.push_back({comm.group, comm.op, comm.backward, bytes, count, overlapped});
    } else {
      same->bytes += bytes;
      same->count += count;
    }
    // Full recomputation repeats the forward's tensor-parallel collectives in the backward;
    // full and selective both rerun the core attention, and with it its ring exchanges.
    const bool recomputed = (recompute == Recompute::kFull && comm.group == ParallelGroup::kTensor) ||
                            (recompute != Recompute::kNone && comm.group == ParallelGroup::kContext);
    if (recomputed && !comm.backward) work.comms.push_back({comm.group, comm.op, true, bytes, count, overlapped});
  }
  const auto collective_seconds = [this](const Communication& comm) { return groupCollectiveSeconds(comm); };
  const OverlapExposure tensor =
      tpOverlapExposure(workload, timer_, collective_seconds, communication_.channel_bandwidth_GBps * 1e9);
  const OverlapExposure ring = ringAttentionExposure(workload, timer_, experiment_.plan.cp, collective_seconds);
  work.forward_exposed_s += layers * (tensor.forward_s + ring.forward_s);
  work.backward_exposed_s += layers * (tensor.backward_s + ring.backward_s);
  // ... and the recomputed forward's collectives beside the recomputed GEMMs and attention.
  if (recompute == Recompute::kFull) work.backward_exposed_s += layers * (tensor.forward_s + ring.forward_s);
  if (recompute == Recompute::kSelective) work.backward_exposed_s += layers * ring.forward_s;
}

double IterationBuilder::groupCollectiveSeconds(const Communication& comm) const {
  const auto key = std::make_tuple(static_cast<int>(comm.group), static_cast<int>(comm.op), comm.bytes);
  auto cached = group_collective_seconds_.find(key);
  if (cached == group_collective_seconds_.end()) {
    const double seconds =
        comm.group == ParallelGroup::kContext ? concurrentContextSeconds(comm) : tensorCollectiveSeconds(comm);
    cached = group_collective_seconds_.emplace(key, seconds).first;
  }
  return cached->second;
}

double IterationBuilder::tensorCollectiveSeconds(const Communication& comm) const {
  sim::TaskGraph scratch;
  const sim::CollectiveBuilder builder(cluster_, router_, scratch, communication_);
  const sim::CollectiveRequest request{comm.op, layout_.tensorGroup(layout_.coordinate(0)), comm.bytes, {}, {}};
  return valueOrThrow(builder.choose(request)).estimated_time_s;
}

double IterationBuilder::concurrentContextSeconds(const Communication& comm) const {
  sim::TaskGraph graph;
  sim::CollectiveBuilder builder(cluster_, router_, graph, communication_);
  std::optional<sim::CollectiveChoice> choice;  // the groups are symmetric: chosen once
  for (int64_t r = 0; r < layout_.ranks(); ++r) {
    const RankCoordinate coordinate = layout_.coordinate(r);
    if (coordinate.pp != 0) continue;
    const std::vector<int64_t> group = layout_.contextGroup(coordinate);
    if (group.size() < 2 || group.front() != r) continue;
    const sim::CollectiveRequest request{comm.op, group, comm.bytes, {}, {}};
    if (!choice) choice = valueOrThrow(builder.choose(request));
    builder.add(request, *choice);
  }
  if (!choice) return 0.0;
  if (context_capacities_.empty())
    context_capacities_ = sim::CollectiveBuilder::effectiveCapacities(cluster_, communication_);
  sim::Engine engine;
  sim::FlowNetwork network(engine, context_capacities_);
  sim::TaskExecutor executor(engine, network, graph);
  return sim::simTimeToSeconds(executor.run());
}

IterationBuilder::PassWork IterationBuilder::chunkWork(int64_t stage, int64_t chunk) const {
  PassWork work;
  for (const ChunkPart& part : chunkWorkloads(experiment_, stage, chunk, options_.flops)) addWorkload(work, part);
  return work;
}

TaskId IterationBuilder::addCollective(IterationGraph& result, sim::CollectiveOp op, const std::vector<int64_t>& ranks,
                                       double bytes, int64_t count, std::vector<TaskId> dependencies,
                                       TaskCategory category) {
  sim::CollectiveBuilder builder(cluster_, router_, result.graph, communication_);
  std::vector<int64_t> gpus;
  gpus.reserve(ranks.size());
  for (int64_t rank : ranks) gpus.push_back(rank);
  const sim::CollectiveRequest request{op, gpus, bytes, {}, {}};
  // Groups of one kind are symmetric: choose once per (op, group size, bytes).
  const auto key = std::make_tuple(static_cast<int>(op), ranks.size(), bytes, static_cast<int>(category));
  auto choice = choices_.find(key);
  if (choice == choices_.end()) {
    choice = choices_.emplace(key, valueOrThrow(builder.choose(request))).first;
  }
  TaskId end = builder.add(request, choice->second, dependencies, tagged(category));
  if (count > 1) {
    // The other calls' fixed cost: launch, base and per-step latencies of a zero-byte call.
    auto empty = empty_latency_.find(key);
    if (empty == empty_latency_.end()) {
      sim::CollectiveRequest tiny = request;
      tiny.bytes = 0.0;
      empty = empty_latency_.emplace(key, valueOrThrow(builder.choose(tiny)).estimated_time_s).first;
    }
    end = result.graph.addCompute(sim::secondsToSimTime(static_cast<double>(count - 1) * empty->second), {end},
                                  tagged(category));
  }
  return end;
}

IterationGraph IterationBuilder::build() {
  IterationGraph result;
  sim::TaskGraph& graph = result.graph;
  const auto& plan = experiment_.plan;
  const int64_t stages = plan.pp;
  const int64_t chunks = plan.virtual_stages;
  const int64_t microbatches = plan.microbatches(experiment_.training);
  result.microbatches = microbatches;
  const int64_t ranks = layout_.ranks();
  result.ranks.resize(static_cast<std::size_t>(ranks));

  std::vector<std::vector<PassWork>> work(static_cast<std::size_t>(stages));
  std::vector<std::vector<PipelineStep>> orders;
  std::vector<StepIndex> indexes;
  for (int64_t s = 0; s < stages; ++s) {
    for (int64_t c = 0; c < chunks; ++c) work[static_cast<std::size_t>(s)].push_back(chunkWork(s, c));
    orders.push_back(stageOrder(plan.schedule, stages, chunks, microbatches, s));
    indexes.emplace_back(orders.back(), chunks, microbatches);
  }

  // Parameters of one model chunk on one GPU, for gradient reduction and the optimizer.
  auto chunkParameters = [&](int64_t stage) {
    return stageParameters(experiment_.model, experiment_.training, plan, stage,
                           layers_per_stage_[static_cast<std::size_t>(stage)])
               .total() /
           static_cast<double>(chunks);
  };
  // Gradients are reduced over the data- and context-parallel ranks (RankLayout::dataGroup).
  const bool data_parallel = plan.dp * plan.cp > 1;
  const bool overlap_grads = plan.overlap_grad_reduce && data_parallel;
  // ZeRO-3 (sharded parameters, pp = 1): every pass gathers the chunk's parameters and every
  // backward reduce-scatters its gradients (DeepSpeed stage 3, PyTorch FSDP).
  const bool zero3 = data_parallel && plan.zero >= 3;
  auto buckets = [&](int64_t stage) { return options_.grad_buckets.count(plan, chunkParameters(stage)); };
  // Which step is the last backward of each chunk (where its gradients become final).
  std::vector<std::vector<std::size_t>> last_backward(static_cast<std::size_t>(stages),
                                                      std::vector<std::size_t>(static_cast<std::size_t>(chunks)));
  for (int64_t s = 0; s < stages; ++s) {
    const auto& order = orders[static_cast<std::size_t>(s)];
    for (std::size_t i = 0; i < order.size(); ++i) {
      if (order[i].pass == PassKind::kBackward) {
        last_backward[static_cast<std::size_t>(s)][static_cast<std::size_t>(order[i].chunk)] = i;
      }
    }
  }

  const bool overlap_tp = plan.tp_comm_overlap && plan.tp > 1;
  const bool ring_attention = plan.cp > 1;
  // ZeRO's parameter all-gathers overlap a chunk's first forward, which waits for each
  // bucket as it reaches the bucket's layers (step 5).
  const bool gathered_forward = data_parallel && plan.zero >= 1 && (plan.overlap_param_gather || zero3);
  // 1. Compute tasks, in each rank's schedule order on its compute stream. The last
  //    backward of a chunk is split into gradient buckets when reduction overlaps it, and
  //    its first forward into parameter buckets when the gathers overlap it.
  std::vector<std::vector<std::vector<TaskId>>> bucket_tasks(static_cast<std::size_t>(ranks));
  std::vector<std::vector<std::vector<TaskId>>> gather_bucket_tasks(static_cast<std::size_t>(ranks));
  // Symmetric mode simulates replica 0, or as many replicas as make whole expert groups.
  const int64_t simulated_replicas = layout_.symmetricReplicas();
  auto simulated = [&](int64_t r) { return !options_.symmetric || layout_.coordinate(r).dp < simulated_replicas; };
  for (int64_t r = 0; r < ranks; ++r) {
    RankTasks& rank = result.ranks[static_cast<std::size_t>(r)];
    rank.simulated = simulated(r);
    if (!rank.simulated) continue;
    const int64_t stage = layout_.coordinate(r).pp;
    rank.compute_stream = graph.addStream(static_cast<int32_t>(r), "compute");
    rank.steps = orders[static_cast<std::size_t>(stage)];
    bucket_tasks[static_cast<std::size_t>(r)].resize(static_cast<std::size_t>(chunks));
    gather_bucket_tasks[static_cast<std::size_t>(r)].resize(static_cast<std::size_t>(chunks));
    for (std::size_t i = 0; i < rank.steps.size(); ++i) {
      const PipelineStep& step = rank.steps[i];
      const PassWork& pass = work[static_cast<std::size_t>(stage)][static_cast<std::size_t>(step.chunk)];
      const double seconds = step.pass == PassKind::kForward ? pass.forward_s : pass.backward_s;
      const bool split =
          overlap_grads && i == last_backward[static_cast<std::size_t>(stage)][static_cast<std::size_t>(step.chunk)];
      const bool split_gathered = gathered_forward && step.pass == PassKind::kForward && step.microbatch == 0;
      const int64_t parts = split || split_gathered ? buckets(stage) : 1;
      TaskId first = sim::kNoTask;
      TaskId last = sim::kNoTask;
      if (overlap_tp || zero3 || ring_attention) {
        // A zero-length marker where the pass starts: the overlapped tensor-parallel
        // collectives and the ring attention's exchanges start with the pass instead of
        // after it, and ZeRO-3's prefetch of the next pass's parameters is issued there
        // (step 5).
        first = graph.addCompute(0, {}, tagged(TaskCategory::kCompute, rank.compute_stream));
      }
      for (int64_t part = 0; part < parts; ++part) {
        last = graph.addCompute(sim::secondsToSimTime(seconds / static_cast<double>(parts)), {},
                                tagged(TaskCategory::kCompute, rank.compute_stream));
        if (first == sim::kNoTask) first = last;
        if (split) bucket_tasks[static_cast<std::size_t>(r)][static_cast<std::size_t>(step.chunk)].push_back(last);
        if (split_gathered) {
          gather_bucket_tasks[static_cast<std::size_t>(r)][static_cast<std::size_t>(step.chunk)].push_back(last);
        }
      }
      rank.step_compute_time.push_back(
          sim::scaledDuration(sim::secondsToSimTime(seconds / static_cast<double>(parts)), parts));
      rank.step_compute.push_back(first);
      rank.step_compute_last.push_back(last);
      // What the overlapped collectives leave exposed beside their GEMMs and attention steps.
      const double exposed = step.pass == PassKind::kForward ? pass.forward_exposed_s : pass.backward_exposed_s;
      rank.step_end.push_back(
          exposed > 0.0 ? graph.addCompute(sim::secondsToSimTime(exposed), {last}, tagged(TaskCategory::kTensorComm))
                        : last);
      rank.step_input.push_back(sim::kNoTask);
      rank.step_gather.push_back(sim::kNoTask);
    }
  }

  // 2. Tensor / context / expert-parallel collectives of each pass, once per group. Kind by
  //    kind (the pass's list order) over every group, so that every GPU chains a pass's
  //    collectives in the same order: built rank by rank, a GPU that is not the first of
  //    its context-parallel group would have had its tensor-parallel collective built after
  //    the context-parallel ring that the first member's had gone before.
  std::size_t comm_kinds = 0;
  for (const auto& stage_work : work) {
    for (const PassWork& pass : stage_work) comm_kinds = std::max(comm_kinds, pass.comms.size());
  }
  for (std::size_t k = 0; k < comm_kinds; ++k) {
    for (int64_t r = 0; r < ranks; ++r) {
      if (!simulated(r)) continue;
      const RankCoordinate coordinate = layout_.coordinate(r);
      const int64_t stage = coordinate.pp;
      const auto& order = orders[static_cast<std::size_t>(stage)];
      for (std::size_t i = 0; i < order.size(); ++i) {
        const PipelineStep& step = order[i];
        const PassWork& pass = work[static_cast<std::size_t>(stage)][static_cast<std::size_t>(step.chunk)];
        if (k >= pass.comms.size()) continue;
        const PassWork::Comm& comm = pass.comms[k];
        if (comm.backward != (step.pass == PassKind::kBackward) || comm.group == ParallelGroup::kPipeline) continue;
        std::vector<int64_t> group;
        switch (comm.group) {
          case ParallelGroup::kTensor: group = layout_.tensorGroup(coordinate); break;
          case ParallelGroup::kContext: group = layout_.contextGroup(coordinate); break;
          case ParallelGroup::kExpert: group = layout_.expertGroup(coordinate); break;
          case ParallelGroup::kPipeline: break;
        }
        // Build each group's collective once, from its first member.
        if (group.size() < 2 || group.front() != r) continue;
        // Overlapped TP collectives and ring-attention exchanges run beside the pass's GEMMs
        // and attention (from its start); the pass ends when both are done. Others follow the
        // pass's compute.
        const bool overlapped = comm.overlapped && (comm.group == ParallelGroup::kContext ||
                                                    (overlap_tp && comm.group == ParallelGroup::kTensor));
        std::vector<TaskId> dependencies;
        for (int64_t member : group) {
          const RankTasks& rank = result.ranks[static_cast<std::size_t>(member)];
          dependencies.push_back(overlapped ? rank.step_compute[i] : rank.step_end[i]);
        }
        const TaskId end =
            addCollective(result, comm.op, group, comm.bytes, comm.count, dependencies, categoryOf(comm.group));
        for (int64_t member : group) {
          RankTasks& rank = result.ranks[static_cast<std::size_t>(member)];
          rank.step_end[i] =
              overlapped ? graph.addCompute(0, {end, rank.step_end[i]}, tagged(categoryOf(comm.group))) : end;
        }
      }
    }
  }

  // 3. A pass starts after the previous pass on its GPU has finished its collectives.
  for (auto& rank : result.ranks) {
    for (std::size_t i = 1; i < rank.steps.size(); ++i) {
      // Without collectives the stream's issue order already says so.
      if (rank.step_end[i - 1] != rank.step_compute_last[i - 1]) {
        graph.addDependency(rank.step_end[i - 1], rank.step_compute[i]);
      }
    }
  }

  // 4. Pipeline sends: activations forward, their gradients backward, between the same
  //    (tp, cp, dp) coordinates of neighbouring stages.
  const MicroBatchShard shard = MicroBatchShard::of(experiment_.training, plan);
  const double grad_bytes = options_.grad_reduce_bytes_per_parameter.value_or(shard.mainGradientBytes());
  const double activation_bytes = (plan.sequence_parallel ? shard.replicatedRegionTokens() : shard.tokens()) *
                                  static_cast<double>(experiment_.model.hidden_size) * shard.activationBytes();
  std::map<std::pair<int64_t, int64_t>, sim::RouteId> routes;
  for (int64_t r = 0; r < ranks; ++r) {
    if (!simulated(r)) continue;
    RankCoordinate coordinate = layout_.coordinate(r);
    const int64_t stage = coordinate.pp;
    const auto& order = orders[static_cast<std::size_t>(stage)];
    for (std::size_t i = 0; i < order.size(); ++i) {
      for (const StageStep& up : upstreamSteps(stages, chunks, stage, order[i])) {
        if (up.stage == stage) continue;
        RankCoordinate producer = coordinate;
        producer.pp = up.stage;
        const int64_t from = layout_.rank(producer);
        const std::size_t j = indexes[static_cast<std::size_t>(up.stage)](up.step);
        auto route = routes.find({from, r});
        if (route == routes.end()) {
          route = routes
                      .emplace(std::make_pair(from, r),
                               graph.addRoute(router_.route(cluster_.accelerator(from), cluster_.accelerator(r))))
                      .first;
        }
        const TaskId send =
            graph.addFlow(route->second, activation_bytes, {result.ranks[static_cast<std::size_t>(from)].step_end[j]},
                          tagged(TaskCategory::kPipelineComm));
        graph.addDependency(send, result.ranks[static_cast<std::size_t>(r)].step_compute[i]);
        result.ranks[static_cast<std::size_t>(r)].step_input[i] = send;
      }
    }
  }

  // 5. Data parallelism: gradient reduction per chunk (bucketed, overlapped with the last
  //    backward when asked), the optimizer step, and the ZeRO parameter all-gather.
  std::vector<std::vector<TaskId>> reductions(static_cast<std::size_t>(ranks));
  // A data-parallel collective's NCCL kernel holds some of each member GPU's SMs while it
  // runs: what the GPU computes meanwhile (the backward it overlaps, the forward its
  // parameter gather overlaps) runs on the rest (sim::ComputeParameters::collective_sms).
  const double collective_share = timer_.collectiveComputeShare();
  auto contendWithCompute = [&](TaskId collective, const std::vector<int64_t>& group) {
    if (collective_share <= 0.0) return;
    for (int64_t member : group) {
      if (simulated(member)) {
        graph.addContention(collective, result.ranks[static_cast<std::size_t>(member)].compute_stream,
                            collective_share);
      }
    }
  };
  for (auto& rank : result.ranks) {
    if (rank.simulated) rank.last_backward_end = rank.step_end.back();
  }
  if (data_parallel) {
    const sim::CollectiveOp reduce = plan.zero >= 1 ? sim::CollectiveOp::kReduceScatter : sim::CollectiveOp::kAllReduce;
    for (int64_t r = 0; r < ranks; ++r) {
      const RankCoordinate coordinate = layout_.coordinate(r);
      if (coordinate.dp != 0 || coordinate.cp != 0) continue;  // one per data-parallel group
      const std::vector<int64_t> group = layout_.dataGroup(coordinate);
      const int64_t stage = coordinate.pp;
      for (int64_t c = 0; c < chunks; ++c) {
        const int64_t count = overlap_grads ? buckets(stage) : 1;
        const double bytes = chunkParameters(stage) / static_cast<double>(count) * grad_bytes;
        TaskId previous = sim::kNoTask;
        if (zero3) {
          // ZeRO-3 reduce-scatters each micro-batch's gradients into the shards as its
          // backward ends (no unsharded accumulation buffer); the last backward's are the
          // bucketed ones below. One NCCL stream: in order.
          const auto& order = orders[static_cast<std::size_t>(stage)];
          const std::size_t last = last_backward[static_cast<std::size_t>(stage)][static_cast<std::size_t>(c)];
          for (std::size_t i = 0; i < last; ++i) {
            if (order[i].pass != PassKind::kBackward || order[i].chunk != c) continue;
            std::vector<TaskId> dependencies;
            for (int64_t member : group) {
              if (simulated(member)) dependencies.push_back(result.ranks[static_cast<std::size_t>(member)].step_end[i]);
            }
            if (previous != sim::kNoTask) dependencies.push_back(previous);
            previous = addCollective(result, reduce, group, chunkParameters(stage) * grad_bytes, 1, dependencies,
                                     TaskCategory::kDataComm);
            contendWithCompute(previous, group);
          }
        }
        for (int64_t b = 0; b < count; ++b) {
          std::vector<TaskId> dependencies;
          for (int64_t member : group) {
            const auto& rank = result.ranks[static_cast<std::size_t>(member)];
            if (!rank.simulated) continue;
            dependencies.push_back(overlap_grads
                                       ? bucket_tasks[static_cast<std::size_t>(member)][static_cast<std::size_t>(c)]
                                                     [static_cast<std::size_t>(b)]
                                       : rank.last_backward_end);
          }
          if (previous != sim::kNoTask) dependencies.push_back(previous);  // one NCCL stream: buckets in order
          previous = addCollective(result, reduce, group, bytes, 1, dependencies, TaskCategory::kDataComm);
          contendWithCompute(previous, group);
        }
        for (int64_t member : group) {
          if (simulated(member)) reductions[static_cast<std::size_t>(member)].push_back(previous);
        }
      }
    }
  }
  for (int64_t r = 0; r < ranks; ++r) {
    RankTasks& rank = result.ranks[static_cast<std::size_t>(r)];
    if (!rank.simulated) continue;
    const int64_t stage = layout_.coordinate(r).pp;
    const double parameters = chunkParameters(stage) * static_cast<double>(chunks);
    const double traffic = optimizerStepTraffic(experiment_.training, plan, parameters, options_.optimizer_step);
    std::vector<TaskId> dependencies = reductions[static_cast<std::size_t>(r)];
    dependencies.push_back(rank.step_end.back());
    rank.optimizer = graph.addCompute(sim::secondsToSimTime(timer_.memoryBoundSeconds(traffic)), dependencies,
                                      tagged(TaskCategory::kOptimizer, rank.compute_stream));
  }
  if (data_parallel && plan.zero >= 1) {
    // Updated parameter shards are all-gathered (2 bytes per parameter in bf16), bucket by
    // bucket like the gradients. With overlap_param_gather Megatron-Core hides this behind
    // the next iteration's forward (megatron/core/optimizer/distrib_optimizer.py, r0.8):
    // zero_grad() dispatches the first bucket's gather at the start of the iteration, and
    // the forward pre-hook of a module waits for its bucket's gather and dispatches the
    // next. The host runs ahead of the GPU, so the gathers run back to back on the one
    // NCCL stream, chunk after chunk, and the chunk's first forward waits for each bucket
    // as it reaches it (its parts of step 1). Without the overlap they follow the
    // optimizer step.
    // FP8 parameters (training.fp8_param_gather) are gathered as they are held: 1 byte.
    const double bytes_per_parameter = shard.parameterGatherBytes();
    for (int64_t r = 0; r < ranks; ++r) {
      const RankCoordinate coordinate = layout_.coordinate(r);
      if (coordinate.dp != 0 || coordinate.cp != 0) continue;  // one per data-parallel group
      const std::vector<int64_t> group = layout_.dataGroup(coordinate);
      const int64_t stage = coordinate.pp;
      const int64_t count = buckets(stage);
      const double bytes = chunkParameters(stage) / static_cast<double>(count) * bytes_per_parameter;
      TaskId previous = sim::kNoTask;
      for (int64_t c = 0; c < chunks; ++c) {
        std::vector<TaskId> after_optimizer;
        // (ZeRO-3 gathers before use in any case: its first gather is the next iteration's.)
        if (!gathered_forward) {
          for (int64_t member : group) {
            if (simulated(member)) after_optimizer.push_back(result.ranks[static_cast<std::size_t>(member)].optimizer);
          }
        }
        const std::size_t j =
            indexes[static_cast<std::size_t>(stage)](PipelineStep{PassKind::kForward, 0, static_cast<int32_t>(c)});
        TaskId first = sim::kNoTask;
        for (int64_t b = 0; b < count; ++b) {
          std::vector<TaskId> dependencies = after_optimizer;
          if (previous != sim::kNoTask) dependencies.push_back(previous);
          previous = addCollective(result, sim::CollectiveOp::kAllGather, group, bytes, 1, dependencies,
                                   TaskCategory::kDataComm);
          contendWithCompute(previous, group);
          if (first == sim::kNoTask) first = previous;
          if (!gathered_forward || b == 0) continue;
          for (int64_t member : group) {
            if (simulated(member)) {
              graph.addDependency(previous, gather_bucket_tasks[static_cast<std::size_t>(
                                                member)][static_cast<std::size_t>(c)][static_cast<std::size_t>(b)]);
            }
          }
        }
        if (zero3) {
          // Every later pass gathers the chunk's parameters again (they are freed after
          // use), prefetched: the gather for a pass is issued when the pass before it
          // starts, so only what outlasts that pass's compute is exposed. The first pass
          // uses the bucketed gather above.
          const auto& order = orders[static_cast<std::size_t>(stage)];
          TaskId gather = previous;
          std::size_t before =
              indexes[static_cast<std::size_t>(stage)](PipelineStep{PassKind::kForward, 0, static_cast<int32_t>(c)});
          for (std::size_t i = before + 1; i < order.size(); ++i) {
            if (order[i].chunk != c) continue;
            std::vector<TaskId> dependencies{gather};
            for (int64_t member : group) {
              if (simulated(member)) {
                dependencies.push_back(result.ranks[static_cast<std::size_t>(member)].step_compute[before]);
              }
            }
            gather = addCollective(result, sim::CollectiveOp::kAllGather, group, bytes * static_cast<double>(count), 1,
                                   dependencies, TaskCategory::kDataComm);
            contendWithCompute(gather, group);
            for (int64_t member : group) {
              if (simulated(member)) {
                RankTasks& rank = result.ranks[static_cast<std::size_t>(member)];
                graph.addDependency(gather, rank.step_compute[i]);
                rank.step_gather[i] = gather;
              }
            }
            before = i;
          }
        }
        if (!gathered_forward) continue;
        for (int64_t member : group) {
          if (simulated(member)) {
            RankTasks& rank = result.ranks[static_cast<std::size_t>(member)];
            graph.addDependency(first, rank.step_compute[j]);
            rank.step_gather[j] = first;
          }
        }
      }
    }
  }
  return result;
}

}  // namespace trainsim::parallelism
