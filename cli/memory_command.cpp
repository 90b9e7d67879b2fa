#include "cli/memory_command.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "base/expected.h"
#include "base/units.h"
#include "calibrate/calibration_file.h"
#include "cli/experiment_json.h"
#include "cli/input_file.h"
#include "cli/json_text.h"
#include "cli/output_file.h"
#include "parallelism/experiment_loader.h"
#include "parallelism/iteration_simulation.h"
#include "parallelism/memory_model.h"

namespace trainsim::cli {
namespace {

using parallelism::Experiment;
using parallelism::MemoryReport;
using parallelism::StageMemory;

int64_t bytes(double value) { return std::llround(value); }
double gib(double value) { return value / units::kGiB; }

nlohmann::ordered_json stageJson(const StageMemory& stage) {
  return {{"stage", stage.stage},
          {"layers", stage.layers},
          {"in_flight_microbatches", stage.in_flight},
          {"parameters", bytes(stage.parameters.total())},
          {"weights", bytes(stage.weights)},
          {"gradients", bytes(stage.gradients)},
          {"optimizer", bytes(stage.optimizer)},
          {"activations", bytes(stage.activations)},
          {"activations_per_layer", bytes(stage.activation_per_layer)},
          {"other", bytes(stage.other())},
          {"communication_buffers", bytes(stage.communication_buffers)},
          {"runtime", bytes(stage.runtime)},
          {"allocator_overhead", bytes(stage.allocator_overhead)},
          {"total", bytes(stage.total())}};
}

nlohmann::ordered_json reportJson(const Experiment& experiment, const MemoryReport& report) {
  const StageMemory& peak = report.peak();
  nlohmann::ordered_json stages = nlohmann::ordered_json::array();
  for (const auto& stage : report.stages) stages.push_back(stageJson(stage));
  return {{"experiment", experiment.name}, {"gpus", experiment.plan.gpus}, {"parallelism", parallelismJson(experiment)},
          {"memory", memoryJson(report)},  {"peak_stage", peak.stage},     {"stages", stages}};
}

std::string reportText(const Experiment& experiment, const MemoryReport& report) {
  const auto& plan = experiment.plan;
  const auto& training = experiment.training;
  std::string text = fmt::format("experiment {}: {} ({:.1f}B parameters) on {} x {} ({:g} GiB each)\n", experiment.name,
                                 experiment.model.name, experiment.model.parameterCount() / 1e9, plan.gpus,
                                 experiment.cluster.gpu.key, experiment.cluster.gpu.memory_GiB);
  text += fmt::format(
      "plan: tp {}, pp {}, dp {}, cp {}, ep {}, virtual stages {}{}; {} micro-batches of {} x {} tokens, {}, zero {}, "
      "recompute {}, {}{}, {}{}\n",
      plan.tp, plan.pp, plan.dp, plan.cp, plan.ep, plan.virtual_stages,
      plan.sequence_parallel ? ", sequence parallel" : "", plan.microbatches(training), training.micro_batch_size,
      training.seq_len, parallelism::scheduleName(plan.schedule), plan.zero, parallelism::recomputeText(plan),
      topology::precisionName(training.precision),
      (training.fp8_param_gather ? std::string(" weights") : std::string()) +
          (training.grad_reduce_precision
               ? fmt::format(" ({} gradients)", topology::precisionName(*training.grad_reduce_precision))
               : std::string()),
      parallelism::optimizerName(training.optimizer), training.flash_attention ? "" : ", unfused attention");
  text += "\nper-GPU memory (GiB)\n";
  text += fmt::format("{:>5} {:>6} {:>9} {:>8} {:>9} {:>9} {:>11} {:>7} {:>8}\n", "stage", "layers", "in-flight",
                      "weights", "gradients", "optimizer", "activations", "other", "total");
  for (const auto& stage : report.stages) {
    text += fmt::format("{:>5} {:>6} {:>9} {:>8.2f} {:>9.2f} {:>9.2f} {:>11.2f} {:>7.2f} {:>8.2f}{}\n", stage.stage,
                        stage.layers, stage.in_flight, gib(stage.weights), gib(stage.gradients), gib(stage.optimizer),
                        gib(stage.activations), gib(stage.other()), gib(stage.total()),
                        stage.stage == report.peak().stage ? "  <- peak" : "");
  }
  const StageMemory& peak = report.peak();
  text += fmt::format(
      "\nin-flight: micro-batches (model chunks when interleaved) whose activations a stage holds at its peak\n"
      "activations of one layer, one micro-batch (recompute {}{}): {:.1f} MiB\n"
      "other (peak stage): communication buffers {:.2f} + CUDA/NCCL runtime {:.2f} + allocator overhead {:.2f} GiB\n",
      parallelism::recomputeText(plan),
      plan.partialRecompute(experiment.model.layers) ? "; the mean of the stage's layers" : "",
      peak.activation_per_layer / units::kMiB, gib(peak.communication_buffers), gib(peak.runtime),
      gib(peak.allocator_overhead));
  text += fmt::format("peak: stage {}, {:.2f} GiB of {:.2f} GiB ({:.0f}%): {}\n", peak.stage, gib(report.peakBytes()),
                      gib(report.capacity_bytes), 100.0 * report.peakBytes() / report.capacity_bytes,
                      report.fits() ? "fits" : "does NOT fit");
  return text;
}

int run(const MemoryOptions& options, const CommandContext& context) {
  requireWritableOutputs({&options.json_file});
  requireNotDirectory(options.experiment, "an experiment YAML file");
  std::vector<Override> overrides;
  for (const auto& text : options.overrides) overrides.push_back(parseOverride(text));
  const Experiment experiment = valueOrThrow(parallelism::loadExperiment(options.experiment, context.paths, overrides));
  // The memory and workload constants in force: the shipped defaults, the stack's, then a
  // calibration's; its other sections (times and rates) change nothing here.
  parallelism::SimulationOptions simulation = valueOrThrow(parallelism::defaultSimulationOptions(context.paths));
  parallelism::applySoftwareStack(experiment, simulation);
  std::string calibration;
  bool calibration_changes_memory = false;
  if (!options.calibration_file.empty()) {
    const calibrate::Calibration read = valueOrThrow(calibrate::loadCalibrationFile(options.calibration_file));
    calibrate::applyCalibration(read, simulation);
    calibration = calibrate::describeCalibration(read);
    calibration_changes_memory = !read.memory.empty() || !read.workload.empty();
  }
  const MemoryReport report = parallelism::estimateMemory(experiment, parallelism::memoryOptions(simulation));

  const bool json_to_stdout = options.json_file == "-";
  if (!options.json_file.empty()) {
    auto json = reportJson(experiment, report);
    if (!calibration.empty()) json["calibration"] = calibration;
    writeOutput(options.json_file, [&](std::ostream& out) { out << jsonText(json, 2) << "\n"; });
  }
  if (!json_to_stdout) {
    if (!calibration.empty()) {
      std::cout << "calibration in force: " << calibration
                << (calibration_changes_memory ? "\n"
                                               : "; it holds no memory parameter, the breakdown below is unchanged\n");
    }
    std::cout << reportText(experiment, report);
  }
  if (!report.fits()) {
    std::cerr << fmt::format(
        "trainsim: the configuration does not fit in GPU memory: stage {} needs {:.2f} GiB per GPU, the {} has "
        "{:.2f} GiB\n",
        report.peak().stage, gib(report.peakBytes()), experiment.cluster.gpu.key, gib(report.capacity_bytes));
    return static_cast<int>(ExitCode::kDoesNotFit);
  }
  return static_cast<int>(ExitCode::kSuccess);
}

}  // namespace

void addMemoryCommand(CLI::App& app, MemoryOptions& options) {
  CLI::App* command = app.add_subcommand("memory", "Per-GPU memory breakdown only (fast)");
  command->add_option("experiment", options.experiment, "Experiment preset name or YAML file")->required();
  command->add_option("--set", options.overrides, "Override an experiment key: KEY=VALUE (repeatable)");
  command->add_option("--json", options.json_file, "Write the breakdown as JSON (- = stdout)");
  command->add_option("--calibration", options.calibration_file,
                      "Apply a calibration (trainsim calibrate); none of its values affects memory yet");
}

int runMemory(const MemoryOptions& options, const CommandContext& context) {
  try {
    return run(options, context);
  } catch (const InputError& error) {
    return reportError(error.error(), context);
  }
}

}  // namespace trainsim::cli
