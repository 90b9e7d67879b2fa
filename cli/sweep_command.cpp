#include "cli/sweep_command.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "base/expected.h"
#include "base/units.h"
#include "calibrate/calibration_file.h"
#include "cli/experiment_json.h"
#include "cli/html_report.h"
#include "cli/input_file.h"
#include "cli/json_text.h"
#include "cli/memory_budget_option.h"
#include "cli/money_text.h"
#include "cli/output_file.h"
#include "cli/ranked_plans.h"
#include "goodput/goodput_report.h"
#include "sweep/pareto_front.h"
#include "sweep/plan_space.h"
#include "sweep/process_group.h"
#include "sweep/sweep.h"
#include "sweep/sweep_csv.h"
#include "sweep/sweep_target.h"
#include "sweep/trade_off_plot.h"
#include "topology/reliability_spec.h"

namespace trainsim::cli {
namespace {

using nlohmann::ordered_json;
using sweep::PlanStatus;
using sweep::SweepResult;

// 185000 -> "185,000".
std::string grouped(std::size_t value) {
  std::string digits = std::to_string(value);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(static_cast<std::size_t>(i), ",");
  return digits;
}

std::string duration(double seconds) {
  if (seconds >= 86400.0) return fmt::format("{:.1f} days", seconds / 86400.0);
  if (seconds >= 3600.0) return fmt::format("{:.1f} h", seconds / 3600.0);
  return fmt::format("{:.1f} s", seconds);
}

// The parallelism keys of `simulate --json`, plus the other swept dimensions.
ordered_json planJson(parallelism::Experiment& scratch, const sweep::PlanCandidate& candidate) {
  sweep::applyCandidate(scratch, candidate);
  ordered_json json = parallelismJson(scratch);
  json["micro_batch_size"] = candidate.micro_batch_size;
  json["sequence_parallel"] = candidate.plan.sequence_parallel;
  json["zero"] = candidate.plan.zero;
  json["recompute"] = parallelism::recomputeName(candidate.plan.recompute);
  if (candidate.plan.recompute_num_layers) json["recompute_num_layers"] = *candidate.plan.recompute_num_layers;
  if (candidate.plan.recomputesOtherModules()) {
    json["recompute_modules"] = parallelism::recomputeModuleNames(candidate.plan.recompute_modules);
  }
  return json;
}

// With --goodput: {"goodput", "time_to_train_s", "gpu_hours", "cost_usd"} with failures,
// checkpoints and restarts (the figures the plan was ranked by).
ordered_json sweepGoodputJson(const sweep::SweepTarget& target, double iteration_time_s) {
  const auto estimate =
      goodput::estimateGoodput(goodput::withIterationTime(*target.goodput, target.experiment, iteration_time_s));
  if (!estimate) return {{"goodput", 0.0}, {"time_to_train_s", nullptr}, {"gpu_hours", nullptr}, {"cost_usd", nullptr}};
  const double gpu_hours = estimate->wall_s * static_cast<double>(target.gpus) / 3600.0;
  return {{"goodput", estimate->goodput},
          {"time_to_train_s", estimate->wall_s},
          {"gpu_hours", gpu_hours},
          {"cost_usd", optionalNumber(sweep::costOfTraining(target, iteration_time_s))}};
}

// One entry of "plans": the keys of `simulate --json` for event-simulated plans.
ordered_json entryJson(const SweepResult& result, std::vector<parallelism::Experiment>& scratch, std::size_t candidate,
                       std::size_t rank, bool symmetric) {
  const sweep::PlanCandidate& plan_candidate = result.candidates[candidate];
  const sweep::PlanOutcome& outcome = result.outcomes[candidate];
  const sweep::SweepTarget& target = result.targets[plan_candidate.target];
  ordered_json json;
  if (rank > 0) json["rank"] = rank;
  json["status"] = sweep::planStatusName(outcome.status);
  if (!outcome.reason.empty()) json["reason"] = outcome.reason;
  json["cluster"] = target.cluster_label;
  json["gpus"] = plan_candidate.plan.gpus;
  json["parallelism"] = planJson(scratch[plan_candidate.target], plan_candidate);
  if (outcome.estimated_iteration_time_s) json["estimated_iteration_time_s"] = *outcome.estimated_iteration_time_s;
  if (const auto& r = outcome.result) {
    json["iteration_time_s"] = r->iteration_time_s;
    json["tokens_per_s"] = r->tokens_per_s;
    json["model_flops_per_iteration"] = r->model_flops;
    json["hardware_flops_per_iteration"] = r->hardware_flops;
    json["tflops_per_gpu"] = r->tflops_per_gpu;
    json["hardware_tflops_per_gpu"] = r->hardware_tflops_per_gpu;
    json["mfu"] = r->mfu;
    json["hfu"] = r->hfu;
    json["time_to_train_s"] = optionalNumber(r->time_to_train_s);
    json["gpu_hours"] = optionalNumber(r->gpu_hours);
    json["cost_usd"] = optionalNumber(r->cost_usd);
    if (target.goodput) json["goodput"] = sweepGoodputJson(target, r->iteration_time_s);
  }
  if (outcome.memory) json["memory"] = memoryJson(*outcome.memory);
  if (const auto& r = outcome.result) {
    const auto& b = r->breakdown;
    json["breakdown_s"] = {{"compute", b.compute},
                           {"tp_comm_exposed", b.tp_comm_exposed},
                           {"dp_comm_exposed", b.dp_comm_exposed},
                           {"pp_comm_exposed", b.pp_comm_exposed},
                           {"pipeline_bubble", b.pipeline_bubble},
                           {"host_dispatch_exposed", b.host_dispatch_exposed}};
    json["simulation"] = {{"tasks", r->tasks}, {"events", r->events}, {"mode", symmetric ? "symmetric" : "full"}};
    json["pareto"] = outcome.pareto;
  }
  return json;
}

ordered_json countsJson(const sweep::SweepCounts& counts) {
  return {{"enumerated", counts.enumerated},
          {"invalid", counts.invalid},
          {"pruned_memory", counts.pruned_memory},
          {"fitting", counts.fitting},
          {"simulated", counts.simulated},
          {"over_deadline", counts.over_deadline},
          {"over_budget", counts.over_budget},
          {"screened_out", counts.screened_out},
          {"simulation_runs", counts.simulation_runs},
          {"rounds", counts.rounds}};
}

// Header keys pretty-printed, then one plan per line: the file stays readable and is
// written as it goes rather than built whole in memory.
void writeJson(std::ostream& out, const SweepResult& result, const SweepOptions& options,
               const sweep::SweepSettings& settings,
               const std::vector<std::optional<validation::ExpectedError>>& expected) {
  const bool symmetric = settings.simulation.iteration.symmetric;
  ordered_json header;
  header["experiment"] = result.targets.front().experiment.name;
  header["objective"] = options.objective;
  header["simulation_mode"] = symmetric ? "symmetric" : "full";
  header["top"] = settings.top;
  if (!options.calibration_file.empty()) header["calibration"] = options.calibration_file;
  ordered_json targets = ordered_json::array();
  for (std::size_t t = 0; t < result.targets.size(); ++t) {
    const auto& target = result.targets[t];
    ordered_json entry = {{"cluster", target.cluster_label}, {"gpus", target.gpus}};
    if (target.resized_to_nodes > 0) entry["resized_to_nodes"] = target.resized_to_nodes;
    entry["expected_error"] = expectedErrorJson(expected[t]);
    targets.push_back(entry);
  }
  header["targets"] = targets;
  header["constraints"] = {
      {"deadline_days", optionalNumber(options.deadline_days)},
      {"budget_usd", optionalNumber(options.budget_usd)},
  };
  header["screen"] = {{"round_size", sweep::kRoundSize},
                      {"structure_margin", sweep::kStructureMargin},
                      {"margin", sweep::kScreenMargin},
                      {"simulate_all", settings.simulate_all},
                      {"max_simulations", settings.max_simulations},
                      {"hit_max_simulations", result.hit_max_simulations},
                      {"ratio_min", optionalNumber(result.screen_ratio_min)},
                      {"ratio_max", optionalNumber(result.screen_ratio_max)}};
  header["counts"] = countsJson(result.counts);
  const std::string text = jsonText(header, 2);
  out << text.substr(0, text.size() - 2) << ",\n  \"plans\": [";  // reopen the object for "plans"
  std::vector<parallelism::Experiment> scratch;
  for (const auto& target : result.targets) scratch.push_back(target.experiment);
  std::size_t rank = 0;
  bool first = true;
  for (std::size_t candidate : result.order) {
    const bool ranked = result.outcomes[candidate].status == PlanStatus::kSimulated;
    out << (first ? "\n    " : ",\n    ")
        << jsonText(entryJson(result, scratch, candidate, ranked ? ++rank : 0, symmetric));
    first = false;
  }
  out << "\n  ]\n}\n";
}

std::string summaryText(const SweepResult& result, const SweepOptions& options, const sweep::SweepSettings& settings,
                        const std::vector<std::optional<validation::ExpectedError>>& expected) {
  const auto& first = result.targets.front();
  const auto& training = first.experiment.training;
  std::string text = fmt::format("sweep {}: {}, global batch {} x {} tokens, {}{}; objective: {}\n",
                                 first.experiment.name, first.experiment.model.name, training.global_batch_size,
                                 training.seq_len, topology::precisionName(training.precision),
                                 training.flash_attention ? "" : ", unfused attention", options.objective);
  for (std::size_t t = 0; t < result.targets.size(); ++t) {
    const auto& target = result.targets[t];
    text += fmt::format(
        "  on {} x {} ({}){}\n", grouped(static_cast<std::size_t>(target.gpus)), target.experiment.cluster.gpu.key,
        target.cluster_label,
        target.resized_to_nodes > 0 ? fmt::format(", resized to {} nodes", target.resized_to_nodes) : std::string());
    text += "    " + expectedErrorText(expected[t]);
  }
  const auto& c = result.counts;
  text += fmt::format("plans: {} enumerated, {} invalid, {} do not fit in memory, {} fit\n", grouped(c.enumerated),
                      grouped(c.invalid), grouped(c.pruned_memory), grouped(c.fitting));
  text += fmt::format("       {} event-simulated ({} runs, {} mode, {} rounds), {} screened out{}{}\n",
                      grouped(c.simulated), grouped(c.simulation_runs),
                      settings.simulation.iteration.symmetric ? "symmetric" : "full", c.rounds, grouped(c.screened_out),
                      c.over_deadline > 0 ? fmt::format(", {} over the deadline", grouped(c.over_deadline)) : "",
                      c.over_budget > 0 ? fmt::format(", {} over the budget", grouped(c.over_budget)) : "");
  if (result.screen_ratio_min) {
    text += fmt::format("screen: simulated / estimated iteration time {:.2f} .. {:.2f}{}\n", *result.screen_ratio_min,
                        *result.screen_ratio_max, result.hit_max_simulations ? "; stopped at --max-simulations" : "");
  }
  return text;
}

std::string tableText(const SweepResult& result, std::size_t top) {
  const bool several = result.targets.size() > 1;
  // A schedule column where the sweep compares schedules (--vary schedule=...).
  const bool schedules =
      std::any_of(result.candidates.begin(), result.candidates.end(), [&](const sweep::PlanCandidate& candidate) {
        return candidate.plan.schedule != result.candidates.front().plan.schedule;
      });
  std::string text = fmt::format(
      "\n{:>4} {}{:>3} {:>3} {:>4} {:>3} {:>3} {:>2} {:>3} {:>3} {:>4} {:<9} {}{:>10} {:>6} {:>10} {:>14} {:>9}\n",
      "rank", several ? fmt::format("{:<18} {:>6} ", "cluster", "gpus") : "", "tp", "pp", "dp", "cp", "ep", "v", "mb",
      "sp", "zero", "recompute", schedules ? fmt::format("{:<11} ", "schedule") : "", "iter (s)", "MFU", "mem (GiB)",
      "time to train", "cost");
  std::size_t rank = 0;
  std::vector<std::string> splits;  // the uneven pipeline splits of the rows shown, in order
  for (const RankedPlan& ranked : rankedPlans(result, top)) {
    const auto& plan_candidate = *ranked.candidate;
    const auto& plan = plan_candidate.plan;
    const auto& target = *ranked.target;
    const auto& outcome = *ranked.outcome;
    const auto& r = *ranked.result;
    const auto& time_to_train = ranked.time_to_train_s;
    const auto& cost = ranked.cost_usd;
    const bool uneven = plan.first_stage_layers || plan.last_stage_layers;
    if (uneven) {
      const std::string split =
          fmt::format("pp {} = {} layers", plan.pp, plan.unevenSplitText(target.experiment.model.layers));
      if (std::find(splits.begin(), splits.end(), split) == splits.end()) splits.push_back(split);
    }
    text += fmt::format(
        "{:>4} {}{:>3} {:>3} {:>4} {:>3} {:>3} {:>2} {:>3} {:>3} {:>4} {:<9} {}{:>10.3f} {:>5.1f}% {:>10.1f} {:>14} "
        "{:>9}\n",
        ++rank, several ? fmt::format("{:<18} {:>6} ", target.cluster_label, target.gpus) : "", plan.tp,
        uneven ? fmt::format("{}*", plan.pp) : std::to_string(plan.pp), plan.dp, plan.cp, plan.ep, plan.virtual_stages,
        plan_candidate.micro_batch_size, plan.sequence_parallel ? "on" : "-", plan.zero,
        parallelism::recomputeLabel(plan),
        schedules ? fmt::format("{:<11} ", parallelism::scheduleName(plan.schedule)) : "", r.iteration_time_s,
        100.0 * r.mfu, outcome.memory->peakBytes() / units::kGiB, time_to_train ? duration(*time_to_train) : "-",
        cost ? dollarsText(*cost) : "-");
  }
  if (rank == 0) text += "(no simulated plan meets the constraints)\n";
  if (rank > 0 && result.targets.front().goodput) {
    text += "(time to train and cost with failures, checkpoints and restarts: --goodput, docs/goodput.md)\n";
  }
  for (const auto& split : splits) {
    text += fmt::format("* uneven pipeline split (first + middle stages + last): {}\n", split);
  }
  return text;
}

// "screen 12,000/180,000  6,100 plans/s  ETA 29 s" on one rewritten stderr line.
class ProgressLine {
 public:
  explicit ProgressLine(bool enabled) : enabled_(enabled), start_(std::chrono::steady_clock::now()) {}
  void update(std::string_view phase, std::size_t done, std::size_t total) {
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    if (phase != phase_) {
      phase_ = std::string(phase);
      phase_start_ = now;
      finished_before_ = finished_;
    }
    if (phase == "simulate" && done == total) finished_ += total;
    const double elapsed = std::chrono::duration<double>(now - phase_start_).count();
    std::string line;
    if (phase == "screen") {
      const double rate = elapsed > 0.0 ? static_cast<double>(done) / elapsed : 0.0;
      const double eta = rate > 0.0 ? static_cast<double>(total - done) / rate : 0.0;
      line = fmt::format("screen {}/{}  {:.0f} plans/s  ETA {:.0f} s", grouped(done), grouped(total), rate, eta);
    } else {
      const std::size_t simulated = finished_before_ + (done == total ? total : done);
      const double rate = elapsed > 0.0 ? static_cast<double>(simulated - finished_before_) / elapsed : 0.0;
      line = fmt::format("simulate {} plans  {:.1f} plans/s", grouped(std::max(simulated, finished_)), rate);
    }
    std::cerr << "\r\033[K" << line << std::flush;
  }
  void clear() {
    if (enabled_) std::cerr << "\r\033[K" << std::flush;
  }
  [[nodiscard]] double elapsedSeconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  bool enabled_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point phase_start_;
  std::string phase_;
  std::size_t finished_ = 0;
  std::size_t finished_before_ = 0;
};

std::vector<std::string> splitList(const std::vector<std::string>& values) {
  std::vector<std::string> items;
  for (const auto& value : values) {
    std::size_t start = 0;
    while (start <= value.size()) {
      const std::size_t comma = value.find(',', start);
      const std::string item = value.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (!item.empty()) items.push_back(item);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  return items;
}

// More worker threads than any machine has hardware threads only costs memory (one
// simulation's scratch each) and, at millions, fails to start them.
constexpr int64_t kMaxThreads = 1024;

int run(const SweepOptions& options, const CommandContext& context, sweep::ProcessGroup& group) {
  const bool lead = group.rank() == 0;
  requireOneStdoutOutput({{"--json", &options.json_file},
                          {"--csv", &options.csv_file},
                          {"--plot", &options.plot_file},
                          {"--html", &options.html_file}});
  // Only the lead process writes (under mpirun, the others may not see its directories).
  if (lead) requireWritableOutputs({&options.json_file, &options.csv_file, &options.plot_file, &options.html_file});
  requireNotDirectory(options.experiment, "an experiment YAML file");

  sweep::SweepSettings settings;
  const auto objective = sweep::parseObjective(options.objective);
  if (!objective) throwInputError("--objective " + options.objective, "", "expected time, cost or mfu");
  settings.objective = *objective;
  if (options.deadline_days) {
    if (!(*options.deadline_days > 0.0)) throwInputError("--deadline-days", "", "expected a positive number of days");
    settings.constraints.deadline_s = *options.deadline_days * 86400.0;
  }
  if (options.budget_usd) {
    if (!(*options.budget_usd > 0.0)) throwInputError("--budget-usd", "", "expected a positive amount");
    settings.constraints.budget_usd = *options.budget_usd;
  }
  if (options.top < 1) throwInputError("--top", "", fmt::format("expected at least 1 plan, found {}", options.top));
  settings.top = static_cast<std::size_t>(options.top);
  settings.simulate_all = options.simulate_all;
  if (options.max_simulations < 0) {
    throwInputError("--max-simulations", "",
                    fmt::format("expected a count of 0 (no cap) or more, found {}", options.max_simulations));
  }
  settings.max_simulations = static_cast<std::size_t>(options.max_simulations);
  if (options.threads && (*options.threads < 1 || *options.threads > kMaxThreads)) {
    throwInputError("--threads", "",
                    fmt::format("expected 1 to {} worker threads, found {}", kMaxThreads, *options.threads));
  }
  settings.threads = options.threads ? static_cast<int>(*options.threads)
                                     : static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  settings.simulation = valueOrThrow(parallelism::defaultSimulationOptions(context.paths));
  settings.simulation.iteration.symmetric = !options.full;
  if (!std::isfinite(options.max_memory_GiB) || options.max_memory_GiB <= 0.0) {
    throwInputError(kMemoryBudgetOption, "",
                    fmt::format("expected a positive number of GiB, found {}", options.max_memory_GiB));
  }
  settings.memory_budget_GiB = options.max_memory_GiB;

  const sweep::PlanSpace space = sweep::parsePlanSpace(options.vary, options.fix);
  sweep::SweepTargetRequest request;
  request.experiment = options.experiment;
  for (const auto& text : options.overrides) request.overrides.push_back(parseOverride(text));
  request.clusters = splitList(options.clusters);
  for (int64_t gpus : options.gpus) {
    if (gpus < 1) throwInputError("--gpus " + std::to_string(gpus), "", "expected a positive GPU count");
  }
  request.gpu_counts = options.gpus;
  std::vector<sweep::SweepTarget> targets = valueOrThrow(sweep::loadSweepTargets(request, context.paths));
  if (options.goodput) {
    for (auto& target : targets) {
      if (!target.experiment.training.tokens) {
        throwInputError("--goodput", "training.tokens",
                        "goodput applies to the whole training run; set training.tokens (e.g. --set "
                        "training.tokens=300e9)");
      }
      const auto reliability = valueOrThrow(topology::clusterReliability(target.experiment.cluster, context.paths));
      target.goodput = goodput::goodputInputs(target.experiment, reliability);
    }
  }
  // Every target shares the experiment's training section, so its software stack; a
  // calibration then wins over the stack.
  parallelism::applySoftwareStack(targets.front().experiment, settings.simulation);
  std::optional<calibrate::Calibration> calibration;
  if (!options.calibration_file.empty()) {
    calibration = valueOrThrow(calibrate::loadCalibrationFile(options.calibration_file));
    calibrate::applyCalibration(*calibration, settings.simulation);
  }

  ProgressLine progress(lead && ::isatty(STDERR_FILENO) != 0);
  const SweepResult result = sweep::runSweep(
      std::move(targets), space, settings, group,
      [&](std::string_view phase, std::size_t done, std::size_t total) { progress.update(phase, done, total); });
  progress.clear();
  if (!lead) return 0;
  std::vector<std::optional<validation::ExpectedError>> expected;
  for (const auto& target : result.targets) expected.push_back(expectedErrorFor(target.experiment, context.paths));

  if (!options.json_file.empty()) {
    writeOutput(options.json_file, [&](std::ostream& out) { writeJson(out, result, options, settings, expected); });
  }
  if (!options.csv_file.empty()) {
    writeOutput(options.csv_file, [&](std::ostream& out) { sweep::writeSweepCsv(out, result); });
  }
  sweep::PlotOptions plot;
  plot.title = fmt::format("{}: {} plans event-simulated, objective {}", result.targets.front().experiment.name,
                           grouped(result.counts.simulated), options.objective);
  plot.constraints = settings.constraints;
  if (!options.plot_file.empty()) {
    writeOutput(options.plot_file, [&](std::ostream& out) { sweep::writeTradeOffSvg(out, result, plot); });
  }
  if (!options.html_file.empty()) {
    const SweepReport report{.result = result,
                             .summary = summaryText(result, options, settings, expected),
                             .plot = plot,
                             .top = settings.top};
    writeOutput(options.html_file, [&](std::ostream& out) { writeSweepReport(out, report); });
  }
  const bool json_to_stdout =
      anyOnStdout({&options.json_file, &options.csv_file, &options.plot_file, &options.html_file});
  if (!json_to_stdout) {
    if (calibration) {
      std::cout << "calibration in force: " << calibrate::describeCalibration(*calibration) << "\n";
      for (const auto& target : result.targets) {
        const std::string mismatch = calibrate::calibrationMismatch(*calibration, target.experiment.cluster);
        if (!mismatch.empty()) std::cout << "warning: " << mismatch << "\n";
      }
    }
    std::cout << summaryText(result, options, settings, expected) << tableText(result, settings.top);
  }
  if (::isatty(STDERR_FILENO) != 0) {
    std::cerr << fmt::format("swept {} plans in {:.1f} s ({:.0f} plans/s)\n", grouped(result.counts.enumerated),
                             progress.elapsedSeconds(),
                             static_cast<double>(result.counts.enumerated) / progress.elapsedSeconds());
  }
  if (result.counts.fitting == 0) {
    std::cerr << "trainsim: no valid plan fits in GPU memory\n";
    return static_cast<int>(ExitCode::kDoesNotFit);
  }
  return static_cast<int>(ExitCode::kSuccess);
}

}  // namespace

void addSweepCommand(CLI::App& app, SweepOptions& options) {
  CLI::App* command = app.add_subcommand(
      "sweep", "Enumerate valid parallel configurations, simulate the promising ones, rank them (docs/sweep.md)");
  command->add_option("experiment", options.experiment, "Experiment preset name or YAML file")->required();
  command->add_option("--set", options.overrides, "Override an experiment key: KEY=VALUE (repeatable)");
  command->add_option("--vary", options.vary,
                      "Restrict a dimension to values: NAME=V1,V2,... (tp, pp, dp, cp, ep, virtual_stages, "
                      "micro_batch_size, recompute, zero, sequence_parallel, etp, recompute_num_layers, schedule; "
                      "repeatable)");
  command->add_option("--fix", options.fix, "Fix a dimension: NAME=VALUE (repeatable)");
  command->add_option("--clusters", options.clusters, "Cluster presets or files to compare, comma-separated")
      ->delimiter(',');
  command->add_option("--gpus", options.gpus, "GPU counts to compare, comma-separated")->delimiter(',');
  command->add_option("--objective", options.objective, "Rank by time (time-to-train), cost or mfu")
      ->capture_default_str();
  command->add_option("--deadline-days", options.deadline_days, "Drop plans whose time-to-train exceeds this");
  command->add_option("--budget-usd", options.budget_usd, "Drop plans whose training cost exceeds this");
  command->add_option("--top", options.top, "How many ranked plans to show (K)")->capture_default_str();
  command->add_flag("--simulate-all", options.simulate_all, "Event-simulate every plan that fits (no screen cut)");
  command
      ->add_option("--max-simulations", options.max_simulations, "Stop after this many event simulations (0: no cap)")
      ->capture_default_str();
  command->add_flag("--full", options.full, "Simulate every rank (default: one data-parallel replica, --symmetric)");
  command->add_option("--threads", options.threads, "Worker threads per process (default: every hardware thread)");
  command->add_option("--json", options.json_file, "Write every plan with its status as JSON (- = stdout)");
  command->add_option("--csv", options.csv_file, "Write every plan with its status as CSV (- = stdout)");
  command->add_option("--calibration", options.calibration_file, "Apply a calibration (trainsim calibrate)");
  addMemoryBudgetOption(*command, options.max_memory_GiB);
  command->add_flag("--goodput", options.goodput,
                    "Rank by time-to-train and cost with failures, checkpoints and restarts (docs/goodput.md)");
  command->add_option("--plot", options.plot_file, "Write an SVG of time-to-train against cost with the Pareto front");
  command->add_option("--html", options.html_file,
                      "Write a self-contained HTML report: summary, trade-off plot, ranked plans (- = stdout)");
}

int runSweep(const SweepOptions& options, const CommandContext& context) {
  const std::unique_ptr<sweep::ProcessGroup> group = sweep::joinProcessGroup();
  try {
    return run(options, context, *group);
  } catch (const InputError& error) {
    // Every rank meets the same input error; one message is enough.
    if (group->rank() == 0) return reportError(error.error(), context);
    return static_cast<int>(error.error().code);
  }
}

}  // namespace trainsim::cli
