#include "parallelism/iteration_builder.h"

#include <algorithm>
#include <cassert>
#include <map>
#include <utility>

#include "parallelism/memory_model.h"
#include "parallelism/micro_batch_shard.h"
#include "parallelism/parallel_group_members.h"

namespace trainsim::parallelism {
namespace {

using sim::TaskId;

TaskCategory categoryOf(ParallelGroup group) {
  switch (group) {
    case ParallelGroup::kTensor: return TaskCategory::kTensorComm;
    case ParallelGroup::kContext: return TaskCategory::kContextComm;
    case ParallelGroup::kExpert:
    case ParallelGroup::kExpertTensor: return TaskCategory::kExpertComm;
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
    case TaskCategory::kHostDispatch: return "host_dispatch";
  }
  return std::to_string(tag);
}

IterationBuilder::IterationBuilder(const Experiment& experiment, const topology::Cluster& cluster,
                                   topology::Router& router, const perf::CommunicationParameters& communication,
                                   const OpTimer& timer, IterationOptions options)
    : experiment_(experiment),
      cluster_(cluster),
      router_(router),
      communication_(communication),
      timer_(timer),
      options_(options),
      layout_(experiment.plan),
      layers_per_stage_(experiment.plan.layersPerStage(experiment.model.layers)),
      features_(iterationFeatures(experiment.plan, experiment.training)),
      pass_collectives_(experiment.plan, cluster, router, communication) {
  for (int64_t stage = 0; stage < experiment.plan.pp; ++stage) {
    stage_parameters_.push_back(stageParameters(experiment.model, experiment.training, experiment.plan, stage,
                                                layers_per_stage_[static_cast<std::size_t>(stage)]));
  }
  // Per-rank compute scales give ranks of one replica different times: no replica stands for another.
  assert(options_.rank_compute_scale.empty() ||
         (!options_.symmetric && std::ssize(options_.rank_compute_scale) == layout_.ranks()));
}

PassWork IterationBuilder::passWork(int64_t stage, int64_t chunk) const {
  const auto one_call_seconds = [this](const Communication& comm) { return pass_collectives_.seconds(comm); };
  return chunkPassWork(experiment_, stage, chunk, options_.flops, timer_, one_call_seconds, communication_,
                       options_.host);
}

IterationBuilder::ChunkPass IterationBuilder::chunkPass(const PassWork& work, bool split_weights) {
  ChunkPass pass;
  pass.forward_s = work.forward_s;
  pass.backward_s = work.backward_s;
  pass.forward_kernels = work.forward_kernels;
  pass.backward_kernels = work.backward_kernels;
  if (split_weights) {
    pass.weight_s = work.weight_s;
    pass.backward_s -= work.weight_s;
    pass.weight_kernels = work.weight_kernels;
    pass.backward_kernels -= work.weight_kernels;
  }
  pass.forward_host_extra_s = work.forward_host_extra_s;
  pass.backward_host_extra_s = work.backward_host_extra_s;
  pass.forward_host_wait_s = work.forward_host_wait_s;
  pass.forward_host_covered_s = work.forward_host_covered_s;
  pass.forward_host_syncs = work.forward_host_syncs;
  pass.forward_exposed_s = work.exposedSeconds(PassKind::kForward);
  pass.backward_exposed_s = work.exposedSeconds(PassKind::kBackward);
  // Calls of a kind add to the first entry of that kind; a recomputed repeat opens an entry
  // of its own, which later calls of its kind may add to.
  for (const PassCollective& call : work.collectives) {
    auto same = std::find_if(pass.comms.begin(), pass.comms.end(), [&](const ChunkPass::Comm& c) {
      return c.group == call.group && c.op == call.op && c.backward == call.backward &&
             c.beside_compute == call.beside_compute && c.needs_partner == call.needs_partner;
    });
    if (call.recomputed || same == pass.comms.end()) {
      pass.comms.push_back(
          {call.group, call.op, call.backward, call.bytes, call.count, call.beside_compute, call.needs_partner});
    } else {
      same->bytes += call.bytes;
      same->count += call.count;
    }
  }
  return pass;
}

sim::TaskOptions IterationBuilder::tagged(TaskCategory category, sim::StreamId stream) {
  return sim::TaskOptions{stream, sim::kNoTask, static_cast<uint32_t>(category)};
}

bool IterationBuilder::simulated(int64_t rank) const {
  return !options_.symmetric || layout_.coordinate(rank).dp < layout_.symmetricReplicas();
}

std::vector<int64_t> IterationBuilder::groupOf(ParallelGroup group, int64_t rank) const {
  return groupMembers(layout_, group, layout_.coordinate(rank));
}

double IterationBuilder::chunkParameters(int64_t stage) const {
  return stage_parameters_[static_cast<std::size_t>(stage)].total() /
         static_cast<double>(experiment_.plan.virtual_stages);
}

std::vector<IterationBuilder::ReplicaGroup> IterationBuilder::replicaGroupsLedBy(int64_t rank) const {
  const RankCoordinate coordinate = layout_.coordinate(rank);
  const ReplicaShares shares =
      replicaShares(experiment_.plan, stage_parameters_[static_cast<std::size_t>(coordinate.pp)]);
  const double chunk = chunkParameters(coordinate.pp);
  std::vector<ReplicaGroup> groups;
  auto add = [&](std::vector<int64_t> ranks, double share) {
    if (ranks.size() > 1) groups.push_back({std::move(ranks), chunk * share});
  };
  // Only a group's first rank builds it (the group's vector is not made for the others): the
  // data-parallel group's at dp = cp = 0, the expert one's in the stage's first etp x ep ranks.
  const auto& plan = experiment_.plan;
  if (shares.dense > 0.0 && coordinate.dp == 0 && coordinate.cp == 0) {
    add(layout_.dataGroup(coordinate), shares.dense);
  }
  const int64_t local = rank - coordinate.pp * plan.tp * plan.cp * plan.dp;
  if (shares.expert > 0.0 && local < plan.expertTensorParallel() * plan.ep) {
    add(layout_.expertDataGroup(coordinate), shares.expert);
  }
  return groups;
}

int64_t IterationBuilder::bucketCount(int64_t stage) const {
  return options_.grad_buckets.count(experiment_.plan, chunkParameters(stage));
}

TaskId IterationBuilder::addCollective(IterationGraph& result, perf::CollectiveOp op, const std::vector<int64_t>& ranks,
                                       double bytes, int64_t count, std::vector<TaskId> dependencies,
                                       TaskCategory category, std::vector<TaskId>* calls) {
  if (collectives_ == nullptr || collectives_graph_ != &result.graph) {
    collectives_ = std::make_unique<perf::CollectiveBuilder>(cluster_, router_, result.graph, communication_);
    collectives_graph_ = &result.graph;
  }
  perf::CollectiveBuilder& builder = *collectives_;
  std::vector<int64_t> gpus;
  gpus.reserve(ranks.size());
  for (int64_t rank : ranks) gpus.push_back(rank);
  const perf::CollectiveRequest request{op, gpus, bytes, {}, {}};
  // Groups of one kind are symmetric: choose once per kind and placement (CollectiveKey).
  const perf::GroupLayout placement = builder.layout(gpus);
  const auto key = std::make_tuple(static_cast<int>(op), ranks.size(), bytes, static_cast<int>(category),
                                   placement.nodes(), placement.max_per_node);
  auto choice = choices_.find(key);
  if (choice == choices_.end()) {
    choice = choices_.emplace(key, valueOrThrow(builder.choose(request))).first;
  }
  TaskId end = builder.add(request, choice->second, dependencies, tagged(category));
  if (calls != nullptr) calls->push_back(end);
  if (count > 1) {
    // The other calls' fixed cost: launch, base and per-step latencies of a zero-byte call.
    auto empty = empty_latency_.find(key);
    if (empty == empty_latency_.end()) {
      perf::CollectiveRequest tiny = request;
      tiny.bytes = 0.0;
      empty = empty_latency_.emplace(key, valueOrThrow(builder.choose(tiny)).estimated_time_s).first;
    }
    end = result.graph.addCompute(sim::secondsToSimTime(static_cast<double>(count - 1) * empty->second), {end},
                                  tagged(category));
    if (calls != nullptr) calls->push_back(end);
  }
  return end;
}

IterationGraph IterationBuilder::build() {
  IterationGraph result;
  // Routes memoized for another graph mean nothing in this one.
  collectives_.reset();
  collectives_graph_ = nullptr;
  result.microbatches = experiment_.plan.microbatches(experiment_.training);
  result.ranks.resize(static_cast<std::size_t>(layout_.ranks()));
  const std::vector<StageSchedule> stages = scheduleStages();
  const BucketTasks buckets = addComputePasses(result, stages);
  addPassCollectives(result, stages);
  orderPassesAfterCollectives(result);
  addPipelineSends(result, stages);
  std::vector<std::vector<TaskId>> reductions = features_.sharded_blocks
                                                    ? addShardedBlockCollectives(result, stages, buckets)
                                                    : addGradientReductions(result, stages, buckets);
  addCopyGradientExchanges(result, stages, reductions);
  addOptimizerSteps(result, reductions);
  if (!features_.sharded_blocks) addParameterGathers(result, stages, buckets);
  collectives_.reset();
  collectives_graph_ = nullptr;
  return result;
}

// Phase 0 (no tasks): what every stage runs. The passes' work is timed here, before any task
// is added, as it depends only on the chunk; the order is the plan's pipeline schedule.
std::vector<IterationBuilder::StageSchedule> IterationBuilder::scheduleStages() const {
  const auto& plan = experiment_.plan;
  const int64_t chunks = plan.virtual_stages;
  const int64_t microbatches = plan.microbatches(experiment_.training);
  std::vector<StageSchedule> stages;
  for (int64_t s = 0; s < plan.pp; ++s) {
    std::vector<ChunkPass> passes;
    const bool split = splitsWeightGradients(plan.schedule);
    for (int64_t c = 0; c < chunks; ++c) passes.push_back(chunkPass(passWork(s, c), split));
    std::vector<PipelineStep> order = stageOrder(plan.schedule, plan.pp, chunks, microbatches, s);
    StepIndex index(order, chunks, microbatches);
    const PassKind gradients_final = split ? PassKind::kWeight : PassKind::kBackward;
    std::vector<std::size_t> last_backward(static_cast<std::size_t>(chunks));
    for (std::size_t i = 0; i < order.size(); ++i) {
      if (order[i].pass == gradients_final) last_backward[static_cast<std::size_t>(order[i].chunk)] = i;
    }
    std::vector<bool> paired = pairedSteps(order);
    stages.push_back(
        {std::move(passes), std::move(order), std::move(index), std::move(last_backward), std::move(paired)});
  }
  return stages;
}

// Phase 1: the compute tasks, in each rank's schedule order on its compute stream (the
// stream's issue order is the schedule). The last backward of a chunk is split into
// gradient buckets when reduction overlaps it, and its first forward into parameter buckets
// when the gathers overlap it, so that each bucket's collective can follow or precede its
// part (phase 5).
IterationBuilder::BucketTasks IterationBuilder::addComputePasses(IterationGraph& result,
                                                                 const std::vector<StageSchedule>& stages) {
  const auto ranks = static_cast<std::size_t>(layout_.ranks());
  const auto chunks = static_cast<std::size_t>(experiment_.plan.virtual_stages);
  BucketTasks buckets{std::vector<std::vector<std::vector<TaskId>>>(ranks),
                      std::vector<std::vector<std::vector<TaskId>>>(ranks),
                      std::vector<std::vector<std::vector<TaskId>>>(ranks)};
  for (std::size_t r = 0; r < ranks; ++r) {
    RankTasks& rank = result.ranks[r];
    rank.simulated = simulated(static_cast<int64_t>(r));
    if (!rank.simulated) continue;
    const int64_t stage = layout_.coordinate(static_cast<int64_t>(r)).pp;
    const StageSchedule& schedule = stages[static_cast<std::size_t>(stage)];
    rank.compute_stream = result.graph.addStream(static_cast<int32_t>(r), "compute");
    if (options_.host.modelled()) rank.host_stream = result.graph.addStream(static_cast<int32_t>(r), "host");
    rank.steps = schedule.order;
    buckets.gradient[r].resize(chunks);
    buckets.gather[r].resize(chunks);
    if (features_.sharded_blocks) buckets.blocks[r].resize(rank.steps.size());
    const double scale = options_.rank_compute_scale.empty() ? 1.0 : options_.rank_compute_scale[r];
    for (std::size_t i = 0; i < rank.steps.size(); ++i) {
      addPassCompute(result.graph, rank, scale, schedule, stage, i, buckets.gradient[r], buckets.gather[r],
                     buckets.blocks[r]);
    }
  }
  return buckets;
}

// One pass of phase 1: its compute (in parts when bucketed), preceded by a zero-length
// marker where the pass starts when something is issued with it (IterationFeatures::pass_start_marker),
// and followed by what its overlapped collectives leave exposed beside their GEMMs and
// attention steps.
void IterationBuilder::addPassCompute(sim::TaskGraph& graph, RankTasks& rank, double compute_scale,
                                      const StageSchedule& schedule, int64_t stage, std::size_t step_index,
                                      std::vector<std::vector<TaskId>>& gradient_buckets,
                                      std::vector<std::vector<TaskId>>& gather_buckets,
                                      std::vector<std::vector<TaskId>>& block_parts) const {
  const PipelineStep& step = rank.steps[step_index];
  const auto chunk = static_cast<std::size_t>(step.chunk);
  const ChunkPass& pass = schedule.chunks[chunk];
  const bool forward = step.pass == PassKind::kForward;
  const bool weight = step.pass == PassKind::kWeight;
  const double seconds = compute_scale * (forward ? pass.forward_s : weight ? pass.weight_s : pass.backward_s);
  const bool split = features_.overlap_grads && step_index == schedule.last_backward[chunk];
  const bool split_gathered = features_.gathered_forward && forward && step.microbatch == 0;
  const int64_t blocks = features_.sharded_blocks ? shardedBlocks(schedule, stage, step_index) : 0;
  const int64_t parts = blocks > 0 ? blocks : split || split_gathered ? bucketCount(stage) : 1;
  // The host launches the pass's kernels in order: the first opens the pass, the rest run
  // on while the GPU works, and the pass cannot end before the last is launched.
  TaskId launch_first = sim::kNoTask;
  TaskId launch_rest = sim::kNoTask;
  if (rank.host_stream != sim::kNoStream) {
    const double kernels = std::max(1.0, forward  ? pass.forward_kernels
                                         : weight ? pass.weight_kernels
                                                  : pass.backward_kernels);
    const double per_kernel = options_.host.per_kernel_s;
    launch_first =
        graph.addCompute(sim::secondsToSimTime(per_kernel), {}, tagged(TaskCategory::kHostDispatch, rank.host_stream));
    // Less what the synced segments' collectives cover: the builder runs a pass's collectives
    // after the launches, where the host launched on during them (PassWork::forward_host_covered_s).
    const double covered = forward ? pass.forward_host_covered_s : 0.0;
    const double extra = forward ? pass.forward_host_extra_s : weight ? 0.0 : pass.backward_host_extra_s;
    launch_rest = graph.addCompute(sim::secondsToSimTime(std::max(0.0, (kernels - 1.0) * per_kernel + extra - covered)),
                                   {}, tagged(TaskCategory::kHostDispatch, rank.host_stream));
  }
  TaskId first = sim::kNoTask;
  TaskId last = sim::kNoTask;
  if (features_.pass_start_marker) first = graph.addCompute(0, {}, tagged(TaskCategory::kCompute, rank.compute_stream));
  for (int64_t part = 0; part < parts; ++part) {
    last = graph.addCompute(sim::secondsToSimTime(seconds / static_cast<double>(parts)), {},
                            tagged(TaskCategory::kCompute, rank.compute_stream));
    if (first == sim::kNoTask) first = last;
    if (split) gradient_buckets[chunk].push_back(last);
    if (split_gathered) gather_buckets[chunk].push_back(last);
    if (blocks > 0) block_parts[step_index].push_back(last);
  }
  // The forward's wait on its host at syncs (PassWork::forward_host_wait_s), before the
  // marker that ends the pass no earlier than its last launch. On no stream: the GPU idles
  // through it, so neither the breakdown's compute nor the SMs' contention touch it.
  const bool syncs = forward && pass.forward_host_syncs && launch_first != sim::kNoTask;
  TaskId wait = sim::kNoTask;
  if (syncs) {
    wait = last =
        graph.addCompute(sim::secondsToSimTime(pass.forward_host_wait_s), {last}, tagged(TaskCategory::kHostDispatch));
  }
  if (launch_first != sim::kNoTask) {
    graph.addDependency(launch_first, first);
    std::vector<TaskId> launched{launch_rest};
    if (wait != sim::kNoTask) launched.push_back(wait);
    last = graph.addCompute(0, launched, tagged(TaskCategory::kCompute, rank.compute_stream));
  }
  // After its last sync the host launches what the pass's collectives cover (taken off its
  // launches above) and cannot start the next pass's before the GPU has caught up with it.
  if (syncs) {
    graph.addCompute(sim::secondsToSimTime(pass.forward_host_covered_s), {wait},
                     tagged(TaskCategory::kHostDispatch, rank.host_stream));
  }
  rank.step_host_wait.push_back(wait);
  rank.step_launch_first.push_back(launch_first);
  rank.step_launched.push_back(launch_rest == sim::kNoTask ? sim::kNoTask : last);
  rank.step_compute_time.push_back(
      sim::scaledDuration(sim::secondsToSimTime(seconds / static_cast<double>(parts)), parts));
  rank.step_compute.push_back(first);
  rank.step_compute_last.push_back(last);
  const double exposed = forward ? pass.forward_exposed_s : weight ? 0.0 : pass.backward_exposed_s;
  rank.step_end.push_back(
      exposed > 0.0 ? graph.addCompute(sim::secondsToSimTime(exposed), {last}, tagged(TaskCategory::kTensorComm))
                    : last);
  rank.step_input.push_back(sim::kNoTask);
  rank.step_gather.push_back(sim::kNoTask);
}

// Phase 2: the tensor / context / expert-parallel collectives of each pass, once per group.
// Kind by kind (the pass's list order) over every group, so that every GPU chains a pass's
// collectives in the same order: built rank by rank, a GPU that is not the first of its
// context-parallel group would have had its tensor-parallel collective built after the
// context-parallel ring that the first member's had gone before.
void IterationBuilder::addPassCollectives(IterationGraph& result, const std::vector<StageSchedule>& stages) {
  std::size_t comm_kinds = 0;
  for (const StageSchedule& schedule : stages) {
    for (const ChunkPass& pass : schedule.chunks) comm_kinds = std::max(comm_kinds, pass.comms.size());
  }
  for (std::size_t k = 0; k < comm_kinds; ++k) {
    for (int64_t r = 0; r < layout_.ranks(); ++r) {
      if (!simulated(r)) continue;
      const StageSchedule& schedule = stages[static_cast<std::size_t>(layout_.coordinate(r).pp)];
      for (std::size_t i = 0; i < schedule.order.size(); ++i) {
        const PipelineStep& step = schedule.order[i];
        const ChunkPass& pass = schedule.chunks[static_cast<std::size_t>(step.chunk)];
        if (k >= pass.comms.size()) continue;
        const ChunkPass::Comm& comm = pass.comms[k];
        // A weight-gradient pass has no collectives: they belong to the input-gradient pass.
        if (step.pass == PassKind::kWeight || comm.backward != (step.pass == PassKind::kBackward) ||
            comm.group == ParallelGroup::kPipeline) {
          continue;
        }
        addGroupCollective(result, r, i, comm, comm.beside_compute && (!comm.needs_partner || schedule.paired[i]));
      }
    }
  }
}

// One collective of phase 2 on `rank`'s group, built from the group's first member only.
// Collectives beside the compute (tensor-parallel ones under tp_comm_overlap, ring-attention
// exchanges) run from the pass's start and the pass ends when both are done; the others
// follow the pass's compute and end it.
void IterationBuilder::addGroupCollective(IterationGraph& result, int64_t rank, std::size_t step,
                                          const ChunkPass::Comm& comm, bool beside_compute) {
  const std::vector<int64_t> group = groupOf(comm.group, rank);
  if (group.size() < 2 || group.front() != rank) return;
  std::vector<TaskId> dependencies;
  for (int64_t member : group) {
    const RankTasks& tasks = result.ranks[static_cast<std::size_t>(member)];
    dependencies.push_back(beside_compute ? tasks.step_compute[step] : tasks.step_end[step]);
  }
  std::vector<TaskId> calls;
  const TaskId end =
      addCollective(result, comm.op, group, comm.bytes, comm.count, dependencies, categoryOf(comm.group), &calls);
  // An all-to-all overlapped with its partner pass (moe_a2a_overlap) holds SMs the pass's
  // compute would have used, as a data-parallel collective does, through every call.
  if (beside_compute && comm.needs_partner) {
    for (TaskId call : calls) contendWithCompute(result, call, group);
  }
  for (int64_t member : group) {
    RankTasks& tasks = result.ranks[static_cast<std::size_t>(member)];
    tasks.step_end[step] =
        beside_compute ? result.graph.addCompute(0, {end, tasks.step_end[step]}, tagged(categoryOf(comm.group))) : end;
  }
}

// Phase 3: a pass starts after the previous pass on its GPU has finished its collectives
// (Megatron runs them on the compute stream). Without collectives the stream's issue order
// already says so.
void IterationBuilder::orderPassesAfterCollectives(IterationGraph& result) {
  for (auto& rank : result.ranks) {
    for (std::size_t i = 1; i < rank.steps.size(); ++i) {
      if (rank.step_end[i - 1] != rank.step_compute_last[i - 1]) {
        result.graph.addDependency(rank.step_end[i - 1], rank.step_compute[i]);
      }
    }
  }
}

// Phase 4: pipeline sends: activations forward, their gradients backward, between the same
// (tp, cp, dp) coordinates of neighbouring stages, each after the producing pass has ended
// and before the consuming pass starts.
void IterationBuilder::addPipelineSends(IterationGraph& result, const std::vector<StageSchedule>& stages) {
  const auto& plan = experiment_.plan;
  const MicroBatchShard shard = MicroBatchShard::of(experiment_.training, plan);
  const double activation_bytes = (plan.sequence_parallel ? shard.replicatedRegionTokens() : shard.tokens()) *
                                  static_cast<double>(experiment_.model.hidden_size) * shard.activationBytes();
  sim::TaskGraph& graph = result.graph;
  std::map<std::pair<int64_t, int64_t>, sim::RouteId> routes;
  auto routeOf = [&](int64_t from, int64_t to) {
    auto route = routes.find({from, to});
    if (route == routes.end()) {
      const sim::RouteId id = graph.addRoute(router_.route(cluster_.accelerator(from), cluster_.accelerator(to)));
      route = routes.emplace(std::make_pair(from, to), id).first;
    }
    return route->second;
  };
  for (int64_t r = 0; r < layout_.ranks(); ++r) {
    if (!simulated(r)) continue;
    const RankCoordinate coordinate = layout_.coordinate(r);
    const int64_t stage = coordinate.pp;
    const auto& order = stages[static_cast<std::size_t>(stage)].order;
    RankTasks& consumer = result.ranks[static_cast<std::size_t>(r)];
    for (std::size_t i = 0; i < order.size(); ++i) {
      for (const StageStep& up : upstreamSteps(plan, stage, order[i])) {
        if (up.stage == stage) continue;
        RankCoordinate producer = coordinate;
        producer.pp = up.stage;
        const int64_t from = layout_.rank(producer);
        const std::size_t j = stages[static_cast<std::size_t>(up.stage)].index(up.step);
        const TaskId send = graph.addFlow(routeOf(from, r), activation_bytes,
                                          {result.ranks[static_cast<std::size_t>(from)].step_end[j]},
                                          tagged(TaskCategory::kPipelineComm));
        graph.addDependency(send, consumer.step_compute[i]);
        consumer.step_input[i] = send;
      }
    }
  }
}

void IterationBuilder::contendWithCompute(IterationGraph& result, TaskId collective,
                                          const std::vector<int64_t>& group) const {
  // The compute beside the collective (the backward it overlaps, the forward its parameter
  // gather overlaps) runs on the SMs the collective leaves
  // (perf::ComputeParameters::collective_sms).
  const double collective_share = timer_.collectiveComputeShare();
  if (collective_share <= 0.0) return;
  for (int64_t member : group) {
    if (simulated(member)) {
      result.graph.addContention(collective, result.ranks[static_cast<std::size_t>(member)].compute_stream,
                                 collective_share);
    }
  }
}

}  // namespace trainsim::parallelism
