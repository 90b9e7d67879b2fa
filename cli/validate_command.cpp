#include "cli/validate_command.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "base/expected.h"
#include "cli/output_file.h"
#include "validate/collective_accuracy.h"

namespace trainsim::cli {
namespace {

std::string humanBytes(double bytes) {
  if (bytes >= 1024.0 * 1024.0 * 1024.0) return fmt::format("{:.3g} GiB", bytes / (1024.0 * 1024.0 * 1024.0));
  if (bytes >= 1024.0 * 1024.0) return fmt::format("{:.3g} MiB", bytes / (1024.0 * 1024.0));
  if (bytes >= 1024.0) return fmt::format("{:.3g} KiB", bytes / 1024.0);
  return fmt::format("{:.0f} B", bytes);
}

int runCollectiveSuite(const ValidateOptions& options, const CommandContext& context) {
  const auto results = valueOrThrow(validate::compareAllReduceCurves(context.paths, sim::CommunicationParameters{}));
  std::string text = "all_reduce: predicted vs published nccl-tests bus bandwidth\n";
  nlohmann::ordered_json json = nlohmann::ordered_json::array();
  for (const auto& accuracy : results) {
    const auto& curve = *accuracy.curve;
    text += fmt::format("\n{} ({} GPUs, cluster {}){}\n  source: {}\n", curve.title, curve.gpus, curve.cluster,
                        curve.accuracy_target ? "" : " [reference only]", curve.source);
    text += fmt::format("  {:>10} {:>12} {:>12} {:>8} {:>11} {:>11} {:>7} {:>7}\n", "size", "busbw meas", "busbw pred",
                        "error", "time meas", "time pred", "algo", "proto");
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const auto& point : accuracy.points) {
      const double error = point.predicted_busbw_GBps / point.measured_busbw_GBps - 1.0;
      text += fmt::format("  {:>10} {:>12.2f} {:>12.2f} {:>7.1f}% {:>9.1f}us {:>9.1f}us {:>7} {:>7}\n",
                          humanBytes(static_cast<double>(point.bytes)), point.measured_busbw_GBps,
                          point.predicted_busbw_GBps, 100.0 * error, point.measured_time_us, point.predicted_time_us,
                          point.algorithm, point.protocol);
      rows.push_back({{"bytes", point.bytes},
                      {"measured_busbw_GBps", point.measured_busbw_GBps},
                      {"predicted_busbw_GBps", point.predicted_busbw_GBps},
                      {"measured_time_us", point.measured_time_us},
                      {"predicted_time_us", point.predicted_time_us}});
    }
    const double half_ratio = accuracy.predicted_half_peak_bytes / accuracy.measured_half_peak_bytes;
    const double latency_error = accuracy.predicted_small_latency_us / accuracy.measured_small_latency_us - 1.0;
    text += fmt::format("  large messages (>= 256 MiB): mean bus bandwidth error {:+.1f}%\n",
                        100.0 * accuracy.large_message_error);
    text += fmt::format("  half of peak reached at {} measured, {} predicted (ratio {:.2f})\n",
                        humanBytes(accuracy.measured_half_peak_bytes), humanBytes(accuracy.predicted_half_peak_bytes),
                        half_ratio);
    text += fmt::format("  {} latency: {:.1f} us measured, {:.1f} us predicted ({:+.1f}%)\n",
                        humanBytes(static_cast<double>(accuracy.small_message_bytes)),
                        accuracy.measured_small_latency_us, accuracy.predicted_small_latency_us,
                        100.0 * latency_error);
    json.push_back({{"id", curve.id},
                    {"title", curve.title},
                    {"source", curve.source},
                    {"cluster", curve.cluster},
                    {"gpus", curve.gpus},
                    {"accuracy_target", curve.accuracy_target},
                    {"large_message_error", accuracy.large_message_error},
                    {"half_peak_ratio", half_ratio},
                    {"small_message_latency_error", latency_error},
                    {"points", rows}});
  }
  if (!options.json_file.empty()) {
    writeOutput(options.json_file, [&](std::ostream& out) { out << json.dump(2) << "\n"; });
    if (options.json_file == "-") return 0;
  }
  std::cout << text;
  return 0;
}

}  // namespace

void addValidateCommand(CLI::App& app, ValidateOptions& options) {
  CLI::App* command = app.add_subcommand("validate", "Run the published-results suite and print predicted vs measured");
  command->add_option("suite", options.suite, "Suite to run: collectives (the training suite is not built yet)")
      ->capture_default_str();
  command->add_option("--json", options.json_file, "Write the comparison as JSON (- = stdout)");
}

int runValidate(const ValidateOptions& options, const CommandContext& context) {
  try {
    if (options.suite == "collectives" || options.suite == "all") return runCollectiveSuite(options, context);
    throwInputError("validate", "", "unknown suite \"" + options.suite + "\"; available: collectives");
  } catch (const InputError& error) {
    return reportError(error.error());
  }
}

}  // namespace trainsim::cli
