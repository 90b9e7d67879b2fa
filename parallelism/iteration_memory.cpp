#include "parallelism/iteration_memory.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "parallelism/compute_timer.h"
#include "parallelism/iteration_features.h"
#include "parallelism/memory_model.h"
#include "parallelism/pass_work.h"
#include "parallelism/rank_layout.h"
#include "perf/collective_flow_bound.h"
#include "perf/compute_model.h"

namespace trainsim::parallelism {
namespace {

// The shape of a group of `n` GPUs `stride` ranks apart, starting at a multiple of n x stride
// (RankLayout: tensor-parallel groups are consecutive, context-, expert- and data-parallel
// ones tp apart), on nodes of `per_node` GPUs.
perf::CollectiveShape groupShape(perf::CollectiveOp op, int64_t n, int64_t stride, int64_t per_node,
                                 std::optional<int64_t> nics_per_node, bool mesh) {
  perf::CollectiveShape shape;
  shape.op = op;
  shape.gpus = n;
  const int64_t block = n * stride;
  shape.multi_node = !(block <= per_node && per_node % block == 0);
  shape.most_per_node = std::min(n, std::max<int64_t>(1, (per_node + stride - 1) / stride));
  shape.nics_per_node = nics_per_node;
  shape.mesh = mesh;
  return shape;
}

// The group a pass collective of `group` runs on: its size and the ranks between members.
std::pair<int64_t, int64_t> groupSizeAndStride(ParallelGroup group, const ParallelPlan& plan) {
  switch (group) {
    case ParallelGroup::kTensor: return {plan.tp, 1};
    case ParallelGroup::kContext: return {plan.cp, plan.tp};
    case ParallelGroup::kExpert: return {plan.ep, plan.expertTensorParallel()};
    case ParallelGroup::kExpertTensor: return {plan.expertTensorParallel(), 1};
    case ParallelGroup::kPipeline: break;
  }
  return {1, 1};
}

std::string_view groupName(ParallelGroup group) {
  switch (group) {
    case ParallelGroup::kTensor: return "tensor-parallel";
    case ParallelGroup::kContext: return "context-parallel";
    case ParallelGroup::kExpert: return "expert-parallel";
    case ParallelGroup::kExpertTensor: return "expert-tensor-parallel";
    case ParallelGroup::kPipeline: break;
  }
  return "pipeline";
}

// Collectives of one kind on groups of one shape, summed before they become items.
struct CollectiveCount {
  perf::CollectiveShape shape;
  double collectives = 0.0;
  double tasks = 0.0;  // besides the flows
  double dependencies = 0.0;
  // The groups they run on: each runs one of them at a time (they follow one another on its
  // GPUs' streams or its NCCL stream), so at most one per group runs at once.
  double groups = 0.0;
};

// What IterationBuilder::addCollective adds for one collective given `dependencies`: its
// group, the fixed latency before the flows and, for `count` > 1 calls, the other calls'
// latency; each flow depends on the fixed latency.
void addCollective(CollectiveCount& total, double collectives, double dependencies, bool more_calls) {
  total.collectives += collectives;
  total.tasks += collectives * (more_calls ? 3.0 : 2.0);
  total.dependencies += collectives * (dependencies + (more_calls ? 1.0 : 0.0));
}

void addItems(sim::MemoryEstimate& estimate, const std::string& what, const CollectiveCount& count) {
  if (count.collectives <= 0.0) return;
  const double each = perf::collectiveFlowBound(count.shape);
  const double flows = count.collectives * each;
  estimate.add(sim::MemoryKind::kFlows,
               fmt::format("flows of {:.3g} {} over {} GPUs", count.collectives, what, count.shape.gpus), flows);
  estimate.add(sim::MemoryKind::kRunningFlows, fmt::format("flows of {} running at once, one per group", what),
               std::min(count.groups, count.collectives) * each);
  // The pairs an all-to-all's bundles are made of: their routes are kept once per group.
  estimate.add(sim::MemoryKind::kRunningFlows, fmt::format("routes of the GPU pairs of {}, one set per group", what),
               count.groups * perf::collectivePairRoutes(count.shape));
  estimate.add(sim::MemoryKind::kTasks, fmt::format("tasks of {:.3g} {}", count.collectives, what), count.tasks);
  // Each flow depends on its collective's fixed latency.
  estimate.add(sim::MemoryKind::kDependencies, fmt::format("dependencies of {:.3g} {}", count.collectives, what),
               count.dependencies + flows);
}

// A pass's collectives as IterationBuilder::chunkPass merges them: calls of a kind (group,
// op, pass, beside the compute or not) add up to one collective, a recomputed repeat opens
// one of its own.
std::vector<PassCollective> mergedCollectives(const PassWork& work) {
  std::vector<PassCollective> merged;
  for (const PassCollective& call : work.collectives) {
    auto same = std::find_if(merged.begin(), merged.end(), [&](const PassCollective& c) {
      return c.group == call.group && c.op == call.op && c.backward == call.backward &&
             c.beside_compute == call.beside_compute;
    });
    if (call.recomputed || same == merged.end()) {
      merged.push_back(call);
    } else {
      same->count += call.count;
    }
  }
  return merged;
}

// A run as the builder simulates it: the plan's shape, the GPUs simulated and the
// mechanisms it runs.
struct RunShape {
  RunShape(const Experiment& run_experiment, const SimulationOptions& options, int64_t microbatches)
      : experiment(run_experiment),
        plan(run_experiment.plan),
        layout(run_experiment.plan),
        m(static_cast<double>(microbatches)),
        chunks(static_cast<double>(plan.virtual_stages)),
        // Symmetric mode simulates the first replicas of every stage; the rest are not built.
        replicas(options.iteration.symmetric ? static_cast<double>(layout.symmetricReplicas())
                                             : static_cast<double>(plan.dp)),
        simulated_per_stage(static_cast<double>(plan.tp * plan.cp) * replicas),
        // The mechanisms the builder runs, counted as it adds them.
        features(iterationFeatures(plan, run_experiment.training)),
        host(options.iteration.host.modelled()),
        per_node(std::max(1, run_experiment.cluster.gpus_per_node)),
        nics(perf::channelLimit(run_experiment.cluster)),
        mesh(perf::meshFabric(run_experiment.cluster)) {}

