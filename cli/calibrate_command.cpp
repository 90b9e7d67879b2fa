#include "cli/calibrate_command.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <variant>

#include "base/expected.h"
#include "calibrate/attention_benchmark_csv.h"
#include "calibrate/attention_fit.h"
#include "calibrate/calibration_file.h"
#include "calibrate/calibrator.h"
#include "calibrate/gpu_name_match.h"
#include "calibrate/harness_results_reader.h"
#include "calibrate/nccl_tests_log.h"
#include "cli/collective_command.h"
#include "cli/input_file.h"
#include "cli/output_file.h"
#include "parallelism/default_model_constants.h"
#include "parallelism/experiment_loader.h"
#include "perf/default_parameters.h"
#include "perf/parameter_names.h"
#include "topology/cluster.h"
#include "topology/cluster_loader.h"

namespace trainsim::cli {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

std::string ncclSizeText(double bytes) {
  if (bytes >= 1024.0 * kMiB) return fmt::format("{:g}G", bytes / (1024.0 * kMiB));
  if (bytes >= kMiB) return fmt::format("{:g}M", bytes / kMiB);
  if (bytes >= 1024.0) return fmt::format("{:g}K", bytes / 1024.0);
  return fmt::format("{:g}", bytes);
}

std::string percent(double fraction) { return fmt::format("{:+.1f}%", 100.0 * fraction); }

std::string groupText(const calibrate::MeasuredCollective& curve) {
  std::string per_node;
  bool uniform = true;
  for (int64_t count : curve.ranks_per_node) uniform = uniform && count == curve.ranks_per_node.front();
  per_node = uniform
                 ? fmt::format("{} node{} x {} GPUs", curve.nodes(), curve.nodes() == 1 ? "" : "s", curve.maxPerNode())
                 : fmt::format("{} nodes, up to {} GPUs on one", curve.nodes(), curve.maxPerNode());
  return fmt::format("{} GPUs ({}, {})", curve.groupSize(), per_node, curve.layout);
}

std::string curvesReport(const calibrate::CalibrationResult& result) {
  std::string text = "\nmeasured curves: t(S) = latency + S / algbw, robust least squares in relative error\n";
  text += fmt::format("  {:<14} {:>5} {:>6} {:>8} {:<13} {:>11} {:>8} {:>8} {:>9} {:>7} {:>7} {:>5}\n", "op", "GPUs",
                      "nodes", "per node", "layout", "latency us", "algbw", "busbw", "R2 log t", "rms", "max", "down");
  for (const auto& record : result.calibration.collectives) {
    const auto& fit = record.fit;
    text += fmt::format(
        "  {:<14} {:>5} {:>6} {:>8} {:<13} {:>11.2f} {:>8.2f} {:>8.2f} {:>9.4f} {:>6.1f}% {:>6.1f}% {:>5}\n", record.op,
        record.group_size, record.nodes, record.gpus_per_node, record.layout, fit.latency_us, fit.algbw_GBps,
        fit.busbw_GBps, fit.r_squared_log_time, 100.0 * fit.rms_relative_residual, 100.0 * fit.max_relative_residual,
        fit.downweighted);
  }
  text +=
      "  (algbw, busbw in GB/s; rms / max: relative residuals of the fit; down: points the robust weights set aside)\n";
  return text;
}

std::string communicationReport(const calibrate::CommunicationFit& fit) {
  std::string text = fmt::format(
      "\ncommunication parameters: simulator in the loop, robust Levenberg-Marquardt on log time ratio "
      "({} points, {} iterations, {} simulations)\n",
      fit.points, fit.iterations, fit.simulations);
  text += fmt::format("  {:<28} {:>12} {:>12}\n", "parameter", "default", "calibrated");
  bool any_at_bound = false;
  for (const auto& value : fit.values) {
    text += fmt::format("  {:<28} {:>12.4g} {:>12.4g}{}\n", value.name, value.before, value.after,
                        value.at_bound ? "  at the fit's bound" : "");
    any_at_bound = any_at_bound || value.at_bound;
  }
  if (any_at_bound) {
    text +=
        "  A value at the fit's bound (two decades from its default, or an efficiency at 0.001 / 0.999) is not a "
        "property of the machine: the model follows these curves only by distorting it, so predictions at other "
        "sizes and scales carry the distortion. Fit fewer parameters (--fit) or measure more sizes.\n";
  }
  text +=
      fmt::format("  RMS relative time error over the fitted points: {:.1f}% with the defaults, {:.1f}% calibrated\n",
                  100.0 * fit.rms_relative_error_before, 100.0 * fit.rms_relative_error_after);
  for (const auto& prediction : fit.curves) {
    const auto& curve = *prediction.curve;
    text += fmt::format("\n  {} on {}: {}\n", perf::collectiveOpName(curve.op), groupText(curve), curve.where);
    text += fmt::format("  {:>8} {:>12} {:>12} {:>8} {:>12} {:>8}\n", "size", "measured us", "default us", "error",
                        "calibrated", "error");
    double worst_before = 0.0;
    double worst_after = 0.0;
    for (std::size_t i = 0; i < curve.samples.size(); ++i) {
      const auto& sample = curve.samples[i];
      const double before = prediction.before_us[i] / sample.time_us - 1.0;
      const double after = prediction.after_us[i] / sample.time_us - 1.0;
      text +=
          fmt::format("  {:>8} {:>12.2f} {:>12.2f} {:>8} {:>12.2f} {:>8}\n", ncclSizeText(sample.bytes), sample.time_us,
                      prediction.before_us[i], percent(before), prediction.after_us[i], percent(after));
      if (sample.bytes >= kMiB) {
        worst_before = std::max(worst_before, std::abs(before));
        worst_after = std::max(worst_after, std::abs(after));
      }
    }
    text += fmt::format("  sizes >= 1 MiB: largest |error| {:.1f}% with the defaults, {:.1f}% calibrated\n",
                        100.0 * worst_before, 100.0 * worst_after);
  }
  return text;
}

std::string gemmReport(const calibrate::GemmFit& fit, const std::string& source) {
  std::string text = fmt::format("\nGEMM and memory: {} ({} {}, catalog peak {:.1f} TFLOP/s)\n", source, fit.gpu_key,
                                 topology::precisionName(fit.precision), fit.peak_tflops);
  if (fit.ceiling_tflops) {
    text += fmt::format("  matmul ceiling: {:.1f} TFLOP/s ({:.1f}% of peak)\n", *fit.ceiling_tflops,
                        100.0 * *fit.ceiling_tflops / fit.peak_tflops);
    text += fmt::format("  {:<14} {:>7} {:>11}\n", "shape class", "shapes", "efficiency");
    for (const auto& cls : fit.classes) {
      text += fmt::format("  {:<14} {:>7} {:>10.1f}%\n", cls.shape_class, cls.shapes, 100.0 * cls.efficiency);
    }
    text += fmt::format("  {:>7} {:>7} {:>7} {:<13} {:>11} {:>11} {:>8} {:>11} {:>8}\n", "m", "n", "k", "class",
                        "measured us", "default us", "error", "calibrated", "error");
    double sum_before = 0.0;
    double sum_after = 0.0;
    double measured_us = 0.0;
    double total_before_us = 0.0;
    double total_after_us = 0.0;
    for (const auto& check : fit.checks) {
      measured_us += check.sample.time_us;
      total_before_us += check.default_time_us;
      total_after_us += check.calibrated_time_us;
      const double before = check.default_time_us / check.sample.time_us - 1.0;
      const double after = check.calibrated_time_us / check.sample.time_us - 1.0;
      sum_before += std::abs(before);
      sum_after += std::abs(after);
      text += fmt::format("  {:>7} {:>7} {:>7} {:<13} {:>11.2f} {:>11.2f} {:>8} {:>11.2f} {:>8}\n", check.sample.m,
                          check.sample.n, check.sample.k, check.shape_class, check.sample.time_us,
                          check.default_time_us, percent(before), check.calibrated_time_us, percent(after));
    }
    const auto count = static_cast<double>(fit.checks.size());
    text += fmt::format("  mean |error| of the compute model: {:.1f}% with the defaults, {:.1f}% calibrated\n",
                        100.0 * sum_before / count, 100.0 * sum_after / count);
    // What the class efficiencies are fitted to (calibrate/gemm_fit.h): the shapes' total time.
    text += fmt::format("  total time of the measured shapes, each run once: {} with the defaults, {} calibrated\n",
                        percent(total_before_us / measured_us - 1.0), percent(total_after_us / measured_us - 1.0));
  }
  if (fit.memory_efficiency) {
    text += fmt::format("  memory efficiency: {:.3f} of the catalog bandwidth\n", *fit.memory_efficiency);
  }
  return text;
}

std::string attentionReport(const calibrate::CalibrationResult& result, const perf::ComputeParameters& defaults) {
  std::string text = fmt::format(
      "\nattention: cuDNN 16-bit rows, q_seqlen {} to {}, causal where measured; rate = total FLOPs / total time\n",
      calibrate::kAttentionFitMinSeqlen, calibrate::kAttentionFitMaxSeqlen);
  for (const auto& fit : result.attention_fits) {
    text +=
        fmt::format("  {}: forward {:.1f} TFLOP/s, backward {:.1f} TFLOP/s ({} {} row{}, q_seqlen {} to {})\n",
                    fit.source, fit.forwardTflops(), fit.backwardTflops(), fit.rows,
                    fit.causal ? "causal" : "non-causal", fit.rows == 1 ? "" : "s", fit.min_q_seqlen, fit.max_q_seqlen);
    for (const auto& note : fit.notes) text += "  note: " + note + "\n";
  }
  if (!result.attention) return text;
  const calibrate::AttentionCalibration& fit = *result.attention;
  const auto pass = [](double tflops, double overhead, bool fitted, double error) {
    return fmt::format("{:.1f} TFLOP/s, {:.2f} iterations per CTA ({}), rows within {:.1f}% on average", tflops,
                       overhead, fitted ? "fitted" : "default: fewer than 3 problems", 100.0 * error);
  };
  text += fmt::format("  {} {} tile model{} (perf/attention_tiles.h), full rate and fixed cost:\n", fit.rate.gpu_key,
                      topology::precisionName(fit.rate.precision),
                      result.attention_fits.size() > 1 ? ", the files pooled" : "");
  text += "    forward:  " +
          pass(fit.rate.forward_tflops, fit.overhead.forward, fit.forward_overhead_fitted, fit.forward_error) + "\n";
  text += "    backward: " +
          pass(fit.rate.backward_tflops, fit.overhead.backward, fit.backward_overhead_fitted, fit.backward_error) +
          "\n";
  int default_rows = 0;
  for (const auto& row : defaults.attention_rates) {
    if (row.gpu_key != fit.rate.gpu_key || row.precision != fit.rate.precision) continue;
    if (default_rows++ > 0) continue;
    const perf::AttentionTileOverhead overhead = defaults.attentionTileOverhead(row.gpu_key);
    text += fmt::format(
        "    default row: forward {:.1f}, backward {:.1f} TFLOP/s measured at {:g} pairs x {:g} queries x {:g} keys; "
        "{:g} / {:g} iterations per CTA\n",
        row.forward_tflops, row.backward_tflops, row.measured_at.sequences, row.measured_at.queries,
        row.measured_at.keys, overhead.forward, overhead.backward);
  }
  // The fit's one full-rate row replaces the default rows over sequence length, and with them
  // the measured falloff at long sequences that the tile model does not have.
  if (default_rows > 1) {
    text += fmt::format(
        "    the defaults give {} rows over sequence length (the first above); the calibration replaces them "
        "with this one full rate, which does not fall beyond 32,768 tokens as they do\n",
        default_rows);
  }
  return text;
}

std::string trainingStepReport(const calibrate::TrainingStepFit& fit) {
  std::string text = fmt::format(
      "\ntraining steps: the fraction of the kernels' rates reached inside a step, fitted to {} measured step{} "
      "({} simulations)\n",
      fit.steps.size(), fit.steps.size() == 1 ? "" : "s", fit.simulations);
  text += fmt::format("  {}: {:.4f} (every compute kernel's time / {:.4f}; communication as calibrated)\n", fit.gpu_key,
                      fit.fraction, fit.fraction);
  text += fmt::format("  {:<40} {:>11} {:>11} {:>8} {:>11} {:>8}\n", "step", "measured s", "before s", "error",
                      "after s", "error");
  for (const auto& step : fit.steps) {
    text += fmt::format("  {:<40} {:>11.4f} {:>11.4f} {:>8} {:>11.4f} {:>8}\n", step.source, step.measured_s,
                        step.before_s, percent(step.before_s / step.measured_s - 1.0), step.after_s,
                        percent(step.after_s / step.measured_s - 1.0));
  }
  text += fmt::format("  RMS relative step-time error: {:.1f}% before, {:.1f}% calibrated\n",
                      100.0 * fit.rms_relative_error_before, 100.0 * fit.rms_relative_error_after);
  return text;
}

// "EXPERIMENT=SECONDS": the experiment (file or preset) and one measured training step of it.
std::pair<std::string, double> parseTrainingStep(const std::string& text) {
  const auto equals = text.rfind('=');
  const std::string expected =
      "EXPERIMENT=SECONDS: an experiment file or preset and the measured seconds of one training step, found \"" +
      text + "\"";
  if (equals == std::string::npos || equals == 0 || equals + 1 == text.size()) {
    throwInputError("--training-step", "", expected);
  }
  const std::string number = text.substr(equals + 1);
  std::size_t used = 0;
  double seconds = 0.0;
  try {
    seconds = std::stod(number, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != number.size() || !std::isfinite(seconds) || seconds <= 0.0) {
    throwInputError("--training-step", "", "expected a positive number of seconds after '=', found \"" + number + "\"");
  }
  return {text.substr(0, equals), seconds};
}

// The fits' options: where they start (the shipped defaults) and what --fit and
// --fit-min-bytes ask of the communication fit.
calibrate::CalibrationOptions calibrationOptions(const CalibrateOptions& options, const CommandContext& context) {
  calibrate::CalibrationOptions calibration_options;
  calibration_options.communication_start = valueOrThrow(perf::defaultCommunicationParameters(context.paths));
  calibration_options.compute_start = valueOrThrow(perf::defaultComputeParameters(context.paths));
  calibration_options.workload_start = valueOrThrow(parallelism::defaultWorkloadOptions(context.paths));
  calibration_options.memory_start = valueOrThrow(parallelism::defaultMemoryOptions(context.paths));
  for (const auto& name : options.parameters) {
    if (!perf::findCommunicationParameter(name)) {
      std::string names;
      for (const auto& entry : perf::communicationParameterNames()) {
        names += (names.empty() ? "" : ", ") + entry.name;
      }
      throwInputError("--fit", "", "unknown communication parameter \"" + name + "\"; known: " + names);
    }
  }
  calibration_options.communication.parameters = options.parameters;
  if (!options.min_bytes.empty()) {
    calibration_options.communication.min_bytes = parseByteSize(options.min_bytes, "--fit-min-bytes");
  }
  return calibration_options;
}

int run(const CalibrateOptions& options, const CommandContext& context) {
  requireWritableOutputs({&options.out});
  if (options.nccl_tests_logs.empty() && options.harness_files.empty() && options.attention_files.empty() &&
      options.training_steps.empty()) {
    throwInputError("--nccl-tests", "",
                    "give at least one --nccl-tests LOG, --harness RESULTS, --attention CSV or --training-step "
                    "EXPERIMENT=SECONDS");
  }
  std::optional<perf::CollectiveOp> hint;
  if (!options.op_hint.empty()) {
    hint = perf::parseCollectiveOp(options.op_hint);
    if (!hint) {
      throwInputError("--op", "",
                      "expected all_reduce, all_gather, reduce_scatter, all_to_all, broadcast or send_recv, found \"" +
                          options.op_hint + "\"");
    }
  }
  const calibrate::CalibrationOptions calibration_options = calibrationOptions(options, context);

  std::vector<Override> overrides;
  for (const auto& text : options.overrides) overrides.push_back(parseOverride(text));
  requireNotDirectory(options.cluster, "a cluster YAML file");
  const auto spec = valueOrThrow(topology::loadClusterFile(options.cluster, context.paths, overrides));
  const auto cluster = valueOrThrow(topology::Cluster::build(spec));

  calibrate::CalibrationInputs inputs;
  std::vector<std::string> notes;
  auto record_source = [&](const std::string& path, const char* kind, std::size_t entries) {
    inputs.sources.push_back({std::filesystem::path(path).filename().string(), kind, static_cast<int64_t>(entries)});
  };
  auto check_gpu = [&](const std::string& where, const std::string& name) {
    if (!name.empty() && !calibrate::gpuNameMatches(name, spec.gpu)) {
      notes.push_back(fmt::format("{}: measured on \"{}\", which does not look like the cluster's GPU {} ({})", where,
                                  name, spec.gpu.key, spec.gpu.name));
    }
  };
  for (const auto& path : options.nccl_tests_logs) {
    auto log = valueOrThrow(calibrate::loadNcclTestsLog(path, hint));
    for (auto& note : log.notes) notes.push_back(std::move(note));
    record_source(path, "nccl-tests", log.runs.size());
    for (auto& run : log.runs) {
      check_gpu(run.where, run.gpu_name);
      inputs.collectives.push_back(std::move(run));
    }
  }
  for (const auto& path : options.harness_files) {
    auto results = valueOrThrow(calibrate::loadHarnessResults(path));
    if (auto* nccl = std::get_if<calibrate::NcclResults>(&results)) {
      check_gpu(path, nccl->gpu_name);
      record_source(path, "trainsim-calib-nccl", nccl->collectives.size());
      for (auto& curve : nccl->collectives) inputs.collectives.push_back(std::move(curve));
    } else {
      auto& gemm = std::get<calibrate::GemmResults>(results);
      check_gpu(path, gemm.gpu_name);
      record_source(path, "trainsim-calib-gemm", gemm.gemm.size());
      inputs.gemm.push_back(std::move(gemm));
    }
  }
  for (const auto& path : options.attention_files) {
    auto benchmark = valueOrThrow(calibrate::loadAttentionBenchmarkCsv(path));
    for (const auto& name : benchmark.gpu_names) check_gpu(path, name);
    record_source(path, "cudnn-sdpa-benchmark", benchmark.rows.size());
    inputs.attention.push_back(std::move(benchmark));
  }

  // The measured steps ran on the calibrated cluster: its --set overrides reach their
  // experiments' cluster too (as cluster.KEY=VALUE).
  std::vector<Override> step_overrides;
  for (const auto& text : options.overrides) step_overrides.push_back(parseOverride("cluster." + text));
  for (const auto& text : options.training_steps) {
    const auto [experiment_path, seconds] = parseTrainingStep(text);
    auto experiment = valueOrThrow(parallelism::loadExperiment(experiment_path, context.paths, step_overrides));
    if (experiment.cluster.name != spec.name) {
      notes.push_back(fmt::format("{}: its experiment runs on cluster {}, calibrated here as {}", text,
                                  experiment.cluster.name, spec.name));
    }
    record_source(experiment_path, "training-step", 1);
    inputs.training_steps.push_back({std::move(experiment), seconds, text});
  }

  const auto result = valueOrThrow(calibrate::runCalibration(cluster, inputs, calibration_options));
  std::string text = fmt::format(
      "trainsim calibrate: cluster {} ({}), {} measured collective curve{}, {} GEMM file{}, {} attention file{}, {} "
      "training step{}\n",
      spec.name, spec.gpu.key, inputs.collectives.size(), inputs.collectives.size() == 1 ? "" : "s", inputs.gemm.size(),
      inputs.gemm.size() == 1 ? "" : "s", inputs.attention.size(), inputs.attention.size() == 1 ? "" : "s",
      inputs.training_steps.size(), inputs.training_steps.size() == 1 ? "" : "s");
  for (const auto& note : notes) text += "note: " + note + "\n";
  if (result.communication_fit) {
    text += curvesReport(result);
    text += communicationReport(*result.communication_fit);
  }
  for (std::size_t i = 0; i < result.gemm_fits.size(); ++i) {
    text += gemmReport(result.gemm_fits[i], inputs.gemm[i].source);
    for (const auto& warning : result.gemm_fits[i].warnings) text += "  warning: " + warning + "\n";
  }
  if (!result.attention_fits.empty()) text += attentionReport(result, calibration_options.compute_start);
  if (result.training_step_fit) text += trainingStepReport(*result.training_step_fit);
  // New kernel rates without a measured step: the in-step fraction in force was fitted over
  // the shipped rates (on the H100 suite rows, harness rates alone moved the dense rows from
  // 4.3% to 5.0% mean error: docs/calibration.md, "GEMM harness").
  if ((!result.gemm_fits.empty() || !result.attention_fits.empty()) && !result.training_step_fit) {
    text += fmt::format(
        "note: the kernel rates are now measured ones, but the fraction of them a training step reaches ({:.3f} for "
        "{}) was fitted over the shipped rates; add --training-step EXPERIMENT=SECONDS (one measured step on this "
        "cluster) to fit it over these\n",
        calibration_options.compute_start.trainingRateFraction(spec.gpu.key), spec.gpu.key);
  }
  writeOutput(options.out, [&](std::ostream& out) { out << calibrate::calibrationYaml(result.calibration); });
  if (options.out != "-") {
    text += fmt::format("\nwrote {}; apply it with --calibration {}\n", options.out, options.out);
    std::cout << text;
  }
  return 0;
}

}  // namespace

void addCalibrateCommand(CLI::App& app, CalibrateOptions& options) {
  CLI::App* command = app.add_subcommand("calibrate", "Fit communication/compute parameters from measurements");
  command->add_option("--nccl-tests", options.nccl_tests_logs, "nccl-tests output (plain or under mpirun), repeatable");
  command->add_option("--harness", options.harness_files, "trainsim-calib-nccl / -gemm results file, repeatable");
  command->add_option("--attention", options.attention_files,
                      "cudnn-frontend sdpa_benchmark_training CSV (attention rates), repeatable");
  command->add_option("--training-step", options.training_steps,
                      "EXPERIMENT=SECONDS: a measured training step of an experiment on this cluster, repeatable");
  command->add_option("--cluster", options.cluster, "The measured cluster: preset name or YAML file")->required();
  command->add_option("--set", options.overrides, "Override a cluster key: KEY=VALUE (repeatable)");
  command->add_option("--out", options.out, "The calibration file to write (- = stdout, then nothing else)")
      ->required();
  command->add_option("--op", options.op_hint, "The operation of nccl-tests runs whose log does not name it");
  command
      ->add_option("--fit", options.parameters,
                   "Communication parameters to fit (default: those the measurements constrain)")
      ->delimiter(',');
  command->add_option("--fit-min-bytes", options.min_bytes, "Fit only sizes of at least this (e.g. 1M)");
}

int runCalibrate(const CalibrateOptions& options, const CommandContext& context) {
  try {
    return run(options, context);
  } catch (const InputError& error) {
    return reportError(error.error(), context);
  }
}

}  // namespace trainsim::cli
