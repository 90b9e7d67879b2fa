#include "cli/validate_command.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "base/expected.h"
#include "calibrate/calibration_file.h"
#include "cli/json_text.h"
#include "cli/output_file.h"
#include "perf/default_parameters.h"
#include "validation/collective_accuracy.h"
#include "validation/collective_transfer.h"
#include "validation/gemm_accuracy.h"
#include "validation/training_rate_fit.h"
#include "validation/training_suite.h"
#include "validation/unpublished_plan_choice.h"

namespace trainsim::cli {
namespace {

std::string binaryBytesText(double bytes) {
  if (bytes >= 1024.0 * 1024.0 * 1024.0) return fmt::format("{:.3g} GiB", bytes / (1024.0 * 1024.0 * 1024.0));
  if (bytes >= 1024.0 * 1024.0) return fmt::format("{:.3g} MiB", bytes / (1024.0 * 1024.0));
  if (bytes >= 1024.0) return fmt::format("{:.3g} KiB", bytes / 1024.0);
  return fmt::format("{:.0f} B", bytes);
}

std::string signedPercent(double fraction) { return fmt::format("{:+.1f}%", 100.0 * fraction); }

// A suite's text table and JSON.
struct SuiteOutput {
  std::string text;
  nlohmann::ordered_json json;
  int exit_code = 0;
};

// The calibration of --calibration, when given.
struct CalibrationInForce {
  std::optional<calibrate::Calibration> calibration;
  std::string description;
};

// How a curve's run was set up, for its table's title line.
std::string curveSetup(const validation::MeasuredCurve& curve) {
  std::string setup = fmt::format("{}, {} GPUs", perf::collectiveOpName(curve.op), curve.gpus);
  if (curve.gpus_per_node > 0) setup += fmt::format(" ({} per node)", curve.gpus_per_node);
  setup += ", cluster " + curve.cluster;
  for (const Override& setting : curve.cluster_settings)
    setup += fmt::format(" {}={}", setting.key_path, setting.value);
  if (curve.algorithm) setup += fmt::format(", algorithm {} forced", perf::algorithmName(*curve.algorithm));
  return setup;
}

// Per system, the accuracy goals' figures: bus bandwidth MAPE and bias from 1 MiB up.
std::string systemsTable(const std::vector<validation::SystemAccuracy>& systems) {
  std::string text = fmt::format(
      "\nPer system (accuracy targets; bus bandwidth, sizes >= 1 MiB)\n  {:<52} {:>6} {:>6} {:>7} {:>7}  {}\n",
      "system", "curves", "points", "MAPE", "bias", "1 MiB time error");
  for (const auto& system : systems) {
    std::string latency;
    for (double error : system.one_mib_latency_errors) latency += (latency.empty() ? "" : ", ") + signedPercent(error);
    text += fmt::format("  {:<52} {:>6} {:>6} {:>6.1f}% {:>7}  {}\n", system.system, system.curves.size(),
                        system.scored_points, 100.0 * system.mape, signedPercent(system.bias),
                        latency.empty() ? "-" : latency);
  }
  return text;
}

SuiteOutput collectiveSuite(const CommandContext& context, const CalibrationInForce& in_force) {
  perf::CommunicationParameters parameters = valueOrThrow(perf::defaultCommunicationParameters(context.paths));
  if (in_force.calibration) calibrate::applyCalibration(*in_force.calibration, parameters);
  const auto results = valueOrThrow(validation::compareCollectiveCurves(context.paths, parameters));
  const auto systems = validation::summarizeSystems(results);
  std::string text = "collectives: predicted vs published nccl-tests / rccl-tests bus bandwidth\n";
  nlohmann::ordered_json json = nlohmann::ordered_json::array();
  for (const auto& accuracy : results) {
    const auto& curve = accuracy.curve;
    text += fmt::format("\n{} ({}){}\n  source: {}\n", curve.title, curveSetup(curve),
                        curve.accuracy_target ? "" : " [reference only]", curve.source);
    if (!curve.notes.empty()) text += "  notes: " + curve.notes + "\n";
    text += fmt::format("  {:>10} {:>12} {:>12} {:>8} {:>11} {:>11} {:>7} {:>7}\n", "size", "busbw meas", "busbw pred",
                        "error", "time meas", "time pred", "algo", "proto");
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const auto& point : accuracy.points) {
      text += fmt::format("  {:>10} {:>12.2f} {:>12.2f} {:>7.1f}% {:>9.1f}us {:>9.1f}us {:>7} {:>7}\n",
                          binaryBytesText(static_cast<double>(point.bytes)), point.measured_busbw_GBps,
                          point.predicted_busbw_GBps, 100.0 * point.error, point.measured_time_us,
                          point.predicted_time_us, point.algorithm, point.protocol);
      rows.push_back({{"bytes", point.bytes},
                      {"measured_busbw_GBps", point.measured_busbw_GBps},
                      {"predicted_busbw_GBps", point.predicted_busbw_GBps},
                      {"measured_time_us", point.measured_time_us},
                      {"predicted_time_us", point.predicted_time_us},
                      {"error", point.error},
                      {"algorithm", point.algorithm},
                      {"protocol", point.protocol}});
    }
    const double half_ratio = accuracy.predicted_half_peak_bytes / accuracy.measured_half_peak_bytes;
    const double latency_error = accuracy.predicted_small_latency_us / accuracy.measured_small_latency_us - 1.0;
    if (accuracy.scored_points > 0) {
      text +=
          fmt::format("  sizes >= 1 MiB: bus bandwidth MAPE {:.1f}%, bias {} over {} point{}\n", 100.0 * accuracy.mape,
                      signedPercent(accuracy.bias), accuracy.scored_points, accuracy.scored_points == 1 ? "" : "s");
    }
    text += fmt::format("  large messages (>= 256 MiB): mean bus bandwidth error {:+.1f}%\n",
                        100.0 * accuracy.large_message_error);
    if (accuracy.points.size() > 2) {
      text += fmt::format("  half of peak reached at {} measured, {} predicted (ratio {:.2f})\n",
                          binaryBytesText(accuracy.measured_half_peak_bytes),
                          binaryBytesText(accuracy.predicted_half_peak_bytes), half_ratio);
    }
    text += fmt::format("  {} latency: {:.1f} us measured, {:.1f} us predicted ({:+.1f}%)\n",
                        binaryBytesText(static_cast<double>(accuracy.small_message_bytes)),
                        accuracy.measured_small_latency_us, accuracy.predicted_small_latency_us, 100.0 * latency_error);
    nlohmann::ordered_json entry = {{"id", curve.id},
                                    {"title", curve.title},
                                    {"system", curve.system},
                                    {"op", perf::collectiveOpName(curve.op)},
                                    {"source", curve.source},
                                    {"cluster", curve.cluster},
                                    {"gpus", curve.gpus},
                                    {"accuracy_target", curve.accuracy_target},
                                    {"mape", accuracy.mape},
                                    {"bias", accuracy.bias},
                                    {"scored_points", accuracy.scored_points},
                                    {"large_message_error", accuracy.large_message_error},
                                    {"half_peak_ratio", half_ratio},
                                    {"small_message_latency_error", latency_error}};
    for (const auto& system : systems) {
      if (system.system != curve.system || !curve.accuracy_target) continue;
      entry["system_mape"] = system.mape;
      entry["system_bias"] = system.bias;
    }
    entry["points"] = rows;
    json.push_back(std::move(entry));
  }
  text += systemsTable(systems);
  return {text, json, 0};
}

// One set of curves' bus bandwidth error, with the shipped parameters and calibrated.
std::string curveSetText(std::string_view what, const validation::CurveSetError& preset,
                         const std::optional<validation::CurveSetError>& calibrated) {
  std::string text = fmt::format("  {} ({} points): MAPE {:.1f}% (bias {}) with the preset", what, preset.points,
                                 100.0 * preset.mape, signedPercent(preset.bias));
  if (calibrated) {
    text += fmt::format(", {:.1f}% (bias {}) calibrated", 100.0 * calibrated->mape, signedPercent(calibrated->bias));
  }
  return text + "\n";
}

nlohmann::ordered_json curveSetJson(const validation::CurveSetError& error) {
  return {{"points", error.points}, {"mape", error.mape}, {"bias", error.bias}};
}

// `validate collectives --scale-transfer`: per system, the communication parameters fitted
// to its runs on at most two nodes; those runs with the shipped and the fitted parameters
// (in sample) and its larger runs with both (out of sample).
SuiteOutput scaleTransfer(const CommandContext& context, const CalibrationInForce& in_force) {
  perf::CommunicationParameters parameters = valueOrThrow(perf::defaultCommunicationParameters(context.paths));
  if (in_force.calibration) calibrate::applyCalibration(*in_force.calibration, parameters);
  const auto transfers = valueOrThrow(validation::collectiveScaleTransfer(context.paths, parameters));
  std::string text = fmt::format(
      "collectives: each system calibrated on its runs on at most {} nodes (as `trainsim calibrate` fits them), "
      "those runs scored in sample and its larger runs predicted (bus bandwidth, sizes >= 1 MiB)\n",
      validation::kTransferFitMaxNodes);
  nlohmann::ordered_json json = nlohmann::ordered_json::array();
  int calibrated_systems = 0;
  int within_goal = 0;
  for (const auto& transfer : transfers) {
    const bool calibrated = transfer.not_calibrated.empty();
    const bool held_out = !transfer.held_out_curves.empty();
    text += fmt::format(
        "\n{}\n  fitted on: {}\n  predicted: {}\n", transfer.system, fmt::join(transfer.fitted_curves, ", "),
        held_out ? fmt::format("{}", fmt::join(transfer.held_out_curves, ", ")) : "none (no larger runs)");
    nlohmann::ordered_json values = nlohmann::ordered_json::array();
    for (const auto& value : transfer.values) {
      text += fmt::format("  {:<40} {:>10.4g} -> {:.4g}{}\n", value.name, value.before, value.after,
                          value.at_bound ? "  at the fit's bound" : "");
      values.push_back(
          {{"name", value.name}, {"before", value.before}, {"after", value.after}, {"at_bound", value.at_bound}});
    }
    if (!calibrated) text += fmt::format("  not calibrated: {}\n", transfer.not_calibrated);
    const auto in_sample = calibrated ? std::optional(transfer.fitted_calibrated) : std::nullopt;
    const auto out_of_sample = calibrated ? std::optional(transfer.held_out_calibrated) : std::nullopt;
    text += curveSetText("fitted runs, in sample", transfer.fitted_preset, in_sample);
    if (held_out) text += curveSetText("larger runs, out of sample", transfer.held_out_preset, out_of_sample);
    if (calibrated) {
      ++calibrated_systems;
      if (transfer.fitted_calibrated.mape <= validation::kCalibratedMapeGoal) ++within_goal;
    }
    nlohmann::ordered_json entry = {{"system", transfer.system},
                                    {"fitted_curves", transfer.fitted_curves},
                                    {"held_out_curves", transfer.held_out_curves},
                                    {"calibrated", calibrated}};
    if (!calibrated) entry["not_calibrated"] = transfer.not_calibrated;
    entry["fitted_preset"] = curveSetJson(transfer.fitted_preset);
    if (calibrated) entry["fitted_calibrated"] = curveSetJson(transfer.fitted_calibrated);
    // The larger runs' figures: null where the system has none or no calibration was made.
    auto number_or_null = [](bool present, double value) {
      return present ? nlohmann::ordered_json(value) : nlohmann::ordered_json(nullptr);
    };
    entry["held_out_points"] = transfer.held_out_preset.points;
    entry["preset_mape"] = number_or_null(held_out, transfer.held_out_preset.mape);
    entry["preset_bias"] = number_or_null(held_out, transfer.held_out_preset.bias);
    entry["calibrated_mape"] = number_or_null(held_out && calibrated, transfer.held_out_calibrated.mape);
    entry["calibrated_bias"] = number_or_null(held_out && calibrated, transfer.held_out_calibrated.bias);
    entry["fitted"] = values;
    json.push_back(std::move(entry));
  }
  text += fmt::format(
      "\n{} of {} calibrated systems within {:.0f}% on the runs they were calibrated on ({} of {} systems could be "
      "calibrated)\n",
      within_goal, calibrated_systems, 100.0 * validation::kCalibratedMapeGoal, calibrated_systems, transfers.size());
  return {text, json, 0};
}

// A set of GEMM rows' errors as text ("MAPE 7.6%, bias +3.2%, throughput -5.5%") and JSON.
std::string gemmErrorsText(const validation::GemmErrors& errors) {
  return fmt::format("MAPE {:.1f}%, bias {:+.1f}%, throughput {:+.1f}%", 100.0 * errors.mape, 100.0 * errors.bias,
                     100.0 * errors.throughput_error);
}

nlohmann::ordered_json gemmErrorsJson(const validation::GemmErrors& errors) {
  return {{"mape", errors.mape}, {"bias", errors.bias}, {"throughput_error", errors.throughput_error}};
}

// The GEMM suite's text table and JSON. A harness source (hundreds of measured shapes) prints
// its summary, not its rows; its JSON holds every row.
SuiteOutput gemmSuite(const CommandContext& context, const CalibrationInForce& in_force) {
  perf::ComputeParameters parameters = valueOrThrow(perf::defaultComputeParameters(context.paths));
  if (in_force.calibration) calibrate::applyCalibration(*in_force.calibration, parameters);
  const auto results = valueOrThrow(validation::compareGemms(context.paths, parameters));
  std::string text =
      "gemm: predicted vs published GEMM throughput (TFLOP/s = 2 m n k / time; the model's tile and wave plan on "
      "the whole GPU; error = predicted / published - 1, + = the model too fast)\n";
  nlohmann::ordered_json json = nlohmann::ordered_json::array();
  for (const auto& accuracy : results) {
    const auto& source = accuracy.source;
    const bool harness = !source.harness_results.empty();
    text += fmt::format("\n{}{}\n  source: {}\n", source.title,
                        source.independent ? "" : " [the model's ceilings come from here]", source.source);
    if (!harness) {
      text += fmt::format("  {:<15} {:<5} {:>22} {:>10} {:>10} {:>8}  {}\n", "gpu", "prec", "m x n x k", "published",
                          "predicted", "error", "plan");
    }
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const auto& row : accuracy.rows) {
      const auto& measured = row.measured;
      const std::string precision(topology::precisionName(measured.precision));
      if (!harness) {
        text += fmt::format("  {:<15} {:<5} {:>22} {:>10.1f} {:>10.1f} {:>7.1f}%  tile {}x{}, {} wave{}\n",
                            measured.gpu, precision, fmt::format("{}x{}x{}", measured.m, measured.n, measured.k),
                            measured.tflops, row.predicted_tflops, 100.0 * row.error, row.tile_m, row.tile_n, row.waves,
                            row.waves == 1 ? "" : "s");
      }
      nlohmann::ordered_json json_row = {{"gpu", measured.gpu},
                                         {"precision", precision},
                                         {"m", measured.m},
                                         {"n", measured.n},
                                         {"k", measured.k},
                                         {"published_tflops", measured.tflops},
                                         {"predicted_tflops", row.predicted_tflops},
                                         {"error", row.error}};
      if (harness) {
        json_row["batch"] = measured.batch;
        json_row["label"] = measured.label;
        if (accuracy.held_out) json_row["held_out_tflops"] = row.held_out_tflops;
        json_row["in_sample_tflops"] = row.in_sample_tflops;
      }
      rows.push_back(std::move(json_row));
    }
    nlohmann::ordered_json json_source = {{"id", source.id},
                                          {"title", source.title},
                                          {"source", source.source},
                                          {"independent", source.independent},
                                          {"mape", accuracy.mape},
                                          {"bias", accuracy.errors.bias},
                                          {"throughput_error", accuracy.errors.throughput_error}};
    if (harness) {
      text += fmt::format("  {} measured shapes ({} at {}) of {} workloads\n", accuracy.rows.size(),
                          accuracy.rows.front().measured.gpu,
                          topology::precisionName(accuracy.rows.front().measured.precision), accuracy.labels);
      text += fmt::format("  {:<44} {}\n", "the model's parameters:", gemmErrorsText(accuracy.errors));
      if (accuracy.held_out) {
        text += fmt::format("  {:<44} {}\n",
                            "calibrated on the other workloads' shapes:", gemmErrorsText(*accuracy.held_out));
        json_source["held_out"] = gemmErrorsJson(*accuracy.held_out);
      }
      if (accuracy.in_sample) {
        text += fmt::format("  {:<44} {}\n", "calibrated on all (in sample):", gemmErrorsText(*accuracy.in_sample));
        json_source["in_sample"] = gemmErrorsJson(*accuracy.in_sample);
      }
      json_source["harness_results"] = source.harness_results;
      json_source["workloads"] = accuracy.labels;
    } else {
      text += fmt::format("  MAPE {:.1f}% over {} rows (bias {:+.1f}%)\n", 100.0 * accuracy.mape, accuracy.rows.size(),
                          100.0 * accuracy.errors.bias);
    }
    json_source["rows"] = std::move(rows);
    json.push_back(std::move(json_source));
  }
  return {text, json, 0};
}

