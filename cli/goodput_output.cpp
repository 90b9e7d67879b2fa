#include "cli/goodput_output.h"

#include <fmt/format.h>

#include "cli/experiment_json.h"

namespace trainsim::cli {
namespace {

using nlohmann::ordered_json;

constexpr double kSecondsPerDay = 86400.0;

ordered_json checkpointJson(const goodput::GoodputReport& report) {
  const goodput::CheckpointCost& checkpoint = report.checkpoint;
  ordered_json json = {{"bytes", checkpoint.bytes},
                       {"write_s", checkpoint.write_s},
                       {"load_s", checkpoint.load_s},
                       {"stall_s", checkpoint.stall_s},
                       {"async", checkpoint.async}};
  if (report.estimate) {
    json["interval_iterations"] = report.estimate->interval_iterations;
    json["interval_s"] = report.estimate->interval_s;
    json["interval_choice"] = report.estimate->interval_chosen ? "young-daly" : "given";
    json["count"] = report.estimate->checkpoints;
  }
  return json;
}

ordered_json monteCarloJson(const goodput::MonteCarloSummary& summary) {
  return {{"draws", summary.draws},
          {"seed", summary.seed},
          {"time_to_train_mean_s", summary.wall_mean_s},
          {"time_to_train_p50_s", summary.wall_p50_s},
          {"time_to_train_p90_s", summary.wall_p90_s},
          {"unplanned_interruptions_mean", summary.unplanned_mean},
          {"unplanned_interruptions_p50", summary.unplanned_p50},
          {"unplanned_interruptions_p90", summary.unplanned_p90},
          {"planned_interruptions_mean", summary.planned_mean},
          {"goodput_mean", summary.goodput_mean}};
}

}  // namespace

std::string durationText(double seconds) {
  if (seconds >= kSecondsPerDay) return fmt::format("{:.1f} days", seconds / kSecondsPerDay);
  if (seconds >= 3600.0) return fmt::format("{:.1f} h", seconds / 3600.0);
  if (seconds >= 60.0) return fmt::format("{:.1f} min", seconds / 60.0);
  return fmt::format("{:.3f} s", seconds);
}

ordered_json goodputJson(const std::optional<goodput::GoodputReport>& report, const goodput::GoodputOptions& options) {
  if (!report) return nullptr;
  const goodput::JobFailureRates& rates = report->rates;
  ordered_json json = {
      {"iteration_time_s", report->iteration_time_s},
      {"failure_free_time_s", report->useful_s},
      {"interruptions_per_day",
       {{"unplanned", rates.unplanned() * kSecondsPerDay}, {"planned", rates.planned * kSecondsPerDay}}},
      {"mtbf_s", rates.unplanned() > 0.0 ? ordered_json(1.0 / rates.unplanned()) : ordered_json(nullptr)},
      {"checkpoint", checkpointJson(*report)},
  };
  const auto& estimate = report->estimate;
  if (estimate) {
    json["restart_s"] = {{"hardware", estimate->restart.hardware},
                         {"software", estimate->restart.software},
                         {"planned", estimate->restart.planned},
                         {"spare_available", estimate->restart.spare_available}};
    json["interruptions"] = {{"unplanned", estimate->unplanned}, {"planned", estimate->planned}};
    json["lost_s"] = {{"checkpoints", estimate->lost_checkpoint_s},
                      {"restarts", estimate->lost_restart_s},
                      {"rework", estimate->lost_rework_s}};
  }
  json["goodput"] = estimate ? ordered_json(estimate->goodput) : ordered_json(0.0);
  json["time_to_train_s"] = optionalNumber(report->time_to_train_s);
  json["gpu_hours"] = optionalNumber(report->gpu_hours);
  json["cost_usd"] = optionalNumber(report->cost_usd);
  json["stragglers"] = report->stragglers ? ordered_json{{"slow_gpus", report->stragglers->slow_gpus},
                                                         {"iteration_time_s", report->stragglers->iteration_time_s},
                                                         {"seed", options.seed}}
                                          : ordered_json(nullptr);
  json["monte_carlo"] = report->monte_carlo ? monteCarloJson(*report->monte_carlo) : ordered_json(nullptr);
  return json;
}

std::string goodputText(const std::optional<goodput::GoodputReport>& report) {
  if (!report) return "";
  std::string text;
  if (report->stragglers) {
    text += fmt::format("slow GPUs           {} of {}: iteration {:.4f} s\n", report->stragglers->slow_gpus,
                        report->devices.gpus, report->stragglers->iteration_time_s);
  }
  const auto& estimate = report->estimate;
  if (!estimate) {
    text += fmt::format(
        "goodput             none: {:.3g} interruptions a day leave no time to make progress between restarts\n",
        report->rates.unplanned() * kSecondsPerDay);
    return text;
  }
  const goodput::CheckpointCost& checkpoint = report->checkpoint;
  text += fmt::format(
      "goodput             {:.1f}%: {:.0f} unplanned + {:.0f} planned interruptions ({:.2f} + {:.2f} a day), "
      "lost to restarts {}, rework {}, checkpoints {}\n",
      100.0 * estimate->goodput, estimate->unplanned, estimate->planned, report->rates.unplanned() * kSecondsPerDay,
      report->rates.planned * kSecondsPerDay, durationText(estimate->lost_restart_s),
      durationText(estimate->lost_rework_s), durationText(estimate->lost_checkpoint_s));
  text += fmt::format("checkpoints         every {} iterations ({}, {}), {:.3g} TB, write {}, stall {}{}\n",
                      estimate->interval_iterations, durationText(estimate->interval_s),
                      estimate->interval_chosen ? "Young/Daly" : "given", checkpoint.bytes / 1e12,
                      durationText(checkpoint.write_s), durationText(checkpoint.stall_s),
                      checkpoint.async ? " (async)" : "");
  text += fmt::format("with failures       {}, {:.0f} GPU-hours", durationText(*report->time_to_train_s),
                      *report->gpu_hours);
  text += report->cost_usd ? fmt::format(", ${:.0f}", *report->cost_usd) : std::string();
  if (report->monte_carlo) {
    const auto& mc = *report->monte_carlo;
    text += fmt::format(" (p50 {}, p90 {}: {} draws, seed {})", durationText(mc.wall_p50_s),
                        durationText(mc.wall_p90_s), mc.draws, mc.seed);
  }
  return text + "\n";
}

}  // namespace trainsim::cli