  const Experiment& experiment;
  const ParallelPlan& plan;
  RankLayout layout;
  double m;       // micro-batches
  double chunks;  // virtual stages
  double replicas;
  double simulated_per_stage;
  IterationFeatures features;
  bool host;
  int64_t per_node;
  std::optional<int64_t> nics;
  bool mesh;
};

// What the passes of every stage add up to, per simulated GPU (IterationBuilder::addPassCompute,
// orderPassesAfterCollectives, addPipelineSends, addOptimizerSteps), and each stage's
// gradient buckets and transformer blocks per chunk (for the data-parallel collectives).
struct PassCounts {
  double tasks = 0.0;
  double dependencies = 0.0;
  double sends = 0.0;
  std::map<std::pair<ParallelGroup, perf::CollectiveOp>, CollectiveCount> collectives;
  std::vector<double> buckets_of_stage;
  std::vector<double> blocks_of_stage;  // transformer blocks of a chunk, with sharded blocks
};

// One pass kind of one chunk of a stage: its tasks and dependencies into the stage's sums,
// its collectives into `counts`.
void countChunkPass(const RunShape& run, const PassWork& work, const std::vector<PassCollective>& merged, PassKind kind,
                    double buckets, double blocks, double& stage_tasks, double& stage_dependencies,
                    PassCounts& counts) {
  const ParallelPlan& plan = run.plan;
  const double m = run.m;
  const bool split_weights = splitsWeightGradients(plan.schedule);
  if (kind == PassKind::kWeight) {
    // A weight-gradient pass: its launches, marker and compute, no collectives; the chunk's
    // last one in gradient buckets.
    const double tasks = (run.host ? 3.0 : 0.0) + (run.features.pass_start_marker ? 1.0 : 0.0) + 1.0;
    stage_tasks += m * tasks;
    stage_dependencies += m * (tasks + (run.host ? 2.0 : 0.0) + 1.0);
    if (run.features.overlap_grads) {
      stage_tasks += buckets - 1.0;
      stage_dependencies += buckets - 1.0;
    }
    return;
  }
  const bool backward = kind == PassKind::kBackward;
  // A stretch left exposed after the compute: only beside-compute collectives leave one
  // (its length is not known here, where the collectives are not timed).
  const bool exposed = work.exposedSeconds(kind) > 0.0 || std::any_of(merged.begin(), merged.end(), [&](const auto& c) {
                         return c.beside_compute && c.backward == backward;
                       });
  // Host launches (the first, the rest, the end of the launches), the start marker, the
  // compute, the exposed stretch. Each but the exposed stretch follows the task before it
  // on its stream (a dependency); the others: the first launch's and the launches' end,
  // the exposed stretch's, and the next pass's on this one's collectives.
  // A forward with host syncs adds the wait (after the compute, before the launches' end) and
  // the host's resumption after it.
  const bool host_syncs = run.host && !backward && work.forward_host_syncs;
  const double tasks = (run.host ? 3.0 : 0.0) + (run.features.pass_start_marker ? 1.0 : 0.0) + 1.0 +
                       (exposed ? 1.0 : 0.0) + (host_syncs ? 2.0 : 0.0);
  const double dependencies = tasks + (run.host ? 2.0 : 0.0) + 1.0 + (host_syncs ? 2.0 : 0.0);
  stage_tasks += m * tasks;
  stage_dependencies += m * dependencies;
  // The chunk's last backward in gradient buckets, its first forward in parameter buckets.
  if ((backward && !split_weights && run.features.overlap_grads) || (!backward && run.features.gathered_forward)) {
    stage_tasks += buckets - 1.0;
    stage_dependencies += buckets - 1.0;
  }
  // Sharded blocks: every pass in blocks, or with pipeline parallelism the first forward.
  if (run.features.sharded_blocks && (plan.pp == 1 || !backward)) {
    const double split = plan.pp == 1 ? m : 1.0;
    stage_tasks += split * (blocks - 1.0);
    stage_dependencies += split * (blocks - 1.0);
  }
  for (const PassCollective& call : merged) {
    if (call.backward != backward || call.group == ParallelGroup::kPipeline) continue;
    const auto [size, stride] = groupSizeAndStride(call.group, plan);
    if (size < 2) continue;
    // Once per group (built from its first member) and micro-batch.
    const double calls = m * run.simulated_per_stage / static_cast<double>(size);
    CollectiveCount& count = counts.collectives[{call.group, call.op}];
    count.shape = groupShape(call.op, size, stride, run.per_node, run.nics, run.mesh);
    count.groups = run.simulated_per_stage * static_cast<double>(plan.pp) / static_cast<double>(size);
    addCollective(count, calls, static_cast<double>(size), call.count > 1);
    if (call.beside_compute) {
      // Each member's pass ends after the collective and its own stretch.
      count.tasks += calls * static_cast<double>(size);
      count.dependencies += calls * 2.0 * static_cast<double>(size);
    }
  }
}

PassCounts countPasses(const RunShape& run, const SimulationOptions& options) {
  const Experiment& experiment = run.experiment;
  const ParallelPlan& plan = run.plan;
  const auto compute =
      valueOrThrow(perf::ComputeModel::create(experiment.cluster.gpu, experiment.training.precision, options.compute));
  const ComputeTimer timer(compute);
  const auto no_seconds = [](const Communication&) { return 0.0; };
  const std::vector<int64_t> layers = plan.layersPerStage(experiment.model.layers);

  PassCounts counts;
  for (int64_t stage = 0; stage < plan.pp; ++stage) {
    const double chunk_parameters =
        stageParameters(experiment.model, experiment.training, plan, stage, layers[static_cast<std::size_t>(stage)])
            .total() /
        run.chunks;
    const auto buckets = static_cast<double>(options.iteration.grad_buckets.count(plan, chunk_parameters));
    counts.buckets_of_stage.push_back(buckets);
    const double blocks =
        std::max(1.0, std::ceil(static_cast<double>(layers[static_cast<std::size_t>(stage)]) / run.chunks));
    counts.blocks_of_stage.push_back(blocks);
    double stage_tasks = 0.0;
    double stage_dependencies = 0.0;
    for (int64_t chunk = 0; chunk < plan.virtual_stages; ++chunk) {
      // Collectives untimed: a host wait is found wherever a segment's launches outlast its compute.
      const PassWork work = chunkPassWork(experiment, stage, chunk, options.iteration.flops, timer, no_seconds,
                                          options.communication, options.iteration.host);
      const std::vector<PassCollective> merged = mergedCollectives(work);
      for (const PassKind kind : {PassKind::kForward, PassKind::kBackward, PassKind::kWeight}) {
        if (kind == PassKind::kWeight && !splitsWeightGradients(plan.schedule)) continue;
        countChunkPass(run, work, merged, kind, buckets, blocks, stage_tasks, stage_dependencies, counts);
      }
      if (plan.pp > 1) {
        // A pipeline send into every pass but the first stage's first chunk's forwards and
        // the last stage's last chunk's backwards; each after its producer, before its consumer.
        const bool first = plan.holdsEmbedding(stage, chunk);
        const bool last = plan.holdsOutput(stage, chunk);
        counts.sends += run.m * ((first ? 0.0 : 1.0) + (last ? 0.0 : 1.0)) * run.simulated_per_stage;
      }
    }
    // The optimizer step after the last pass (on its stream) and each chunk's reductions.
    stage_tasks += 1.0;
    stage_dependencies += run.chunks + 2.0;
    counts.tasks += stage_tasks * run.simulated_per_stage;
    counts.dependencies += stage_dependencies * run.simulated_per_stage;
  }
  return counts;
}

void addPassItems(const RunShape& run, const PassCounts& counts, sim::MemoryEstimate& estimate) {
  const ParallelPlan& plan = run.plan;
  const double kinds = splitsWeightGradients(plan.schedule) ? 3.0 : 2.0;  // forward, backward (B and W)
  const double passes = kinds * run.m * run.chunks * run.simulated_per_stage * static_cast<double>(plan.pp);
  estimate.add(sim::MemoryKind::kTasks, fmt::format("tasks of {:.3g} passes", passes), counts.tasks);
  estimate.add(sim::MemoryKind::kDependencies, fmt::format("dependencies of {:.3g} passes", passes),
               counts.dependencies);
  estimate.add(sim::MemoryKind::kPasses, fmt::format("per-GPU records of {:.3g} passes", passes), passes);
  // Each send follows its producer and precedes its consumer; a GPU sends one way and the
  // other at once at most (a send takes less than the pass that produced it).
  estimate.add(sim::MemoryKind::kFlows, fmt::format("pipeline sends of {:.3g} passes", passes), counts.sends);
  estimate.add(sim::MemoryKind::kDependencies, fmt::format("dependencies of {:.3g} pipeline sends", counts.sends),
               2.0 * counts.sends);
  const double gpus_simulated = run.simulated_per_stage * static_cast<double>(plan.pp);
  estimate.add(sim::MemoryKind::kRunningFlows, "pipeline sends running at once, two per GPU",
               std::min(counts.sends, plan.pp > 1 ? 2.0 * gpus_simulated : 0.0));
  for (const auto& [key, count] : counts.collectives) {
    addItems(estimate, fmt::format("{} {}s", groupName(key.first), perf::collectiveOpName(key.second)), count);
  }
}

// One data-parallel group per (tp, pp) coordinate, whatever the mode, and where the experts
// have groups of their own (IterationBuilder::replicaGroupsLedBy) one expert data-parallel
// group per (etp, ep, pp) coordinate too; symmetric mode builds only the simulated members'
// dependencies and contentions. Each collective waits for its members (twice, for a bucketed
// gather's part of the forward) and the one before it, and slows its simulated members'
// compute (a contention, counted as two dependencies).
void addDataParallelItems(const RunShape& run, const PassCounts& counts, sim::MemoryEstimate& estimate) {
  const ParallelPlan& plan = run.plan;
  const double m = run.m;
  const double chunks = run.chunks;
  const bool reshard = run.experiment.training.zero3.reshardsAfterForward(plan.pp);
  double reductions = 0.0;
  double gathers = 0.0;
  for (std::size_t stage = 0; stage < counts.buckets_of_stage.size(); ++stage) {
    const double buckets = counts.buckets_of_stage[stage];
    const double blocks = counts.blocks_of_stage[stage];
    if (run.features.sharded_blocks) {
      // Each block reduced after every backward and gathered before every forward (and
      // backward, resharded, but its first block), or once a step with pipeline parallelism.
      const double per_step = plan.pp == 1 ? m : 1.0;
      reductions += chunks * per_step * blocks;
      gathers += chunks * per_step * (blocks + (plan.pp == 1 && reshard ? blocks - 1.0 : 0.0));
      continue;
    }
    reductions += chunks * ((run.features.overlap_grads ? buckets : 1.0) + (run.features.zero3 ? m - 1.0 : 0.0));
    if (plan.zero >= 1) gathers += chunks * (buckets + (run.features.zero3 ? 2.0 * m - 1.0 : 0.0));
  }
  const auto addGroups = [&](std::string_view what, int64_t size, int64_t stride, double groups, double members) {
    const double per_collective = 2.0 * members + 1.0 + 2.0 * members;
    CollectiveCount reduce;
    reduce.groups = groups * static_cast<double>(plan.pp);
    reduce.shape = groupShape(plan.zero >= 1 ? perf::CollectiveOp::kReduceScatter : perf::CollectiveOp::kAllReduce,
                              size, stride, run.per_node, run.nics, run.mesh);
    addCollective(reduce, groups * reductions, per_collective, false);
    addItems(estimate, fmt::format("{}gradient reductions", what), reduce);
    CollectiveCount gather;
    gather.groups = reduce.groups;
    gather.shape = groupShape(perf::CollectiveOp::kAllGather, size, stride, run.per_node, run.nics, run.mesh);
    addCollective(gather, groups * gathers, per_collective, false);
    addItems(estimate, fmt::format("{}parameter gathers", what), gather);
  };
  // Under hybrid sharding (training.zero3.replicas > 1) the data-parallel group is split into
  // shard groups that gather and reduce-scatter apart, and after each block's reduce-scatters
  // one all-reduce per shard position runs across the shard groups.
  const int64_t shard_ranks = run.experiment.training.zero3.shardRanks(plan.dp * plan.cp);
  const int64_t shard_groups = plan.dp * plan.cp / std::max<int64_t>(1, shard_ranks);
  if (plan.dp * plan.cp > 1 && shard_groups == 1) {
    addGroups("", plan.dp * plan.cp, plan.tp, static_cast<double>(plan.tp),
              static_cast<double>(plan.cp) * run.replicas);
  } else if (plan.dp * plan.cp > 1) {
    const double members = std::min(static_cast<double>(shard_ranks), static_cast<double>(plan.cp) * run.replicas);
    addGroups("", shard_ranks, plan.tp, static_cast<double>(plan.tp * shard_groups), members);
    CollectiveCount across;
    across.groups = static_cast<double>(plan.tp * shard_ranks * plan.pp);
    across.shape = groupShape(perf::CollectiveOp::kAllReduce, shard_groups, plan.tp * shard_ranks, run.per_node,
                              run.nics, run.mesh);
    // Each waits for its shard groups' reduce-scatters and slows its simulated holders (one per
    // shard group; counted at least as the shard groups' members, an upper bound).
    const double holders = std::min(static_cast<double>(shard_groups), static_cast<double>(plan.cp) * run.replicas);
    addCollective(across, static_cast<double>(plan.tp * shard_ranks) * reductions,
                  static_cast<double>(shard_groups) + 2.0 * std::max(members, holders), false);
    addItems(estimate, "gradient all-reduces across the shard groups", across);
  }
  if (run.features.expert_data_parallel) {
    const int64_t folded = plan.expertTensorParallel() * plan.ep;
    const auto size = static_cast<double>(plan.expertDataParallel());
    // Simulated members: the share of the stage's ranks that are simulated.
    const double members = std::min(size, std::ceil(size * run.replicas / static_cast<double>(plan.dp)));
    addGroups("expert ", plan.expertDataParallel(), folded, static_cast<double>(folded), members);
  }
}

// The memory of one simulation of `microbatches` micro-batches.
sim::MemoryEstimate estimateRun(const Experiment& experiment, const SimulationOptions& options, int64_t microbatches) {
  const RunShape run(experiment, options, microbatches);
  sim::MemoryEstimate estimate;
  sim::addClusterMemory(experiment.cluster, estimate);
  estimate.add(sim::MemoryKind::kRanks, "GPUs' per-rank records", static_cast<double>(run.layout.ranks()));
  const PassCounts counts = countPasses(run, options);
  addPassItems(run, counts, estimate);
  if (run.features.data_parallel) addDataParallelItems(run, counts, estimate);
  return estimate;
}

}  // namespace

Expected<sim::MemoryEstimate> estimateIterationMemory(const Experiment& experiment, const SimulationOptions& given) {
  return catchInputErrors([&]() -> sim::MemoryEstimate {
    const SimulationOptions options = withHostDispatch(experiment, given);
    // The largest graphs held at once: the steady-state extrapolation's runs (its check of
    // the line, beside the others on more threads) where it applies, else every
    // micro-batch. (Where the line fails the fallback builds every micro-batch, which this
    // does not bound.)
    const int64_t all_microbatches = experiment.plan.microbatches(experiment.training);
    const auto extrapolation = options.trace == nullptr && !options.every_microbatch
                                   ? microbatchExtrapolation(experiment.plan, all_microbatches)
                                   : std::nullopt;
    if (!extrapolation) return estimateRun(experiment, options, all_microbatches);
    const std::vector<int64_t> runs = steadyStateRunsAtOnce(*extrapolation, options.threads);
    if (runs.size() == 1) return estimateRun(experiment, options, runs.front());
    sim::MemoryEstimate total;
    for (const int64_t microbatches : runs) {
      for (sim::MemoryItem& item : estimateRun(experiment, options, microbatches).items) {
        item.what = fmt::format("{} (the run of {} micro-batches)", item.what, microbatches);
        total.items.push_back(std::move(item));
      }
    }
    return total;
  });
}

}  // namespace trainsim::parallelism