std::string metricValue(validation::TrainingMetric metric, double value) {
  switch (metric) {
    case validation::TrainingMetric::kIterationTime: return fmt::format("{:.2f} s", value);
    case validation::TrainingMetric::kTokensPerSecondPerGpu: return fmt::format("{:.0f}", value);
    case validation::TrainingMetric::kLayerTime: return fmt::format("{:.1f} ms", value);
    default: return fmt::format("{:.1f}", value);
  }
}

// The training suite's rows (--all, --row) and the parameters it starts from (--calibration).
validation::TrainingSuiteOptions trainingSuiteOptions(const ValidateOptions& options, const CommandContext& context,
                                                      const CalibrationInForce& in_force) {
  validation::TrainingSuiteOptions suite_options;
  suite_options.simulation = valueOrThrow(parallelism::defaultSimulationOptions(context.paths));
  if (in_force.calibration) {
    suite_options.over_stack = [calibration = *in_force.calibration](parallelism::SimulationOptions& simulation) {
      calibrate::applyCalibration(calibration, simulation);
    };
  }
  suite_options.include_slow = options.include_slow;
  suite_options.only = options.rows;
  return suite_options;
}

// A source's rows that publish their peak memory per GPU: published against the memory
// model's peak over the stages, and the error over them ("" when none do).
std::string memorySummary(const validation::TrainingSuiteResult& suite, const validation::SourceAccuracy& accuracy) {
  if (accuracy.memory_compared == 0) return "";
  std::string text = fmt::format("  peak memory per GPU, GiB ({})\n", accuracy.source.memory_definition);
  for (const auto& comparison : suite.rows) {
    if (comparison.row.source != accuracy.source.id || !comparison.predicted_memory_GiB) continue;
    text += fmt::format("  {:<22} published {:>6.1f}   predicted {:>6.1f}   {:>8}\n", comparison.row.id,
                        *comparison.row.published_memory_GiB, *comparison.predicted_memory_GiB,
                        signedPercent(comparison.memory_error));
  }
  text += fmt::format("  memory MAPE {:.1f}%, bias {:+.1f}%, over {} row{}\n", 100.0 * accuracy.memory_mape,
                      100.0 * accuracy.memory_bias, accuracy.memory_compared, accuracy.memory_compared == 1 ? "" : "s");
  return text;
}

