#include "parallelism/iteration_simulation.h"

#include <algorithm>

#include "parallelism/compute_timer.h"
#include "sim/compute_model.h"
#include "sim/engine.h"
#include "sim/flow_network.h"
#include "topology/cluster.h"
#include "topology/router.h"

namespace trainsim::parallelism {
namespace {

double seconds(sim::SimTime t) { return sim::simTimeToSeconds(t); }

// Where the critical rank's time went (see TimeBreakdown).
TimeBreakdown breakdownOf(const IterationGraph& iteration, const sim::TaskExecutor& executor, std::size_t rank_index,
                          sim::SimTime makespan) {
  const RankTasks& rank = iteration.ranks[rank_index];
  const sim::TaskGraph& graph = iteration.graph;
  TimeBreakdown breakdown;
  for (sim::TaskId task = 0; task < graph.taskCount(); ++task) {
    if (graph.stream(task) == rank.compute_stream && graph.kind(task) == sim::TaskKind::kCompute) {
      breakdown.compute += seconds(executor.finishTime(task) - executor.startTime(task));
    }
  }
  sim::SimTime previous_end = 0;
  for (std::size_t i = 0; i < rank.steps.size(); ++i) {
    const sim::SimTime start = executor.startTime(rank.step_compute[i]);
    if (rank.step_input[i] != sim::kNoTask) {
      // Waiting after both this GPU and the sender were ready: the transfer itself.
      const sim::SimTime sender_ready = executor.startTime(rank.step_input[i]);
      breakdown.pp_comm_exposed += seconds(std::max<sim::SimTime>(0, start - std::max(previous_end, sender_ready)));
    }
    breakdown.tp_comm_exposed +=
        seconds(executor.finishTime(rank.step_end[i]) - executor.finishTime(rank.step_compute_last[i]));
    previous_end = executor.finishTime(rank.step_end[i]);
  }
  const sim::SimTime optimizer_start = executor.startTime(rank.optimizer);
  breakdown.dp_comm_exposed = seconds(std::max<sim::SimTime>(0, optimizer_start - previous_end)) +
                              seconds(std::max<sim::SimTime>(0, makespan - executor.finishTime(rank.optimizer)));
  breakdown.pipeline_bubble = std::max(0.0, seconds(makespan) - breakdown.compute - breakdown.tp_comm_exposed -
                                                breakdown.pp_comm_exposed - breakdown.dp_comm_exposed);
  return breakdown;
}

}  // namespace

Expected<IterationResult> simulateIteration(const Experiment& experiment, const SimulationOptions& options) {
  return catchInputErrors([&]() -> IterationResult {
    const auto cluster = valueOrThrow(topology::Cluster::build(experiment.cluster));
    topology::Router router(cluster);
    const auto compute =
        valueOrThrow(sim::ComputeModel::create(experiment.cluster.gpu, experiment.training.precision, options.compute));
    const ComputeTimer timer(compute);
    IterationBuilder builder(experiment, cluster, router, options.communication, timer, options.iteration);
    IterationGraph iteration = builder.build();

    sim::Engine engine;
    sim::FlowNetwork network(engine, sim::CollectiveBuilder::effectiveCapacities(cluster, options.communication));
    sim::TaskExecutor executor(engine, network, iteration.graph);
    if (options.trace != nullptr) {
      options.trace->beginRun(iteration.graph, &cluster);
      executor.addObserver(options.trace);
    }
    const sim::SimTime makespan = executor.run();
    if (!executor.allFinished()) throw std::logic_error("the iteration's task graph has a cycle");

    IterationResult result;
    result.iteration_time_s = seconds(makespan);
    result.microbatches = iteration.microbatches;
    result.tasks = iteration.graph.taskCount();
    result.events = engine.eventsProcessed();
    const auto& training = experiment.training;
    const auto gpus = static_cast<double>(experiment.plan.gpus);
    const double tokens = static_cast<double>(training.global_batch_size * training.seq_len);
    result.tokens_per_s = tokens / result.iteration_time_s;
    result.model_flops = modelFlopsPerIteration(experiment.model, training, options.iteration.flops);
    result.hardware_flops =
        hardwareFlopsPerIteration(experiment.model, training, experiment.plan.recompute, options.iteration.flops);
    result.tflops_per_gpu = result.model_flops / (gpus * result.iteration_time_s) / 1e12;
    result.hardware_tflops_per_gpu = result.hardware_flops / (gpus * result.iteration_time_s) / 1e12;
    const double peak = experiment.cluster.gpu.peakTflops(training.precision).value_or(0.0);
    result.mfu = peak > 0.0 ? result.tflops_per_gpu / peak : 0.0;
    result.hfu = peak > 0.0 ? result.hardware_tflops_per_gpu / peak : 0.0;
    if (training.tokens) {
      result.time_to_train_s = *training.tokens / result.tokens_per_s;
      result.gpu_hours = *result.time_to_train_s * gpus / 3600.0;
      if (experiment.cluster.price_per_gpu_hour)
        result.cost_usd = *result.gpu_hours * *experiment.cluster.price_per_gpu_hour;
    }
    MemoryOptions memory_options;
    memory_options.kernels = options.iteration.flops;
    result.memory = estimateMemory(experiment, memory_options);

    // The breakdown of the rank whose optimizer step ends last.
    std::size_t critical = 0;
    for (std::size_t r = 0; r < iteration.ranks.size(); ++r) {
      if (!iteration.ranks[r].simulated) continue;
      if (executor.finishTime(iteration.ranks[r].optimizer) >
          executor.finishTime(iteration.ranks[critical].optimizer)) {
        critical = r;
      }
    }
    result.breakdown = breakdownOf(iteration, executor, critical, makespan);
    return result;
  });
}

}  // namespace trainsim::parallelism
