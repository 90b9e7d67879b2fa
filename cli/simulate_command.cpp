#include "cli/simulate_command.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "base/expected.h"
#include "base/units.h"
#include "calibrate/calibration_file.h"
#include "cli/experiment_json.h"
#include "cli/goodput_output.h"
#include "cli/html_report.h"
#include "cli/input_file.h"
#include "cli/json_text.h"
#include "cli/memory_budget_option.h"
#include "cli/output_file.h"
#include "goodput/goodput_report.h"
#include "parallelism/experiment_loader.h"
#include "parallelism/iteration_memory.h"
#include "parallelism/iteration_simulation.h"
#include "parallelism/rank_layout.h"
#include "perf/compute_model.h"
#include "sim/trace_recorder.h"
#include "topology/reliability_spec.h"

namespace trainsim::cli {
namespace {

using parallelism::Experiment;
using parallelism::IterationResult;

// The software stack the run was predicted for (null: none named).
nlohmann::ordered_json stackJson(const Experiment& experiment) {
  if (!experiment.stack) return nullptr;
  const auto& training = experiment.training;
  return {{"name", experiment.stack->name},
          {"title", experiment.stack->title},
          {"version", experiment.stack->version},
          {"dispatch", training.dispatch ? nlohmann::ordered_json(parallelism::dispatchModeName(*training.dispatch))
                                         : nlohmann::ordered_json(nullptr)}};
}

// One object per pipeline stage: where the time of the stage's last GPU to finish went and
// the stage's peak memory per GPU.
nlohmann::ordered_json stagesJson(const IterationResult& result) {
  auto stages = nlohmann::ordered_json::array();
  for (std::size_t s = 0; s < result.stage_breakdowns.size(); ++s) {
    const auto& b = result.stage_breakdowns[s];
    stages.push_back({{"stage", s},
                      {"compute", b.compute},
                      {"tp_comm_exposed", b.tp_comm_exposed},
                      {"dp_comm_exposed", b.dp_comm_exposed},
                      {"pp_comm_exposed", b.pp_comm_exposed},
                      {"pipeline_bubble", b.pipeline_bubble},
                      {"host_dispatch_exposed", b.host_dispatch_exposed},
                      {"memory_bytes", std::llround(result.memory.stages.at(s).total())}});
  }
  return stages;
}

nlohmann::ordered_json resultJson(const Experiment& experiment, const IterationResult& result, bool symmetric,
                                  const std::optional<validation::ExpectedError>& expected_error) {
  const auto& plan = experiment.plan;
  const auto& b = result.breakdown;
  return {
      {"experiment", experiment.name},
      {"gpus", plan.gpus},
      {"parallelism", parallelismJson(experiment)},
      {"iteration_time_s", result.iteration_time_s},
      {"tokens_per_s", result.tokens_per_s},
      {"model_flops_per_iteration", result.model_flops},
      {"hardware_flops_per_iteration", result.hardware_flops},
      {"tflops_per_gpu", result.tflops_per_gpu},
      {"hardware_tflops_per_gpu", result.hardware_tflops_per_gpu},
      {"mfu", result.mfu},
      {"hfu", result.hfu},
      {"time_to_train_s", optionalNumber(result.time_to_train_s)},
      {"gpu_hours", optionalNumber(result.gpu_hours)},
      {"cost_usd", optionalNumber(result.cost_usd)},
      {"memory", memoryJson(result.memory)},
      {"breakdown_s",
       {{"compute", b.compute},
        {"tp_comm_exposed", b.tp_comm_exposed},
        {"dp_comm_exposed", b.dp_comm_exposed},
        {"pp_comm_exposed", b.pp_comm_exposed},
        {"pipeline_bubble", b.pipeline_bubble},
        {"host_dispatch_exposed", b.host_dispatch_exposed}}},
      {"stages", stagesJson(result)},
      {"stack", stackJson(experiment)},
      {"stack_overrides", stackOverrideKeys(experiment)},
      {"expected_error", expectedErrorJson(expected_error)},
      {"simulation",
       {{"tasks", result.tasks},
        {"events", result.events},
        {"mode", symmetric ? "symmetric" : "full"},
        {"simulated_microbatches", result.extrapolation ? nlohmann::ordered_json::array({result.extrapolation->first,
                                                                                         result.extrapolation->second})
                                                        : nlohmann::ordered_json::array({result.microbatches})}}},
  };
}

nlohmann::ordered_json opProfileJson(const parallelism::OpProfile& profile) {
  auto rows = nlohmann::ordered_json::array();
  for (const auto& row : profile.rows) {
    rows.push_back({{"name", row.name},
                    {"kind", parallelism::opKindName(row.kind)},
                    {"forward_s", row.forward_s},
                    {"backward_s", row.backward_s},
                    {"recompute_s", row.recompute_s},
                    {"total_s", row.total_s()},
                    {"flops", row.flops}});
  }
  return {{"stage", profile.stage},
          {"microbatches", profile.microbatches},
          {"optimizer_s", profile.optimizer_s},
          {"total_s", profile.total_s()},
          {"rows", rows}};
}

// The op table of `simulate --ops`: seconds per iteration on one GPU of the stage, the share
// of the stage's compute, and the rate of the ops that count FLOPs.
std::string opProfileText(const parallelism::OpProfile& profile, int64_t stages) {
  const double total = profile.total_s();
  std::string text = fmt::format(
      "compute by op (stage {} of {}, the busiest; per iteration, {} micro-batches, before communication waits):\n",
      profile.stage, stages, profile.microbatches);
  text += fmt::format("  {:<40} {:<13} {:>10} {:>10} {:>10} {:>10} {:>6} {:>8}\n", "op", "kind", "forward", "backward",
                      "recompute", "total", "share", "TFLOP/s");
  auto line = [&](const std::string& name, std::string_view kind, double forward, double backward, double recompute,
                  double sum, double flops) {
    const std::string rate = flops > 0.0 && sum > 0.0 ? fmt::format("{:8.1f}", flops / sum / 1e12) : "       -";
    return fmt::format("  {:<40} {:<13} {:>9.3f}s {:>9.3f}s {:>9.3f}s {:>9.3f}s {:>5.1f}% {}\n", name, kind, forward,
                       backward, recompute, sum, total > 0.0 ? 100.0 * sum / total : 0.0, rate);
  };
  for (const auto& row : profile.rows) {
    // Counted FLOPs are the matmuls' (SPEC); element-wise ops show no rate.
    const bool counts = row.kind == parallelism::OpKind::kGemm || row.kind == parallelism::OpKind::kAttention;
    text += line(row.name, parallelism::opKindName(row.kind), row.forward_s, row.backward_s, row.recompute_s,
                 row.total_s(), counts ? row.flops : 0.0);
  }
  text += line("optimizer_step", "memory-bound", 0.0, 0.0, 0.0, profile.optimizer_s, 0.0);
  text += fmt::format("  {:<32} {:<13} {:>10} {:>10} {:>10} {:>9.3f}s\n", "total", "", "", "", "", total);
  return text;
}

// The fraction of the kernels' microbenchmark rates the simulation ran them at, and where it
// came from: a calibrated step fit, or the GPU type's default (configs/defaults/compute.yaml).
std::string kernelRateLine(const Experiment& experiment, const parallelism::SimulationOptions& simulation,
                           bool calibrated) {
  const std::string& gpu = experiment.cluster.gpu.key;
  const double fraction = simulation.compute.trainingRateFraction(gpu);
  // Where the fraction for this GPU comes from: the experiment's stack_overrides (with or
  // without a stack), else the stack's file.
  auto setsFraction = [&](const parallelism::StackParameters* parameters) {
    if (parameters == nullptr) return false;
    return std::any_of(parameters->compute.training_rate_fraction.begin(),
                       parameters->compute.training_rate_fraction.end(),
                       [&](const perf::MeasuredFraction& row) { return row.gpu_key == gpu; });
  };
  const parallelism::StackParameters* overrides = experiment.parameter_overrides ? &*experiment.parameter_overrides
                                                  : experiment.stack ? parallelism::stackOverrides(*experiment.stack)
                                                                     : nullptr;
  const bool from_overrides = setsFraction(overrides);
  const bool from_stack = !from_overrides && experiment.stack && setsFraction(&experiment.stack->parameters.front());
  // The stack's factor on a GPU type it has no fraction of.
  const double stack_factor =
      experiment.stack && !from_overrides && !from_stack
          ? parallelism::stackComputeValue(*experiment.stack, "training_rate_stack_factor").value_or(1.0)
          : 1.0;
  const std::string origin =
      calibrated            ? "calibrated"
      : from_overrides      ? fmt::format("training.stack_overrides on {}", gpu)
      : from_stack          ? fmt::format("{} on {}; calibrate --training-step fits yours", experiment.stack->name, gpu)
      : stack_factor != 1.0 ? fmt::format(
                                  "{} default x {}'s factor {:.3g} for GPUs it was not fitted on; calibrate "
                                  "--training-step fits yours",
                                  gpu, experiment.stack->name, stack_factor)
      : fraction == 1.0 ? "no default for this GPU"
                        : fmt::format("{} default; calibrate --training-step fits your stack's", gpu);
  std::string text =
      fmt::format("kernel rates        {:.3g} of microbenchmark rates inside a step ({})\n", fraction, origin);
  const auto& spec = experiment.cluster.gpu;
  const double clock = perf::powerLimitClockRatio(spec, simulation.compute);
  if (clock < 1.0) {
    text +=
        fmt::format("power limit         {:.0f} W where its rates hold at {:.0f} W: math at {:.3g} of their clocks\n",
                    spec.power_limit_W > 0.0 ? spec.power_limit_W : spec.tdp_W,
                    spec.rates_power_W > 0.0 ? spec.rates_power_W : spec.tdp_W, clock);
  }
  return text;
}

std::string summary(const Experiment& experiment, const IterationResult& result, const std::string& kernel_rates,
                    const std::string& goodput) {
  const auto& plan = experiment.plan;
  const auto& b = result.breakdown;
  const double t = result.iteration_time_s;
  auto share = [&](double part) { return fmt::format("{:8.3f} s  {:5.1f}%", part, 100.0 * part / t); };
  std::string text = fmt::format("{}: {} on {} x {} ({})\n", experiment.name, experiment.model.name, plan.gpus,
                                 experiment.cluster.gpu.key, experiment.cluster.name);
  const std::string split = plan.unevenSplitText(experiment.model.layers);
  const std::string experts =
      experiment.model.moe && plan.etp != parallelism::ParallelPlan::kAuto
          ? fmt::format(" (etp {}, edp {})", plan.expertTensorParallel(), plan.expertDataParallel())
          : std::string();
  text += fmt::format("plan: tp {} pp {}{} dp {} cp {} ep {}{}, virtual stages {}, {} micro-batches of {}, {}{}{}\n",
                      plan.tp, plan.pp, split.empty() ? "" : " (" + split + " layers)", plan.dp, plan.cp, plan.ep,
                      experts, plan.virtual_stages, result.microbatches, experiment.training.micro_batch_size,
                      parallelism::scheduleName(plan.schedule),
                      plan.zero > 0 ? fmt::format(", zero {}", plan.zero) : std::string(),
                      experiment.training.flash_attention ? "" : ", unfused attention");
  if (experiment.stack) {
    const auto& dispatch = experiment.training.dispatch;
    text += fmt::format("software stack      {} ({}), {}\n", experiment.stack->name, experiment.stack->version,
                        dispatch ? fmt::format("{} dispatch", parallelism::dispatchModeName(*dispatch))
                                 : std::string("host not modelled"));
  }
  if (const auto overridden = stackOverrideKeys(experiment); !overridden.empty()) {
    text += fmt::format("stack overrides     {} (training.stack_overrides)\n", fmt::join(overridden, ", "));
  }
  text += fmt::format("iteration time      {:.4f} s\n", t);
  text += fmt::format("throughput          {:.0f} tokens/s\n", result.tokens_per_s);
  text += fmt::format("per GPU             {:.1f} TFLOP/s model ({:.1f} hardware)\n", result.tflops_per_gpu,
                      result.hardware_tflops_per_gpu);
  text += fmt::format("MFU / HFU           {:.1f}% / {:.1f}%\n", 100.0 * result.mfu, 100.0 * result.hfu);
  text += kernel_rates;
  const auto& peak = result.memory.peak();
  text += fmt::format(
      "memory per GPU      {:.1f} GiB of {:.1f} GiB: {} (weights {:.1f}, grads {:.1f}, optimizer {:.1f}, "
      "activations {:.1f}, other {:.1f})\n",
      peak.total() / units::kGiB, result.memory.capacity_bytes / units::kGiB,
      result.memory.fits() ? "fits" : "DOES NOT FIT", peak.weights / units::kGiB, peak.gradients / units::kGiB,
      peak.optimizer / units::kGiB, peak.activations / units::kGiB, peak.other() / units::kGiB);
  if (result.time_to_train_s) {
    text += fmt::format("time to train       {} for {:.3g} tokens, {:.0f} GPU-hours",
                        durationText(*result.time_to_train_s), *experiment.training.tokens, *result.gpu_hours);
    text +=
        result.cost_usd ? fmt::format(", ${:.0f}\n", *result.cost_usd) : std::string(" (no price in the cluster)\n");
    text += goodput;
  }
  text += "breakdown (critical GPU):\n";
  text += "  compute           " + share(b.compute) + "\n";
  text += "  TP/CP/EP comm     " + share(b.tp_comm_exposed) + "\n";
  text += "  DP comm exposed   " + share(b.dp_comm_exposed) + "\n";
  text += "  PP comm exposed   " + share(b.pp_comm_exposed) + "\n";
  text += "  pipeline bubble   " + share(b.pipeline_bubble) + "\n";
  if (experiment.training.dispatch) text += "  host dispatch     " + share(b.host_dispatch_exposed) + "\n";
  return text;
}

// The steady state runs at most three simulations at once (SimulationOptions::threads);
// more threads are accepted and idle.
constexpr int64_t kMaxSimulateThreads = 1024;

// Whether an estimate exceeds the --max-memory-gib budget.
bool overBudget(const SimulateOptions& options, const sim::MemoryEstimate& estimate) {
  return std::isfinite(options.max_memory_GiB) && estimate.bytes() > options.max_memory_GiB * units::kGiB;
}

// Before the cluster is built: a plan too large to represent is refused at once. Runs side
// by side hold more at once; where they would not fit, they run one after another
// (simulation.threads).
void requireRunWithinBudget(const SimulateOptions& options, const Experiment& experiment,
                            parallelism::SimulationOptions& simulation) {
  sim::MemoryEstimate estimate = valueOrThrow(parallelism::estimateIterationMemory(experiment, simulation));
  if (simulation.threads > 1 && overBudget(options, estimate)) {
    simulation.threads = 1;
    estimate = valueOrThrow(parallelism::estimateIterationMemory(experiment, simulation));
  }
  requireWithinMemoryBudget(estimate, options.max_memory_GiB,
                            std::string("simulate fewer GPUs, ") + (options.symmetric ? "" : "use --symmetric, ") +
                                "or larger gradient buckets (parallelism.ddp_bucket_size)");
}

// With slow GPUs the goodput model simulates every rank again (goodput_report.h): that run
// has to fit the budget too.
void requireEveryRankRunWithinBudget(const SimulateOptions& options, const Experiment& experiment,
                                     const topology::ReliabilitySpec& reliability,
                                     parallelism::SimulationOptions& simulation) {
  const topology::Stragglers& stragglers = reliability.stragglers;
  if (!(options.symmetric && stragglers.fraction > 0.0 && stragglers.slowdown > 1.0)) return;
  parallelism::SimulationOptions every_rank = simulation;
  every_rank.iteration.symmetric = false;
  sim::MemoryEstimate every_rank_estimate = valueOrThrow(parallelism::estimateIterationMemory(experiment, every_rank));
  if (every_rank.threads > 1 && overBudget(options, every_rank_estimate)) {
    simulation.threads = 1;  // the goodput model's run takes the simulation's options
    every_rank.threads = 1;
    every_rank_estimate = valueOrThrow(parallelism::estimateIterationMemory(experiment, every_rank));
  }
  requireWithinMemoryBudget(every_rank_estimate, options.max_memory_GiB,
                            "simulate fewer GPUs, or no slow GPUs (the goodput model simulates them rank by rank: "
                            "cluster.reliability.stragglers.fraction=0)");
}

// What the run simulated in place of the whole: one replica, or the steady state extended.
void printRunNotes(const SimulateOptions& options, const Experiment& experiment, const IterationResult& result) {
  if (options.symmetric) {
    const int64_t replicas = parallelism::RankLayout(experiment.plan).symmetricReplicas();
    if (replicas == 1) {
      std::cout << "(symmetric mode: data-parallel replica 0 simulated, the others assumed identical)\n";
    } else {
      std::cout << fmt::format(
          "(symmetric mode: data-parallel replicas 0-{} simulated (one expert-parallel group), the others "
          "assumed identical)\n",
          replicas - 1);
    }
  }
  if (result.extrapolation) {
    std::cout << fmt::format(
        "(steady state: {} and {} micro-batches simulated, extended linearly to {}; --every-microbatch for all)\n",
        result.extrapolation->first, result.extrapolation->second, result.microbatches);
  }
}

int run(const SimulateOptions& options, const CommandContext& context) {
  requireOneStdoutOutput(
      {{"--json", &options.json_file}, {"--trace", &options.trace_file}, {"--html", &options.html_file}});
  requireWritableOutputs({&options.json_file, &options.trace_file, &options.html_file});
  requireNotDirectory(options.experiment, "an experiment YAML file");
  std::vector<Override> overrides;
  for (const auto& text : options.overrides) overrides.push_back(parseOverride(text));
  const Experiment experiment = valueOrThrow(parallelism::loadExperiment(options.experiment, context.paths, overrides));
  parallelism::SimulationOptions simulation = valueOrThrow(parallelism::defaultSimulationOptions(context.paths));
  simulation.iteration.symmetric = options.symmetric;
  simulation.every_microbatch = options.every_microbatch;
  simulation.memory_budget_GiB = options.max_memory_GiB;
  parallelism::applySoftwareStack(experiment, simulation);
  std::optional<calibrate::Calibration> calibration;
  if (!options.calibration_file.empty()) {
    calibration = valueOrThrow(calibrate::loadCalibrationFile(options.calibration_file));
    calibrate::applyCalibration(*calibration, simulation);
  }
  if (options.threads && (*options.threads < 1 || *options.threads > kMaxSimulateThreads)) {
    throwInputError("--threads", "",
                    fmt::format("expected 1 to {} threads, found {}", kMaxSimulateThreads, *options.threads));
  }
  simulation.threads = options.threads ? static_cast<int>(*options.threads)
                                       : static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  requireRunWithinBudget(options, experiment, simulation);
  std::optional<topology::ReliabilitySpec> reliability;  // the goodput model's input
  if (experiment.training.tokens) {
    reliability = valueOrThrow(topology::clusterReliability(experiment.cluster, context.paths));
    requireEveryRankRunWithinBudget(options, experiment, *reliability, simulation);
  }
  std::optional<sim::TraceRecorder> trace;
  if (!options.trace_file.empty()) {
    trace.emplace(parallelism::taskCategoryName);
    simulation.trace = &*trace;
  }
  const IterationResult result = valueOrThrow(parallelism::simulateIteration(experiment, simulation));
  const auto expected_error = expectedErrorFor(experiment, context.paths);
  const goodput::GoodputOptions goodput_options{options.goodput_draws, options.seed, true};
  std::optional<goodput::GoodputReport> goodput_report;
  if (reliability) {
    goodput_report = valueOrThrow(goodput::goodputOf(experiment, *reliability, result, simulation, goodput_options));
  }
  std::optional<parallelism::OpProfile> profile;
  if (options.ops) profile = valueOrThrow(parallelism::computeOpProfile(experiment, simulation));
  if (trace) writeOutput(options.trace_file, [&](std::ostream& out) { trace->write(out); });
  if (!options.html_file.empty()) {
    const SimulateReport report{.experiment = experiment,
                                .result = result,
                                .expected_error = expected_error,
                                .goodput = goodput_report,
                                .symmetric = options.symmetric};
    writeOutput(options.html_file, [&](std::ostream& out) { writeSimulateReport(out, report); });
  }
  const bool json_to_stdout = anyOnStdout({&options.json_file, &options.trace_file, &options.html_file});
  if (!options.json_file.empty()) {
    auto json = resultJson(experiment, result, options.symmetric, expected_error);
    if (calibration) json["calibration"] = calibrate::describeCalibration(*calibration);
    // The rates the kernels ran at: the in-step fraction of their microbenchmark rates, and the
    // math clocks under the GPU's power limit over those the rates hold at.
    json["kernel_rates"] = {
        {"training_rate_fraction", simulation.compute.trainingRateFraction(experiment.cluster.gpu.key)},
        {"gpu_clock_ratio", perf::powerLimitClockRatio(experiment.cluster.gpu, simulation.compute)}};
    if (profile) json["ops"] = opProfileJson(*profile);
    json["goodput"] = goodputJson(goodput_report, goodput_options);
    writeOutput(options.json_file, [&](std::ostream& out) { out << jsonText(json, 2) << "\n"; });
  }
  if (!json_to_stdout) {
    if (calibration) {
      std::cout << "calibration in force: " << calibrate::describeCalibration(*calibration) << "\n";
      const std::string mismatch = calibrate::calibrationMismatch(*calibration, experiment.cluster);
      if (!mismatch.empty()) std::cout << "warning: " << mismatch << "\n";
    }
    const bool calibrated_rate =
        calibration && std::any_of(calibration->compute.training_rate_fraction.begin(),
                                   calibration->compute.training_rate_fraction.end(),
                                   [&](const auto& row) { return row.gpu_key == experiment.cluster.gpu.key; });
    std::cout << summary(
        experiment, result,
        kernelRateLine(experiment, simulation, calibrated_rate) + expectedErrorText(expected_error) +
            (calibrated_rate ? "                    (of the defaults: your calibration replaces them)\n" : ""),
        goodputText(goodput_report));
    if (profile) std::cout << opProfileText(*profile, experiment.plan.pp);
    printRunNotes(options, experiment, result);
  }
  if (!result.memory.fits() && !options.ignore_memory) {
    std::cerr << "trainsim: the plan does not fit in GPU memory (peak "
              << fmt::format("{:.1f}", result.memory.peakBytes() / units::kGiB) << " GiB of "
              << fmt::format("{:.1f}", result.memory.capacity_bytes / units::kGiB)
              << " GiB); --ignore-memory to exit 0 anyway\n";
    return static_cast<int>(ExitCode::kDoesNotFit);
  }
  return 0;
}

}  // namespace

void addSimulateCommand(CLI::App& app, SimulateOptions& options) {
  CLI::App* command =
      app.add_subcommand("simulate", "Simulate one training iteration (and extrapolate to the whole run)");
  command->add_option("experiment", options.experiment, "Experiment preset name or YAML file")->required();
  command->add_option("--set", options.overrides, "Override a key: KEY=VALUE (repeatable), e.g. parallelism.tp=4");
  command->add_option("--json", options.json_file, "Write the result as JSON (- = stdout)");
  command->add_option("--trace", options.trace_file, "Write a Chrome/Perfetto trace of the iteration");
  command->add_option("--html", options.html_file,
                      "Write a self-contained HTML report with charts: time and memory per stage (- = stdout)");
  command->add_option("--calibration", options.calibration_file, "Apply a calibration (trainsim calibrate)");
  command->add_flag("--symmetric", options.symmetric,
                    "Simulate one data-parallel replica (the others are identical): much faster at scale");
  command->add_flag("--every-microbatch", options.every_microbatch,
                    "Simulate every micro-batch instead of extending the pipeline's steady state linearly");
  command->add_flag("--ignore-memory", options.ignore_memory, "Exit 0 even when the plan does not fit in memory");
  command
      ->add_option("--goodput-draws", options.goodput_draws,
                   "Also draw the run with failures this many times (Monte Carlo): p50 and p90 time to train")
      ->check(CLI::Range(int64_t{0}, int64_t{10'000'000}));
  command->add_option("--threads", options.threads,
                      "Simulations of the steady state run side by side (at most 3 used; default: every hardware "
                      "thread); the result does not depend on it");
  command->add_option("--seed", options.seed, "Seed of the Monte Carlo draws and of the slow GPUs (default 1)");
  command->add_flag("--ops", options.ops,
                    "Also list the busiest pipeline stage's compute op by op (text; \"ops\" in --json)");
  addMemoryBudgetOption(*command, options.max_memory_GiB);
}

int runSimulate(const SimulateOptions& options, const CommandContext& context) {
  try {
    return run(options, context);
  } catch (const InputError& error) {
    return reportError(error.error(), context);
  }
}

}  // namespace trainsim::cli