// A compared row's prediction, breakdown and plan choice in its JSON record.
void addComparedRow(const validation::TrainingRowComparison& comparison, validation::TrainingMetric metric,
                    nlohmann::ordered_json& row_json) {
  const auto& row = comparison.row;
  const auto& result = comparison.result;
  const auto& b = result.breakdown;
  row_json["status"] = "compared";
  row_json["predicted"] = comparison.predicted;
  row_json["error"] = comparison.error;
  row_json["step_time_error"] = validation::stepTimeError(metric, comparison.error);
  row_json["iteration_time_s"] = result.iteration_time_s;
  row_json["tflops_per_gpu"] = result.tflops_per_gpu;
  row_json["hardware_tflops_per_gpu"] = result.hardware_tflops_per_gpu;
  row_json["mfu"] = result.mfu;
  row_json["fits"] = result.memory.fits();
  row_json["breakdown_s"] = {{"compute", b.compute},
                             {"tp_comm_exposed", b.tp_comm_exposed},
                             {"dp_comm_exposed", b.dp_comm_exposed},
                             {"pp_comm_exposed", b.pp_comm_exposed},
                             {"pipeline_bubble", b.pipeline_bubble},
                             {"host_dispatch_exposed", b.host_dispatch_exposed}};
  row_json["wall_s"] = comparison.wall_s;
  if (comparison.predicted_memory_GiB) {
    row_json["published_memory_GiB"] = *row.published_memory_GiB;
    row_json["predicted_memory_GiB"] = *comparison.predicted_memory_GiB;
    row_json["memory_error"] = comparison.memory_error;
  }
  if (comparison.plan_chosen) {
    nlohmann::ordered_json fitting = nlohmann::ordered_json::array();
    for (const auto& setting : comparison.plan_fitting) {
      fitting.push_back({{"micro_batch_size", setting.micro_batch_size}, {"virtual_stages", setting.virtual_stages}});
    }
    row_json["plan_candidates_fitting"] = std::move(fitting);
  }
}

