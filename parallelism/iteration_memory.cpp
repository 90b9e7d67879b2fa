#include "parallelism/iteration_memory.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "parallelism/compute_timer.h"
#include "parallelism/memory_model.h"
#include "parallelism/pass_work.h"
#include "parallelism/rank_layout.h"
#include "sim/collective_flow_bound.h"
#include "sim/compute_model.h"

namespace trainsim::parallelism {
namespace {

// Tasks a GPU adds per pass at most besides its collectives' (IterationBuilder::
// addPassCompute and addPipelineSends): a start marker, the compute, two host launches and
// the end of the launches, the exposed stretch, the pipeline send's flow and the pass's end.
constexpr double kTasksPerPass = 8.0;
// A collective's tasks besides its flows: its group, the fixed latency before the flows,
// the other calls' latency, and a dependency per member, counted as a task.
constexpr double kTasksPerCollective = 3.0;

// The shape of a group of `n` GPUs `stride` ranks apart, starting at a multiple of n x stride
// (RankLayout: tensor-parallel groups are consecutive, context-, expert- and data-parallel
// ones tp apart), on nodes of `per_node` GPUs.
sim::CollectiveShape groupShape(sim::CollectiveOp op, int64_t n, int64_t stride, int64_t per_node) {
  sim::CollectiveShape shape;
  shape.op = op;
  shape.gpus = n;
  const int64_t block = n * stride;
  shape.multi_node = !(block <= per_node && per_node % block == 0);
  shape.most_per_node = std::min(n, std::max<int64_t>(1, (per_node + stride - 1) / stride));
  return shape;
}

// The group a pass collective of `group` runs on: its size and the ranks between members.
std::pair<int64_t, int64_t> groupSizeAndStride(ParallelGroup group, const ParallelPlan& plan) {
  switch (group) {
    case ParallelGroup::kTensor: return {plan.tp, 1};
    case ParallelGroup::kContext: return {plan.cp, plan.tp};
    case ParallelGroup::kExpert: return {plan.ep, plan.tp};
    case ParallelGroup::kPipeline: break;
  }
  return {1, 1};
}

void addCollectives(sim::MemoryEstimate& estimate, const std::string& what, double collectives,
                    const sim::CollectiveShape& shape) {
  if (collectives <= 0.0) return;
  const double flows = sim::collectiveFlowBound(shape);
  estimate.add(sim::MemoryKind::kFlows, fmt::format("flows of {:.3g} {} over {} GPUs", collectives, what, shape.gpus),
               collectives * flows);
  estimate.add(sim::MemoryKind::kTasks, fmt::format("tasks of {:.3g} {}", collectives, what),
               collectives * (kTasksPerCollective + static_cast<double>(shape.gpus)));
}

}  // namespace

Expected<sim::MemoryEstimate> estimateIterationMemory(const Experiment& experiment, const SimulationOptions& given) {
  return catchInputErrors([&]() -> sim::MemoryEstimate {
    const SimulationOptions options = withHostDispatch(experiment, given);
    const ParallelPlan& plan = experiment.plan;
    const RankLayout layout(plan);
    const int64_t per_node = std::max(1, experiment.cluster.gpus_per_node);
    sim::MemoryEstimate estimate;
    sim::addClusterMemory(experiment.cluster, estimate);
    const auto gpus = static_cast<double>(layout.ranks());
    estimate.add(sim::MemoryKind::kRanks, "GPUs' per-rank records", gpus);

    // The largest graph: the steady-state extrapolation's third run (its check of the line),
    // else every micro-batch. (Where the line fails the fallback builds every micro-batch,
    // which this does not bound.)
    const int64_t all_microbatches = plan.microbatches(experiment.training);
    const auto extrapolation = options.trace == nullptr && !options.every_microbatch
                                   ? microbatchExtrapolation(plan, all_microbatches)
                                   : std::nullopt;
    const auto microbatches =
        static_cast<double>(extrapolation ? 2 * extrapolation->second - extrapolation->first : all_microbatches);
    const auto chunks = static_cast<double>(plan.virtual_stages);
    // Symmetric mode simulates the first replicas of every stage; the rest are not built.
    const double replicas =
        options.iteration.symmetric ? static_cast<double>(layout.symmetricReplicas()) : static_cast<double>(plan.dp);
    const double simulated_per_stage = static_cast<double>(plan.tp * plan.cp) * replicas;

    const auto compute =
        valueOrThrow(sim::ComputeModel::create(experiment.cluster.gpu, experiment.training.precision, options.compute));
    const ComputeTimer timer(compute);
    const auto no_seconds = [](const Communication&) { return 0.0; };
    const std::vector<int64_t> layers = plan.layersPerStage(experiment.model.layers);
    double most_buckets = 1.0;
    for (int64_t stage = 0; stage < plan.pp; ++stage) {
      const double chunk_parameters =
          stageParameters(experiment.model, experiment.training, plan, stage, layers[static_cast<std::size_t>(stage)])
              .total() /
          chunks;
      most_buckets =
          std::max(most_buckets, static_cast<double>(options.iteration.grad_buckets.count(plan, chunk_parameters)));
      for (int64_t chunk = 0; chunk < plan.virtual_stages; ++chunk) {
        const PassWork work =
            chunkPassWork(experiment, stage, chunk, options.iteration.flops, timer, no_seconds, options.communication);
        for (const PassCollective& call : work.collectives) {
          const auto [size, stride] = groupSizeAndStride(call.group, plan);
          if (size < 2) continue;
          // Once per group and micro-batch, on every simulated GPU's group of this stage.
          const double calls = microbatches * simulated_per_stage / static_cast<double>(size);
          addCollectives(estimate, "pass collectives", calls, groupShape(call.op, size, stride, per_node));
        }
      }
    }
    const double passes = 2.0 * microbatches * chunks;
    estimate.add(
        sim::MemoryKind::kTasks,
        fmt::format("tasks of {:.3g} passes", passes * simulated_per_stage * static_cast<double>(plan.pp)),
        (passes * kTasksPerPass + 2.0 * most_buckets * chunks) * simulated_per_stage * static_cast<double>(plan.pp));

    if (plan.dp * plan.cp > 1) {
      // Every data-parallel group, one per (tp, pp) coordinate, whatever the mode.
      const double groups = static_cast<double>(plan.tp * plan.pp);
      const int64_t size = plan.dp * plan.cp;
      const bool zero3 = plan.zero >= 3;
      const double reductions = groups * chunks * (most_buckets + (zero3 ? microbatches : 0.0));
      const sim::CollectiveOp reduce =
          plan.zero >= 1 ? sim::CollectiveOp::kReduceScatter : sim::CollectiveOp::kAllReduce;
      addCollectives(estimate, "gradient reductions", reductions, groupShape(reduce, size, plan.tp, per_node));
      if (plan.zero >= 1) {
        const double gathers = groups * chunks * (most_buckets + (zero3 ? 2.0 * microbatches : 0.0));
        addCollectives(estimate, "parameter gathers", gathers,
                       groupShape(sim::CollectiveOp::kAllGather, size, plan.tp, per_node));
      }
    }
    return estimate;
  });
}

}  // namespace trainsim::parallelism
