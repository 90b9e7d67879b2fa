#include "parallelism/iteration_simulation.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <future>
#include <optional>
#include <stdexcept>
#include <system_error>
#include <utility>
#include <vector>

#include "parallelism/compute_timer.h"
#include "parallelism/default_model_constants.h"
#include "parallelism/iteration_memory.h"
#include "parallelism/rank_layout.h"
#include "perf/compute_model.h"
#include "perf/default_parameters.h"
#include "sim/engine.h"
#include "sim/flow_network.h"
#include "sim/memory_budget.h"
#include "topology/cluster.h"
#include "topology/router.h"

namespace trainsim::parallelism {
namespace {

double seconds(sim::SimTime t) { return sim::simTimeToSeconds(t); }

// Of what the collectives beside a rank's compute took from it (its compute tasks' stretch),
// the share of the data-parallel ones; the rest is the expert all-to-alls' overlapped with a
// partner pass (IterationBuilder::addGroupCollective). A compute task beside contenders of
// shares f_c progresses at 1 - sum f_c, so it is stretched by sum_c f_c x the time c ran beside
// it: each contender's part is its share times its overlap with the stream's compute tasks
// (`intervals`, in stream order, with `before` the running time of those ahead of each).
double dataParallelStretchShare(const IterationGraph& iteration, const sim::TaskExecutor& executor,
                                sim::StreamId compute_stream,
                                const std::vector<std::pair<sim::SimTime, sim::SimTime>>& intervals,
                                const std::vector<sim::SimTime>& before) {
  const sim::TaskGraph& graph = iteration.graph;
  double data = 0.0;
  double all = 0.0;
  for (const sim::Contention& contention : graph.contentions()) {
    if (contention.stream != compute_stream) continue;
    const sim::SimTime from = executor.startTime(contention.task);
    const sim::SimTime to = executor.finishTime(contention.task);
    if (to <= from) continue;
    // The compute tasks that end after `from` and start before `to`.
    auto first = std::partition_point(intervals.begin(), intervals.end(),
                                      [from](const auto& interval) { return interval.second <= from; });
    auto last =
        std::partition_point(first, intervals.end(), [to](const auto& interval) { return interval.first < to; });
    if (first == last) continue;
    const auto i = static_cast<std::size_t>(first - intervals.begin());
    const auto j = static_cast<std::size_t>(last - intervals.begin());
    sim::SimTime overlap = before[j] - before[i];
    overlap -= std::max<sim::SimTime>(0, from - first->first);
    overlap -= std::max<sim::SimTime>(0, (last - 1)->second - to);
    const double part = contention.fraction * seconds(std::max<sim::SimTime>(0, overlap));
    all += part;
    if (graph.tag(contention.task) == static_cast<uint32_t>(TaskCategory::kDataComm)) data += part;
  }
  return all > 0.0 ? data / all : 1.0;
}

// Where a rank's time went (see TimeBreakdown). `last_optimizer_end` is when the last
// optimizer step of all ends (the critical rank's): a rank whose step ends before it waits
// for the slowest stage, idle time like the bubble; after it, what runs until the makespan
// (the parameter gathers that follow the steps) is data-parallel time, as on the critical rank.
TimeBreakdown breakdownOf(const IterationGraph& iteration, const sim::TaskExecutor& executor, std::size_t rank_index,
                          sim::SimTime makespan, sim::SimTime last_optimizer_end) {
  const RankTasks& rank = iteration.ranks[rank_index];
  const sim::TaskGraph& graph = iteration.graph;
  TimeBreakdown breakdown;
  // Compute at full speed; what it lost to the SMs of the collectives beside it (contention)
  // is data-parallel time, or expert-parallel time where paired all-to-alls took it.
  auto stretch = [&](sim::TaskId task) {
    return executor.finishTime(task) - executor.startTime(task) - graph.duration(task);
  };
  sim::SimTime stretched = 0;
  std::vector<std::pair<sim::SimTime, sim::SimTime>> intervals;
  for (sim::TaskId task = 0; task < graph.taskCount(); ++task) {
    if (graph.stream(task) == rank.compute_stream && graph.kind(task) == sim::TaskKind::kCompute) {
      breakdown.compute += seconds(graph.duration(task));
      stretched += stretch(task);
      intervals.emplace_back(executor.startTime(task), executor.finishTime(task));
    }
  }
  std::sort(intervals.begin(), intervals.end());  // one at a time on the stream: in time order
  std::vector<sim::SimTime> before{0};
  for (const auto& [start, finish] : intervals) before.push_back(before.back() + (finish - start));
  const double data_share = stretched > 0 && !intervals.empty()
                                ? dataParallelStretchShare(iteration, executor, rank.compute_stream, intervals, before)
                                : 1.0;
  breakdown.dp_comm_exposed += data_share * seconds(stretched);
  breakdown.tp_comm_exposed += (1.0 - data_share) * seconds(stretched);
  sim::SimTime previous_end = 0;
  for (std::size_t i = 0; i < rank.steps.size(); ++i) {
    const sim::SimTime start = executor.startTime(rank.step_compute[i]);
    // Waiting for ZeRO's parameter all-gather beyond the end of the previous pass.
    sim::SimTime gathered = previous_end;
    if (rank.step_gather[i] != sim::kNoTask) {
      gathered = std::max(previous_end, std::min(start, executor.finishTime(rank.step_gather[i])));
      breakdown.dp_comm_exposed += seconds(gathered - previous_end);
      // ... and for the later buckets' gathers inside the pass (its compute parts wait),
      // beyond the stretch already counted. The pass's tasks are consecutive on its stream.
      sim::SimTime pass_stretch = 0;
      for (sim::TaskId task = rank.step_compute[i]; task <= rank.step_compute_last[i]; ++task) {
        if (graph.stream(task) == rank.compute_stream && graph.kind(task) == sim::TaskKind::kCompute) {
          pass_stretch += stretch(task);
        }
      }
      // To the compute's end: the waits on the host after it are the host's.
      sim::SimTime host_after_compute = 0;
      if (rank.step_launched[i] != sim::kNoTask) {
        const sim::TaskId end_of_pass = rank.step_launched[i];
        host_after_compute = executor.finishTime(end_of_pass) - executor.finishTime(end_of_pass - 1);
      }
      if (rank.step_host_wait[i] != sim::kNoTask) host_after_compute += graph.duration(rank.step_host_wait[i]);
      const sim::SimTime span = executor.finishTime(rank.step_compute_last[i]) - start - host_after_compute;
      breakdown.dp_comm_exposed += seconds(std::max<sim::SimTime>(0, span - rank.step_compute_time[i] - pass_stretch));
    }
    // Waiting for the host to launch the pass's first kernel, then (at its end) its last.
    sim::SimTime ready = gathered;
    if (rank.step_launch_first[i] != sim::kNoTask) {
      const sim::SimTime launched = std::min(start, executor.finishTime(rank.step_launch_first[i]));
      breakdown.host_dispatch_exposed += seconds(std::max<sim::SimTime>(0, launched - ready));
      ready = std::max(ready, launched);
      const sim::TaskId end_of_pass = rank.step_launched[i];
      breakdown.host_dispatch_exposed +=
          seconds(executor.finishTime(end_of_pass) - executor.finishTime(end_of_pass - 1));
    }
    if (rank.step_host_wait[i] != sim::kNoTask) {
      const sim::TaskId wait = rank.step_host_wait[i];
      breakdown.host_dispatch_exposed += seconds(graph.duration(wait));
    }
    if (rank.step_input[i] != sim::kNoTask) {
      // Waiting after this GPU, its parameters and the sender were ready: the transfer itself.
      const sim::SimTime sender_ready = executor.startTime(rank.step_input[i]);
      breakdown.pp_comm_exposed += seconds(std::max<sim::SimTime>(0, start - std::max(ready, sender_ready)));
    }
    breakdown.tp_comm_exposed +=
        seconds(executor.finishTime(rank.step_end[i]) - executor.finishTime(rank.step_compute_last[i]));
    previous_end = executor.finishTime(rank.step_end[i]);
  }
  const sim::SimTime optimizer_start = executor.startTime(rank.optimizer);
  const sim::SimTime step_end = std::max(executor.finishTime(rank.optimizer), last_optimizer_end);
  breakdown.dp_comm_exposed += seconds(std::max<sim::SimTime>(0, optimizer_start - previous_end)) +
                               seconds(std::max<sim::SimTime>(0, makespan - step_end));
  breakdown.pipeline_bubble =
      std::max(0.0, seconds(makespan) - breakdown.compute - breakdown.tp_comm_exposed - breakdown.pp_comm_exposed -
                        breakdown.dp_comm_exposed - breakdown.host_dispatch_exposed);
  return breakdown;
}

// What one event simulation of the iteration gives; the metrics follow from it.
struct ScheduleRun {
  double iteration_time_s = 0.0;
  TimeBreakdown breakdown;
  std::vector<TimeBreakdown> stage_breakdowns;
  uint64_t tasks = 0;
  uint64_t events = 0;
};

ScheduleRun simulateSchedule(const Experiment& experiment, const SimulationOptions& options) {
  const auto cluster = valueOrThrow(topology::Cluster::build(experiment.cluster));
  topology::Router router(cluster);
  const auto compute =
      valueOrThrow(perf::ComputeModel::create(experiment.cluster.gpu, experiment.training.precision, options.compute));
  const ComputeTimer timer(compute);
  IterationBuilder builder(experiment, cluster, router, options.communication, timer, options.iteration);
  IterationGraph iteration = builder.build();

  sim::Engine engine;
  sim::FlowNetwork network(engine, perf::CollectiveBuilder::effectiveCapacities(cluster, options.communication));
  sim::TaskExecutor executor(engine, network, iteration.graph);
  if (options.trace != nullptr) {
    options.trace->beginRun(iteration.graph, &cluster);
    executor.addObserver(options.trace);
  }
  const sim::SimTime makespan = executor.run();
  if (!executor.allFinished()) throw std::logic_error("the iteration's task graph has a cycle");

  ScheduleRun run;
  run.iteration_time_s = seconds(makespan);
  run.tasks = iteration.graph.taskCount();
  run.events = engine.eventsProcessed();

  // Per stage, the breakdown of its simulated rank whose optimizer step ends last (the first
  // of equals); the critical rank, the one that ends last of all, is its stage's.
  const RankLayout layout(experiment.plan);
  std::vector<std::optional<std::size_t>> last_of_stage(static_cast<std::size_t>(experiment.plan.pp));
  std::optional<std::size_t> critical;
  auto endsLater = [&](std::size_t r, const std::optional<std::size_t>& than) {
    return !than ||
           executor.finishTime(iteration.ranks[r].optimizer) > executor.finishTime(iteration.ranks[*than].optimizer);
  };
  for (std::size_t r = 0; r < iteration.ranks.size(); ++r) {
    if (!iteration.ranks[r].simulated) continue;
    auto& last = last_of_stage.at(static_cast<std::size_t>(layout.coordinate(static_cast<int64_t>(r)).pp));
    if (endsLater(r, last)) last = r;
    if (endsLater(r, critical)) critical = r;
  }
  if (!critical) throw std::logic_error("the iteration simulated no rank");
  const sim::SimTime last_optimizer_end = executor.finishTime(iteration.ranks[*critical].optimizer);
  for (const auto& last : last_of_stage) {
    if (!last) throw std::logic_error("a pipeline stage has no simulated rank");
    run.stage_breakdowns.push_back(breakdownOf(iteration, executor, *last, makespan, last_optimizer_end));
  }
  run.breakdown =
      run.stage_breakdowns.at(static_cast<std::size_t>(layout.coordinate(static_cast<int64_t>(*critical)).pp));
  return run;
}

// The same experiment with `microbatches` micro-batches per iteration (global batch scaled).
Experiment withMicrobatches(const Experiment& experiment, int64_t microbatches) {
  Experiment reduced = experiment;
  reduced.training.global_batch_size = microbatches * experiment.plan.dp * experiment.training.micro_batch_size;
  return reduced;
}

double extrapolate(double at_first, double at_second, const MicrobatchExtrapolation& e) {
  const double per_microbatch = (at_second - at_first) / static_cast<double>(e.second - e.first);
  return at_second + per_microbatch * static_cast<double>(e.microbatches - e.second);
}

TimeBreakdown extrapolate(const TimeBreakdown& a, const TimeBreakdown& b, const MicrobatchExtrapolation& e) {
  // A part that is zero in both runs comes out a rounding error either side of zero (a
  // pipeline bubble of -1e-16 s with pp 1); no part of a time is negative.
  auto part = [&](double at_a, double at_b) { return std::max(0.0, extrapolate(at_a, at_b, e)); };
  TimeBreakdown result;
  result.compute = part(a.compute, b.compute);
  result.tp_comm_exposed = part(a.tp_comm_exposed, b.tp_comm_exposed);
  result.dp_comm_exposed = part(a.dp_comm_exposed, b.dp_comm_exposed);
  result.pp_comm_exposed = part(a.pp_comm_exposed, b.pp_comm_exposed);
  result.pipeline_bubble = part(a.pipeline_bubble, b.pipeline_bubble);
  result.host_dispatch_exposed = part(a.host_dispatch_exposed, b.host_dispatch_exposed);
  return result;
}

std::vector<TimeBreakdown> extrapolate(const std::vector<TimeBreakdown>& a, const std::vector<TimeBreakdown>& b,
                                       const MicrobatchExtrapolation& e) {
  std::vector<TimeBreakdown> result;
  for (std::size_t stage = 0; stage < a.size(); ++stage) result.push_back(extrapolate(a[stage], b.at(stage), e));
  return result;
}

// The fallback to every micro-batch builds the whole schedule, which the estimate made
// before the run (of the extrapolation's runs) does not cover: estimated on its own, it is
// refused when over the budget.
void requireFullRunWithinBudget(const Experiment& experiment, const SimulationOptions& options, int64_t last_tried) {
  SimulationOptions every = options;
  every.every_microbatch = true;
  const sim::MemoryEstimate full = valueOrThrow(estimateIterationMemory(experiment, every));
  const std::string remedy = fmt::format(
      "the steady state did not extrapolate (up to {} of {} micro-batches), so every micro-batch is simulated: "
      "simulate fewer GPUs or micro-batches, or use --symmetric",
      last_tried, experiment.plan.microbatches(experiment.training));
  valueOrThrow(sim::checkMemoryBudget(full, options.memory_budget_GiB, sim::kMemoryBudgetOption, remedy));
}

}  // namespace

Expected<SimulationOptions> defaultSimulationOptions(const ConfigPaths& paths) {
  SimulationOptions options;
  TRAINSIM_ASSIGN_OR_RETURN(options.communication, perf::defaultCommunicationParameters(paths));
  TRAINSIM_ASSIGN_OR_RETURN(options.compute, perf::defaultComputeParameters(paths));
  TRAINSIM_ASSIGN_OR_RETURN(options.iteration.flops, defaultWorkloadOptions(paths));
  TRAINSIM_ASSIGN_OR_RETURN(options.memory, defaultMemoryOptions(paths));
  return options;
}

MemoryOptions memoryOptions(const SimulationOptions& options) {
  MemoryOptions memory = options.memory;
  memory.kernels = options.iteration.flops;
  return memory;
}

std::optional<MicrobatchExtrapolation> microbatchExtrapolation(const ParallelPlan& plan, int64_t microbatches) {
  // From pp micro-batches on, every schedule here is in its steady state (1F1B's warm-up is
  // pp - 1 forwards; interleaving needs multiples of pp) and each further pp micro-batches
  // add the same rounds of work, so the time is linear in m from there: simulate pp and 2 pp
  // and extend. (Checked against simulating every micro-batch: tests/parallelism/
  // microbatch_extrapolation_test.cpp; GPT-3 175B on 1,024 A100, 192 micro-batches: 0.07%.)
  // The line is checked against a third point (simulateIteration), so it is only worth it
  // when the three runs save at least pp micro-batches over simulating them all.
  // The V schedules (ZB-V, DualPipeV) reach theirs from 2 pp micro-batches (their warm-up
  // and cool-down counts assume at least 2 pp - 1 and 2 pp), DualPipe too (pp per direction).
  const int64_t step = placesChunksInAV(plan.schedule) || runsBothDirections(plan.schedule)
                           ? 2 * plan.pp
                           : std::max<int64_t>(plan.pp, 2);
  const int64_t first = step;
  const int64_t second = first + step;
  const int64_t third = second + step;
  if (microbatches < first + second + third + step) return std::nullopt;
  return MicrobatchExtrapolation{microbatches, first, second};
}

std::vector<int64_t> steadyStateRunsAtOnce(const MicrobatchExtrapolation& extrapolation, int threads) {
  const int64_t check = 2 * extrapolation.second - extrapolation.first;
  if (threads <= 1) return {check};
  if (threads == 2) return {extrapolation.second, check};
  return {extrapolation.first, extrapolation.second, check};
}

void applySoftwareStack(const Experiment& experiment, SimulationOptions& options) {
  if (!options.stack.empty() || options.stackless_overrides) {
    throw std::logic_error("a software stack is applied twice: " + options.stack);
  }
  if (experiment.parameter_overrides) {
    applyStackParameters(*experiment.parameter_overrides, options.compute, options.communication,
                         options.iteration.flops, options.memory);
    options.stackless_overrides = true;
  }
  if (!experiment.stack) return;
  parallelism::applySoftwareStack(*experiment.stack, options.compute, options.communication, options.iteration.flops,
                                  options.memory);
  options.stack = experiment.stack->name;
}

SimulationOptions withHostDispatch(const Experiment& experiment, SimulationOptions options) {
  if (!experiment.training.dispatch) return options;
  const perf::ComputeParameters& compute = options.compute;
  double per_kernel_us = compute.dispatch_eager_us * compute.dispatch_eager_in_step_factor;
  if (*experiment.training.dispatch == DispatchMode::kCompiled) per_kernel_us = compute.dispatch_compiled_us;
  if (*experiment.training.dispatch == DispatchMode::kCudaGraphs) per_kernel_us = compute.dispatch_cuda_graphs_us;
  options.iteration.host.per_kernel_s = per_kernel_us * 1e-6;
  // Library calls and native kernels are captured with their region under CUDA graphs, and
  // cost nothing where the host's launches do not.
  const bool graphs = *experiment.training.dispatch == DispatchMode::kCudaGraphs;
  const bool free = graphs || per_kernel_us <= 0.0;
  options.iteration.host.per_library_call_s = free ? 0.0 : compute.dispatch_library_call_us * 1e-6;
  options.iteration.host.per_native_kernel_s = free ? 0.0 : compute.dispatch_native_kernel_us * 1e-6;
  options.iteration.host.per_bare_op_s = per_kernel_us <= 0.0 ? 0.0 : compute.dispatch_eager_us * 1e-6;
  options.compute.launch_overhead_us = compute.dispatch_kernel_gap_us;
  return options;
}

Expected<IterationResult> simulateIteration(const Experiment& experiment, const SimulationOptions& given) {
  return catchInputErrors([&]() -> IterationResult {
    if (given.stack != experiment.training.stack) {
      throw std::logic_error("simulation options prepared for stack '" + given.stack + "' given an experiment of '" +
                             experiment.training.stack + "' (applySoftwareStack)");
    }
    if (given.stackless_overrides != experiment.parameter_overrides.has_value()) {
      throw std::logic_error("simulation options prepared " +
                             std::string(given.stackless_overrides ? "with" : "without") +
                             " stack_overrides given an experiment " +
                             (experiment.parameter_overrides ? "with" : "without") + " them (applySoftwareStack)");
    }
    const SimulationOptions options = withHostDispatch(experiment, given);
    IterationResult result;
    result.microbatches = experiment.plan.microbatches(experiment.training);
    const auto extrapolation = options.trace == nullptr && !options.every_microbatch
                                   ? microbatchExtrapolation(experiment.plan, result.microbatches)
                                   : std::nullopt;
    if (extrapolation) {
      // Linear from the steady state on, but a data-parallel collective that runs in the
      // background from the iteration's start (ZeRO's overlapped parameter gather) can
      // outlast the first micro-batches and meet the gradient reduction at the end, which
      // bends the line at small counts. So the line through the last two points must
      // predict a third within kLinearTolerance; if not, the points move up (the spacing
      // doubling each time) until it does or the real count is reached, which is then
      // simulated in full. 1% lets through the small wiggle of interleaved schedules over
      // many stages (megatron-sc21-t1-009, pp 35 x 3 chunks: 0.6% at its first check) and
      // catches a bent start (Llama 3 8B, cp 8, dp 4: the line through 2 and 4 micro-batches
      // misses 6 by over 20%).
      constexpr double kLinearTolerance = 0.01;
      int64_t step = extrapolation->second - extrapolation->first;
      int64_t at_a = extrapolation->first;
      int64_t at_b = extrapolation->second;
      const auto runAt = [&](int64_t microbatches) {
        return simulateSchedule(withMicrobatches(experiment, microbatches), options);
      };
      // The first check always runs (microbatchExtrapolation leaves room for it), so with
      // threads to spare it runs beside the first two (steadyStateRunsAtOnce).
      // A thread the system refuses to start leaves its run to this one.
      const auto startRun = [&](int64_t microbatches) {
        try {
          return std::async(std::launch::async, runAt, microbatches);
        } catch (const std::system_error&) {
          return std::future<ScheduleRun>();
        }
      };
      std::future<ScheduleRun> check = options.threads >= 2 ? startRun(at_b + step) : std::future<ScheduleRun>();
      std::future<ScheduleRun> first =
          options.threads >= 3 && check.valid() ? startRun(at_a) : std::future<ScheduleRun>();
      ScheduleRun b = runAt(at_b);
      ScheduleRun a = first.valid() ? first.get() : runAt(at_a);
      std::optional<ScheduleRun> first_check;
      if (check.valid()) first_check = check.get();
      result.tasks = a.tasks + b.tasks;
      result.events = a.events + b.events;
      bool linear = false;
      while (true) {
        const int64_t at_c = at_b + step;
        if (at_c + step > result.microbatches) break;
        const ScheduleRun c = first_check ? std::move(*first_check) : runAt(at_c);
        first_check.reset();
        result.tasks += c.tasks;
        result.events += c.events;
        const double predicted = b.iteration_time_s + (b.iteration_time_s - a.iteration_time_s) *
                                                          static_cast<double>(at_c - at_b) /
                                                          static_cast<double>(at_b - at_a);
        linear = std::abs(predicted - c.iteration_time_s) <= kLinearTolerance * c.iteration_time_s;
        a = b;
        at_a = at_b;
        b = c;
        at_b = at_c;
        if (linear) break;
        step *= 2;
      }
      if (linear) {
        const MicrobatchExtrapolation used{result.microbatches, at_a, at_b};
        result.iteration_time_s = extrapolate(a.iteration_time_s, b.iteration_time_s, used);
        result.breakdown = extrapolate(a.breakdown, b.breakdown, used);
        result.stage_breakdowns = extrapolate(a.stage_breakdowns, b.stage_breakdowns, used);
        result.extrapolation = used;
      } else {
        if (options.memory_budget_GiB > 0.0) requireFullRunWithinBudget(experiment, options, at_b);
        const ScheduleRun run = simulateSchedule(experiment, options);
        result.iteration_time_s = run.iteration_time_s;
        result.breakdown = run.breakdown;
        result.stage_breakdowns = run.stage_breakdowns;
        result.tasks += run.tasks;
        result.events += run.events;
      }
    } else {
      const ScheduleRun run = simulateSchedule(experiment, options);
      result.iteration_time_s = run.iteration_time_s;
      result.breakdown = run.breakdown;
      result.stage_breakdowns = run.stage_breakdowns;
      result.tasks = run.tasks;
      result.events = run.events;
    }
    const auto& training = experiment.training;
    const auto gpus = static_cast<double>(experiment.plan.gpus);
    const double tokens = static_cast<double>(training.global_batch_size * training.seq_len);
    result.tokens_per_s = tokens / result.iteration_time_s;
    // Counted FLOPs do not depend on the attention kernel; the experiment's choice is applied
    // anyway, as everywhere a workload is built from an experiment (kernelsFor).
    const FlopsOptions kernels = kernelsFor(experiment, options.iteration.flops);
    result.model_flops = modelFlopsPerIteration(experiment.model, training, kernels);
    result.hardware_flops = hardwareFlopsPerIteration(experiment.model, training, experiment.plan, kernels);
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
    result.memory = estimateMemory(experiment, memoryOptions(options));
    return result;
  });
}

Expected<OpProfile> computeOpProfile(const Experiment& experiment, const SimulationOptions& given) {
  const SimulationOptions options = withHostDispatch(experiment, given);
  TRAINSIM_ASSIGN_OR_RETURN(
      const auto compute,
      perf::ComputeModel::create(experiment.cluster.gpu, experiment.training.precision, options.compute));
  const ComputeTimer timer(compute);
  return busiestStageOpProfile(experiment, timer, options.iteration);
}

}  // namespace trainsim::parallelism