// A source's accuracy in its JSON record.
nlohmann::ordered_json sourceJson(const validation::SourceAccuracy& accuracy) {
  const auto& source = accuracy.source;
  nlohmann::ordered_json source_json = {{"id", source.id},
                                        {"title", source.title},
                                        {"citation", source.citation},
                                        {"metric", validation::trainingMetricName(source.metric)},
                                        {"metric_definition", source.metric_definition},
                                        {"compared", accuracy.compared},
                                        {"skipped_slow", accuracy.skipped},
                                        {"mape", accuracy.mape},
                                        {"bias", accuracy.bias}};
  if (!source.memory_definition.empty()) {
    source_json["memory_definition"] = source.memory_definition;
    source_json["memory_compared"] = accuracy.memory_compared;
    source_json["memory_mape"] = accuracy.memory_mape;
    source_json["memory_bias"] = accuracy.memory_bias;
  }
  return source_json;
}

SuiteOutput trainingSuite(const ValidateOptions& options, const CommandContext& context,
                          const CalibrationInForce& in_force) {
  const validation::TrainingSuiteOptions suite_options = trainingSuiteOptions(options, context, in_force);
  const auto suite = valueOrThrow(validation::runTrainingSuite(context.paths, suite_options));

  std::string text =
      "training: predicted vs published end-to-end throughput (like with like: hardware TFLOP/s, "
      "model TFLOP/s, iteration time, tokens/s or time per layer, as each source publishes)\n";
  nlohmann::ordered_json sources_json = nlohmann::ordered_json::array();
  nlohmann::ordered_json rows_json = nlohmann::ordered_json::array();
  std::vector<std::string> slow_ids;
  for (const auto& accuracy : suite.sources) {
    const auto& source = accuracy.source;
    const auto unit = validation::trainingMetricUnit(source.metric);
    text += fmt::format("\n{}: {} ({})\n  source: {}\n", source.title, validation::trainingMetricName(source.metric),
                        source.metric_definition, source.citation);
    text += fmt::format("  {:<22} {:<12} {:>5} {:>10} {:>11} {:>11} {:>8} {:>6} {:>5} {:>8}\n", "row", "model", "gpus",
                        "tp/pp/dp/v", fmt::format("published"), fmt::format("predicted"), "error", "MFU", "fits",
                        "sim time");
    for (const auto& comparison : suite.rows) {
      const auto& row = comparison.row;
      if (row.source != source.id) continue;
      // The plan as the row's experiment gives it (zeros where the experiment failed to load).
      const parallelism::ParallelPlan shown =
          comparison.experiment ? comparison.experiment->plan : parallelism::ParallelPlan{};
      const int64_t chunks = comparison.plan.virtual_stages;
      const std::string plan = fmt::format("{}/{}/{}/{}", shown.tp, shown.pp, shown.dp, chunks);
      nlohmann::ordered_json row_json = {{"id", row.id},
                                         {"source", row.source},
                                         {"model", row.model},
                                         {"gpus", shown.gpus},
                                         {"tp", shown.tp},
                                         {"pp", shown.pp},
                                         {"dp", shown.dp},
                                         {"virtual_stages", chunks},
                                         {"recompute", std::string(parallelism::recomputeName(shown.recompute))},
                                         {"micro_batch_size", comparison.plan.micro_batch_size},
                                         {"micro_batch_published", row.micro_batch_published},
                                         {"virtual_stages_published", row.virtual_stages_published},
                                         {"metric", validation::trainingMetricName(source.metric)},
                                         {"published", row.published}};
      if (shown.recompute_num_layers) row_json["recompute_num_layers"] = *shown.recompute_num_layers;
      if (comparison.experiment) {
        // What the expected-error table groups rows by (scripts/validation/expected_error_from_fit.py).
        row_json["gpu"] = comparison.gpu_key;
        row_json["moe"] = comparison.experiment->model.isMoe();
      }
      if (comparison.ran) {
        const auto& result = comparison.result;
        text += fmt::format("  {:<22} {:<12} {:>5} {:>10} {:>11} {:>11} {:>8} {:>5.1f}% {:>5} {:>7.2f}s\n", row.id,
                            row.model, shown.gpus, plan, metricValue(source.metric, row.published),
                            metricValue(source.metric, comparison.predicted), signedPercent(comparison.error),
                            100.0 * result.mfu, result.memory.fits() ? "yes" : "NO", comparison.wall_s);
        addComparedRow(comparison, source.metric, row_json);
      } else if (!comparison.failure.empty()) {
        text += fmt::format("  {:<22} {:<12} {:>5} {:>10} {:>11}   FAILED: {}\n", row.id, row.model, shown.gpus, plan,
                            metricValue(source.metric, row.published), comparison.failure);
        row_json["status"] = "failed";
        row_json["failure"] = comparison.failure;
      } else {
        text += fmt::format("  {:<22} {:<12} {:>5} {:>10} {:>11}   skipped (slow; --all runs it)\n", row.id, row.model,
                            shown.gpus, plan, metricValue(source.metric, row.published));
        row_json["status"] = "skipped_slow";
        slow_ids.push_back(row.id);
      }
      row_json["assumptions"] = row.assumptions;
      rows_json.push_back(std::move(row_json));
    }
    for (const auto& comparison : suite.rows) {
      if (comparison.row.source != source.id || !comparison.plan_chosen) continue;
      text += fmt::format("  {}: {} (not published; the fastest of {} plan{} that fit)\n", comparison.row.id,
                          validation::describePlanSetting(comparison.plan), comparison.plan_fitting.size(),
                          comparison.plan_fitting.size() == 1 ? "" : "s");
    }
    // A fitted source's figure is in sample; a validation-only one was never fitted to.
    const char* sample = source.rate_fit ? "in sample: `--fit-rate-fraction` holds each source out"
                                         : "out of sample: validation only, not fitted to";
    text += fmt::format("  MAPE {:.1f}%, bias {:+.1f}%, over {} row{}{} ({}; {})\n", 100.0 * accuracy.mape,
                        100.0 * accuracy.bias, accuracy.compared, accuracy.compared == 1 ? "" : "s",
                        accuracy.skipped > 0 ? fmt::format(", {} slow row(s) skipped", accuracy.skipped) : "", unit,
                        sample);
    text += memorySummary(suite, accuracy);
    sources_json.push_back(sourceJson(accuracy));
  }
  text += fmt::format("\noverall MAPE {:.1f}% over {} rows (each row weighs the same)\n", 100.0 * suite.mape,
                      suite.compared);
  if (!slow_ids.empty()) {
    text += fmt::format("{} slow row(s) skipped by default ({}); `trainsim validate training --all` includes them\n",
                        slow_ids.size(), fmt::join(slow_ids, ", "));
  }
  if (suite.failed > 0) text += fmt::format("{} row(s) FAILED to simulate\n", suite.failed);
  text += fmt::format("suite wall time {:.1f} s\n", suite.wall_s);
  nlohmann::ordered_json json = {
      {"mape", suite.mape},     {"compared", suite.compared}, {"skipped_slow", suite.skipped_slow},
      {"failed", suite.failed}, {"wall_s", suite.wall_s},     {"sources", sources_json},
      {"rows", rows_json}};
  return {text, json, suite.failed > 0 ? static_cast<int>(ExitCode::kInternal) : 0};
}

// `validate training --fit-rate-fraction`: the suite at a grid of training-rate fractions and
// the fraction per GPU type that balances its sources (validation/training_rate_fit.h).
SuiteOutput trainingRateFit(const ValidateOptions& options, const CommandContext& context,
                            const CalibrationInForce& in_force) {
  const validation::TrainingSuiteOptions suite_options = trainingSuiteOptions(options, context, in_force);
  const std::vector<double> grid = validation::defaultRateFitGrid();
  const auto fit = valueOrThrow(
      validation::runRateFractionFit(context.paths, suite_options, grid, [&](double fraction, double seconds) {
        std::cerr << fmt::format("trainsim: suite at fraction {:.2f} ran in {:.1f} s\n", fraction, seconds);
      }));

  auto percent = [](double fraction) { return fmt::format("{:.1f}%", 100.0 * fraction); };
  auto signed_percent = [](double fraction) { return fmt::format("{:+.1f}%", 100.0 * fraction); };
  std::string text = fmt::format(
      "training-rate fraction per GPU type (sim::ComputeParameters::training_rate_fraction) and per software stack "
      "on a GPU type (a stack file's training_rate_fraction), fitted on {} rows\n"
      "suite run at fractions {:.2f} to {:.2f} from the kernel-level model; each source weighs the same; held out "
      "= the source's rows at the fraction fitted on the group's other sources (*: at the GPU's default times the "
      "stack's factor fitted on its other sources, the source being its stack's only one there), the headline; fitted "
      "= in sample; bias = mean signed error; MAPE "
      "at 1 = kernels at their microbenchmark rates\n",
      fit.rows, grid.front(), grid.back());
  nlohmann::ordered_json gpus_json = nlohmann::ordered_json::array();
  for (const auto& gpu : fit.gpus) {
    const std::string group = gpu.stack.empty() ? gpu.gpu_key : fmt::format("{} on {}", gpu.stack, gpu.gpu_key);
    text += fmt::format("\n{}: fraction {:.3f}{} over {} rows\n", group, gpu.fraction,
                        gpu.at_grid_edge ? " (at the grid's end: the balance lies beyond it)" : "", gpu.rows);
    text += fmt::format("  {:<22} {:>4} {:>9} {:>8} {:>9} {:>8} {:>8} {:>10}\n", "source", "rows", "held out", "bias",
                        "fitted", "bias", "at 1", "fraction");
    nlohmann::ordered_json sources_json = nlohmann::ordered_json::array();
    for (const auto& source : gpu.sources) {
      const bool held = source.held_out_fraction.has_value();
      text += fmt::format(
          "  {:<22} {:>4} {:>9} {:>8} {:>9} {:>8} {:>8} {:>10}\n", source.source, source.rows,
          held ? percent(source.mape_held_out) : "-", held ? signed_percent(source.bias_held_out) : "-",
          percent(source.mape_fitted), signed_percent(source.bias_fitted), percent(source.mape_kernel_rates),
          held ? fmt::format("{:.3f}{}", *source.held_out_fraction, source.held_out_at_default ? "*" : "") : "-");
      nlohmann::ordered_json source_json = {{"source", source.source},
                                            {"rows", source.rows},
                                            {"mape_kernel_rates", source.mape_kernel_rates},
                                            {"mape_fitted", source.mape_fitted},
                                            {"bias_fitted", source.bias_fitted}};
      if (held) {
        source_json["held_out_fraction"] = *source.held_out_fraction;
        source_json["held_out_at_default"] = source.held_out_at_default;
        if (source.held_out_stack_factor) source_json["held_out_stack_factor"] = *source.held_out_stack_factor;
        source_json["mape_held_out"] = source.mape_held_out;
        source_json["bias_held_out"] = source.bias_held_out;
      }
      source_json["time_mape_held_out"] = source.time_mape_held_out;
      source_json["time_bias_held_out"] = source.time_bias_held_out;
      sources_json.push_back(std::move(source_json));
    }
    gpus_json.push_back(
        {{"gpu", gpu.gpu_key},
         {"stack", gpu.stack.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(gpu.stack)},
         {"fraction", gpu.fraction},
         {"at_grid_edge", gpu.at_grid_edge},
         {"rows", gpu.rows},
         {"sources", sources_json}});
  }
  nlohmann::ordered_json stacks_json = nlohmann::ordered_json::array();
  if (!fit.stacks.empty()) {
    text +=
        "\nstack factors (a stack file's training_rate_stack_factor: its fraction over the GPU's default, for "
        "GPU types it has none of)\n";
  }
  for (const auto& stack : fit.stacks) {
    text += fmt::format("  {:<22} {:.3f} over {} GPU type{}\n", stack.stack, stack.factor, stack.gpus,
                        stack.gpus == 1 ? "" : "s");
    stacks_json.push_back({{"stack", stack.stack}, {"factor", stack.factor}, {"gpus", stack.gpus}});
  }
  text += fmt::format("\noverall over {} rows: MAPE at 1 {}, fitted {}, held out {}\n", fit.rows,
                      percent(fit.mape_kernel_rates), percent(fit.mape_fitted), percent(fit.mape_held_out));
  nlohmann::ordered_json json = {{"grid", grid},
                                 {"rows", fit.rows},
                                 {"mape_kernel_rates", fit.mape_kernel_rates},
                                 {"mape_fitted", fit.mape_fitted},
                                 {"mape_held_out", fit.mape_held_out},
                                 {"gpus", gpus_json},
                                 {"stack_factors", stacks_json}};
  return {text, json, 0};
}

int emit(const ValidateOptions& options, const std::vector<std::pair<std::string, SuiteOutput>>& suites,
         const CalibrationInForce& in_force) {
  int exit_code = 0;
  for (const auto& [name, output] : suites) exit_code = std::max(exit_code, output.exit_code);
  if (!options.json_file.empty()) {
    nlohmann::ordered_json json;
    if (suites.size() == 1) {
      json = suites.front().second.json;
    } else {
      for (const auto& [name, output] : suites) json[name] = output.json;
    }
    if (in_force.calibration) {
      if (json.is_object()) {
        json["calibration"] = in_force.description;
      } else {
        for (auto& entry : json) entry["calibration"] = in_force.description;
      }
    }
    writeOutput(options.json_file, [&](std::ostream& out) { out << jsonText(json, 2) << "\n"; });
    if (options.json_file == "-") return exit_code;
  }
  if (in_force.calibration) std::cout << "calibration in force: " << in_force.description << "\n\n";
  for (std::size_t i = 0; i < suites.size(); ++i) std::cout << (i > 0 ? "\n" : "") << suites[i].second.text;
  return exit_code;
}

// `validate training --row ID --print-experiment`: the rows' experiments as YAML, so that a
// row can be run by `simulate` (with --ops, --trace) or changed by hand.
// A row whose source leaves plan settings out prints at the ones the suite runs it at.
int printExperiments(const ValidateOptions& options, const CommandContext& context,
                     const CalibrationInForce& in_force) {
  if (options.suite != "training" || options.rows.empty()) {
    throwInputError("validate", "--print-experiment", "expected the training suite and at least one --row");
  }
  const validation::TrainingRows rows = valueOrThrow(validation::loadTrainingRows(context.paths));
  for (const auto& id : options.rows) {
    const validation::TrainingRow* row = rows.find(id);
    if (row == nullptr) throwInputError("validate training", "--row", "unknown row id \"" + id + "\"");
    std::vector<Override> plan_setting;
    std::string chosen;
    if (validation::hasUnpublishedPlanSettings(*row)) {
      const auto choice = valueOrThrow(validation::chooseUnpublishedPlan(
          *row, context.paths, trainingSuiteOptions(options, context, in_force).simulation));
      plan_setting = validation::planSettingOverrides(choice.chosen);
      chosen = fmt::format("# {}: not published; the fastest of {} plans that fit\n",
                           validation::describePlanSetting(choice.chosen), choice.fitting.size());
    }
    const auto cluster = validation::trainingClusterOverride(*row);
    std::cout << fmt::format("# {}: trainsim simulate FILE{}\n", row->id, cluster ? " --set " + *cluster : "") << chosen
              << validation::trainingExperimentYaml(*row, plan_setting);
    if (&id != &options.rows.back()) std::cout << "---\n";
  }
  return 0;
}

}  // namespace

void addValidateCommand(CLI::App& app, ValidateOptions& options) {
  CLI::App* command = app.add_subcommand("validate", "Run the published-results suite and print predicted vs measured");
  command->add_option("suite", options.suite, "Suite to run: collectives, training, gemm or all")
      ->capture_default_str();
  command->add_option("--json", options.json_file, "Write the comparison as JSON (- = stdout)");
  command->add_flag("--all", options.include_slow,
                    "training: also run the rows marked slow (thousands of GPUs; minutes rather than seconds)");
  command->add_option("--row", options.rows, "training: run only this row id (repeatable); slow rows included");
  command->add_option("--calibration", options.calibration_file,
                      "Apply a calibration (trainsim calibrate) to the model before comparing");
  command->add_flag(
      "--fit-rate-fraction", options.fit_rate_fraction,
      "training: fit the training-rate fraction of each GPU type to the suite (runs it 10 times, on every core)");
  command->add_flag("--scale-transfer", options.scale_transfer,
                    "collectives: calibrate on each system's runs on at most 2 nodes and predict its larger runs");
  command->add_flag("--print-experiment", options.print_experiment,
                    "training: print each --row's experiment YAML (what it simulates) instead of running it");
}

int runValidate(const ValidateOptions& options, const CommandContext& context) {
  try {
    requireWritableOutputs({&options.json_file});
    CalibrationInForce in_force;
    if (!options.calibration_file.empty()) {
      in_force.calibration = valueOrThrow(calibrate::loadCalibrationFile(options.calibration_file));
      in_force.description = calibrate::describeCalibration(*in_force.calibration);
    }
    if (options.scale_transfer) {
      if (options.suite != "collectives") {
        throwInputError("validate", "--scale-transfer", "expected the collectives suite");
      }
      return emit(options, {{"scale_transfer", scaleTransfer(context, in_force)}}, in_force);
    }
    if (options.suite == "collectives") {
      return emit(options, {{"collectives", collectiveSuite(context, in_force)}}, in_force);
    }
    if (options.print_experiment) return printExperiments(options, context, in_force);
    if (options.fit_rate_fraction) {
      if (options.suite != "training") {
        throwInputError("validate", "--fit-rate-fraction", "expected the training suite");
      }
      return emit(options, {{"training_rate_fit", trainingRateFit(options, context, in_force)}}, in_force);
    }
    if (options.suite == "training") {
      return emit(options, {{"training", trainingSuite(options, context, in_force)}}, in_force);
    }
    if (options.suite == "gemm") return emit(options, {{"gemm", gemmSuite(context, in_force)}}, in_force);
    if (options.suite == "all") {
      return emit(options,
                  {{"collectives", collectiveSuite(context, in_force)},
                   {"training", trainingSuite(options, context, in_force)},
                   {"gemm", gemmSuite(context, in_force)}},
                  in_force);
    }
    throwInputError("validate", "",
                    "unknown suite \"" + options.suite + "\"; available: collectives, training, gemm, all");
  } catch (const InputError& error) {
    return reportError(error.error(), context);
  }
}

}  // namespace trainsim::cli
