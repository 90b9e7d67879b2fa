#include "cli/html_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <sstream>
#include <vector>

#include "base/units.h"
#include "cli/experiment_json.h"
#include "cli/goodput_output.h"
#include "cli/html_escape.h"
#include "cli/money_text.h"
#include "cli/ranked_plans.h"
#include "cli/stacked_bar_chart.h"
#include "sweep/objective.h"

namespace trainsim::cli {
namespace {

using parallelism::TimeBreakdown;

// System fonts only: the page fetches nothing.
constexpr const char* kStyle = R"(
body { margin: 0; background: #f6f7f9; color: #1d2330; font: 14px/1.45 system-ui, -apple-system, "Segoe UI",
       Roboto, sans-serif; }
main { max-width: 940px; margin: 0 auto; padding: 24px 20px 40px; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 4px 0 8px; }
p.subtitle { margin: 0 0 4px; color: #4a5263; }
section { background: white; border: 1px solid #dde1e8; border-radius: 6px; padding: 12px 16px; margin-top: 16px;
          overflow-x: auto; }
.figures { display: grid; grid-template-columns: repeat(auto-fill, minmax(200px, 1fr)); gap: 10px; }
.figure { border: 1px solid #e4e7ec; border-radius: 4px; padding: 8px 10px; }
.figure .name { font-size: 12px; color: #5b6475; }
.figure .value { font-size: 18px; font-weight: 600; }
.figure .note { font-size: 12px; color: #5b6475; }
.bad { color: #b3261e; }
.good { color: #1e7b34; }
svg { max-width: 100%; height: auto; display: block; }
table { border-collapse: collapse; width: 100%; margin: 8px 0 4px; font-size: 13px; font-variant-numeric: tabular-nums; }
th, td { border-bottom: 1px solid #e4e7ec; padding: 3px 5px; text-align: right; }
td { white-space: nowrap; }
th:first-child, td:first-child { text-align: left; }
th { background: #f0f2f5; font-weight: 600; }
pre { background: #f6f7f9; padding: 10px; white-space: pre-wrap; font-size: 12px; }
.explain { color: #4a5263; font-size: 13px; }
footer { margin-top: 24px; font-size: 12px; color: #6b7385; }
)";

void writeHead(std::ostream& out, const std::string& title) {
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      << "<title>" << escapeHtml(title) << "</title>\n<style>" << kStyle << "</style>\n</head>\n<body>\n<main>\n";
}

void writeFoot(std::ostream& out, const std::string& note) {
  out << "<footer>" << note << "Written by trainsim " << escapeHtml(TRAINSIM_VERSION)
      << " (docs/report.md).</footer>\n</main>\n</body>\n</html>\n";
}

// 1234567.8 -> "1,234,568".
std::string grouped(double value) {
  std::string digits = fmt::format("{:.0f}", std::abs(value));
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(static_cast<std::size_t>(i), ",");
  return value < 0 ? "-" + digits : digits;
}

std::string gibText(double bytes) { return fmt::format("{:.1f}", bytes / units::kGiB); }

// One key figure: its name, value (markup) and a note under it (markup, may be empty).
std::string figure(const std::string& name, const std::string& value, const std::string& note = "") {
  return fmt::format(R"(<div class="figure"><div class="name">{}</div><div class="value">{}</div>{}</div>)"
                     "\n",
                     name, value, note.empty() ? "" : fmt::format(R"(<div class="note">{}</div>)", note));
}

// The plan as `simulate` prints it: degrees, micro-batches, schedule and the switches set.
std::string planText(const parallelism::Experiment& experiment, int64_t microbatches) {
  const auto& plan = experiment.plan;
  const std::string split = plan.unevenSplitText(experiment.model.layers);
  std::string text = fmt::format("tp {} · pp {}{} · dp {} · cp {} · ep {} · virtual stages {} · {} micro-batches of {}",
                                 plan.tp, plan.pp, split.empty() ? "" : " (" + split + " layers)", plan.dp, plan.cp,
                                 plan.ep, plan.virtual_stages, microbatches, experiment.training.micro_batch_size);
  text += fmt::format(" · {}", parallelism::scheduleName(plan.schedule));
  if (plan.sequence_parallel) text += " · sequence parallel";
  if (plan.zero > 0) text += fmt::format(" · zero {}", plan.zero);
  if (plan.recompute != parallelism::Recompute::kNone) {
    text += fmt::format(" · {} recompute", parallelism::recomputeText(plan));
  }
  return text;
}

std::string keyFigures(const SimulateReport& report) {
  const auto& experiment = report.experiment;
  const auto& r = report.result;
  const auto& memory = r.memory;
  std::string html = "<section class=\"figures\">\n";
  html += figure("iteration time", fmt::format("{:.4f} s", r.iteration_time_s),
                 r.extrapolation ? fmt::format("{} and {} micro-batches simulated, extended to {}",
                                               r.extrapolation->first, r.extrapolation->second, r.microbatches)
                                 : fmt::format("{} micro-batches simulated", r.microbatches));
  html += figure("throughput", grouped(r.tokens_per_s) + " tokens/s");
  html += figure("per GPU", fmt::format("{:.1f} TFLOP/s", r.tflops_per_gpu),
                 fmt::format("model FLOPs; {:.1f} TFLOP/s hardware", r.hardware_tflops_per_gpu));
  html += figure("MFU", fmt::format("{:.1f}%", 100.0 * r.mfu), fmt::format("HFU {:.1f}%", 100.0 * r.hfu));
  html += figure("memory per GPU",
                 fmt::format("{} GiB <span class=\"{}\">{}</span>", gibText(memory.peakBytes()),
                             memory.fits() ? "good" : "bad", memory.fits() ? "fits" : "does not fit"),
                 fmt::format("of {} GiB; peak on stage {}", gibText(memory.capacity_bytes), memory.peak_stage));
  if (r.time_to_train_s) {
    html += figure("time to train", escapeHtml(durationText(*r.time_to_train_s)),
                   fmt::format("{:.3g} tokens, without failures", *experiment.training.tokens));
    html += figure("GPU-hours", grouped(*r.gpu_hours));
    html += figure("cost", r.cost_usd ? dollarsText(*r.cost_usd) : "unknown",
                   r.cost_usd ? "" : "no price_per_gpu_hour in the cluster");
  } else {
    html += figure("time to train", "unknown", "set training.tokens");
  }
  if (report.expected_error) {
    const auto& error = *report.expected_error;
    html += figure(
        "expected error", fmt::format("±{:.1f}%", 100.0 * error.mape),
        fmt::format("bias {:+.1f}%; {} run{} from {} source{}: {}", 100.0 * error.bias, error.rows,
                    error.rows == 1 ? "" : "s", error.sources, error.sources == 1 ? "" : "s", escapeHtml(error.basis)));
  } else {
    html += figure("expected error", "unknown", "no published run of this stack or GPU in the validation suite");
  }
  if (report.goodput) {
    const auto& with_failures = *report.goodput;
    if (with_failures.estimate) {
      html += figure("goodput", fmt::format("{:.1f}%", 100.0 * with_failures.estimate->goodput),
                     fmt::format("with failures: {}{}", escapeHtml(durationText(with_failures.estimate->wall_s)),
                                 with_failures.cost_usd ? ", " + dollarsText(*with_failures.cost_usd) : ""));
    } else {
      html += figure("goodput", "0%", "failures come faster than checkpoints can save progress");
    }
  }
  html += "</section>\n";
  return html;
}

// The stages' breakdowns; the critical one alone where the result has none per stage.
std::vector<TimeBreakdown> stageBreakdowns(const parallelism::IterationResult& result) {
  if (!result.stage_breakdowns.empty()) return result.stage_breakdowns;
  return {result.breakdown};
}

// The stage whose breakdown is the critical GPU's (the one that finishes last).
std::size_t criticalStage(const parallelism::IterationResult& result) {
  const auto stages = stageBreakdowns(result);
  for (std::size_t s = 0; s < stages.size(); ++s) {
    const auto& b = stages[s];
    const auto& c = result.breakdown;
    if (b.compute == c.compute && b.tp_comm_exposed == c.tp_comm_exposed && b.dp_comm_exposed == c.dp_comm_exposed &&
        b.pp_comm_exposed == c.pp_comm_exposed && b.pipeline_bubble == c.pipeline_bubble &&
        b.host_dispatch_exposed == c.host_dispatch_exposed) {
      return s;
    }
  }
  return stages.size();
}

std::string stageLabel(std::size_t stage, std::size_t critical) {
  return fmt::format("stage {}{}", stage, stage == critical ? " *" : "");
}

struct TimeSeries {
  std::vector<ChartSeries> series;
  bool host = false;  // host dispatch is a series (training.dispatch set)
};

TimeSeries timeSeries(const parallelism::Experiment& experiment) {
  TimeSeries time;
  time.series = {{"compute", report_colour::kCompute},
                 {"TP/CP/EP comm", report_colour::kTensorComm},
                 {"DP comm", report_colour::kDataComm},
                 {"PP comm", report_colour::kPipelineComm},
                 {"pipeline bubble", report_colour::kBubble}};
  time.host = experiment.training.dispatch.has_value();
  if (time.host) time.series.push_back({"host dispatch", report_colour::kHostDispatch});
  return time;
}

std::vector<double> timeValues(const TimeBreakdown& b, bool host) {
  std::vector<double> values = {b.compute, b.tp_comm_exposed, b.dp_comm_exposed, b.pp_comm_exposed, b.pipeline_bubble};
  if (host) values.push_back(b.host_dispatch_exposed);
  return values;
}

const std::vector<ChartSeries>& memorySeries() {
  static const std::vector<ChartSeries> series = {{"weights", report_colour::kWeights},
                                                  {"gradients", report_colour::kGradients},
                                                  {"optimizer", report_colour::kOptimizer},
                                                  {"activations", report_colour::kActivations},
                                                  {"other", report_colour::kOtherMemory}};
  return series;
}

std::vector<double> memoryValues(const parallelism::StageMemory& stage) {
  return {stage.weights, stage.gradients, stage.optimizer, stage.activations, stage.other()};
}

std::string timeSection(const SimulateReport& report) {
  const auto& result = report.result;
  const auto stages = stageBreakdowns(result);
  const std::size_t critical = criticalStage(result);
  const TimeSeries time = timeSeries(report.experiment);
  StackedBarChart chart{.id = kTimeChartId,
                        .title = "Where the time of one iteration goes, per pipeline stage",
                        .unit = "seconds",
                        .series = time.series,
                        .rows = {},
                        .reference = std::nullopt};
  for (std::size_t s = 0; s < stages.size(); ++s) {
    chart.rows.push_back({stageLabel(s, critical), timeValues(stages[s], time.host)});
  }
  std::string html = "<section>\n<h2>Where the time goes</h2>\n";
  html += fmt::format(
      "<p class=\"explain\">Each bar is one iteration ({:.4f} s) on the GPU of that pipeline stage that finishes "
      "last: compute at full speed, then the communication the schedule could not hide behind it, the idle time "
      "the pipeline schedule leaves (bubble){}. * marks the stage of the GPU that finishes last of all, whose "
      "breakdown <code>simulate</code> prints.</p>\n",
      result.iteration_time_s, time.host ? " and the waits for the host to launch kernels" : "");
  html += stackedBarChartSvg(chart);
  html += "<table>\n<tr><th>stage</th>";
  for (const auto& series : time.series) html += "<th>" + escapeHtml(series.label) + " (s)</th>";
  html += "<th>total (s)</th></tr>\n";
  for (std::size_t s = 0; s < stages.size(); ++s) {
    html += "<tr><td>" + escapeHtml(stageLabel(s, critical)) + "</td>";
    double total = 0.0;
    for (double value : timeValues(stages[s], time.host)) {
      html += fmt::format("<td>{:.4f}</td>", value);
      total += value;
    }
    html += fmt::format("<td>{:.4f}</td></tr>\n", total);
  }
  html += "</table>\n</section>\n";
  return html;
}

std::string memorySection(const SimulateReport& report) {
  const auto& memory = report.result.memory;
  StackedBarChart chart{.id = kMemoryChartId,
                        .title = "Memory per GPU, per pipeline stage",
                        .unit = "GiB",
                        .series = memorySeries(),
                        .rows = {},
                        .reference = ChartReference{memory.capacity_bytes / units::kGiB,
                                                    fmt::format("capacity {} GiB", gibText(memory.capacity_bytes)),
                                                    report_colour::kCapacity}};
  for (const auto& stage : memory.stages) {
    std::vector<double> values;
    for (double bytes : memoryValues(stage)) values.push_back(bytes / units::kGiB);
    chart.rows.push_back({fmt::format("stage {}", stage.stage), values});
  }
  std::string html = "<section>\n<h2>Memory per GPU</h2>\n";
  html += fmt::format(
      "<p class=\"explain\">What one GPU of each pipeline stage holds at its peak, against the GPU's {} GiB (the "
      "memory model of <code>trainsim memory</code>): weights, gradients and optimizer states as sharded by the "
      "plan, the activations of the micro-batches in flight, and other (communication buffers, CUDA context and "
      "libraries, allocator overhead). {}</p>\n",
      gibText(memory.capacity_bytes),
      memory.fits() ? "Every stage fits."
                    : fmt::format("<span class=\"bad\">Stage {} does not fit.</span>", memory.peak_stage));
  html += stackedBarChartSvg(chart);
  html += "<table>\n<tr><th>stage</th><th>layers</th>";
  for (const auto& series : memorySeries()) html += "<th>" + escapeHtml(series.label) + " (GiB)</th>";
  html += "<th>total (GiB)</th><th>of capacity</th></tr>\n";
  for (const auto& stage : memory.stages) {
    html += fmt::format("<tr><td>stage {}</td><td>{}</td>", stage.stage, stage.layers);
    for (double bytes : memoryValues(stage)) html += "<td>" + gibText(bytes) + "</td>";
    const bool fits = stage.total() <= memory.capacity_bytes;
    html += fmt::format("<td>{}</td><td{}>{:.0f}%</td></tr>\n", gibText(stage.total()), fits ? "" : " class=\"bad\"",
                        100.0 * stage.total() / memory.capacity_bytes);
  }
  html += "</table>\n</section>\n";
  return html;
}

// The ranked plans: the rows of `sweep`'s table, with the Pareto front marked.
std::string rankedPlansTable(const sweep::SweepResult& result, std::size_t top) {
  const bool several = result.targets.size() > 1;
  std::string html = "<table>\n<tr><th>rank</th>";
  if (several) html += "<th>cluster</th><th>gpus</th>";
  html +=
      "<th>tp</th><th>pp</th><th>dp</th><th>cp</th><th>ep</th><th>v</th><th>mb</th><th>sp</th><th>zero</th>"
      "<th>recompute</th><th>iteration (s)</th><th>MFU</th><th>memory (GiB)</th><th>time to train</th>"
      "<th>cost</th><th>Pareto</th></tr>\n";
  std::size_t rank = 0;
  for (const RankedPlan& ranked : rankedPlans(result, top)) {
    const auto& plan_candidate = *ranked.candidate;
    const auto& plan = plan_candidate.plan;
    const auto& target = *ranked.target;
    const auto& outcome = *ranked.outcome;
    const auto& r = *ranked.result;
    const auto& time_to_train = ranked.time_to_train_s;
    const auto& cost = ranked.cost_usd;
    const std::string split = plan.unevenSplitText(target.experiment.model.layers);
    html += fmt::format("<tr><td>{}</td>", ++rank);
    if (several) html += fmt::format("<td>{}</td><td>{}</td>", escapeHtml(target.cluster_label), target.gpus);
    html += fmt::format(
        "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td>{:.3f}</td><td>{:.1f}%</td><td>{:.1f}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
        plan.tp, split.empty() ? std::to_string(plan.pp) : fmt::format("{} ({})", plan.pp, split), plan.dp, plan.cp,
        plan.ep, plan.virtual_stages, plan_candidate.micro_batch_size, plan.sequence_parallel ? "on" : "-", plan.zero,
        parallelism::recomputeLabel(plan), r.iteration_time_s, 100.0 * r.mfu, outcome.memory->peakBytes() / units::kGiB,
        time_to_train ? escapeHtml(durationText(*time_to_train)) : "-", cost ? dollarsText(*cost) : "-",
        outcome.pareto ? "yes" : "");
  }
  html += "</table>\n";
  if (rank == 0) html += "<p>No simulated plan meets the constraints.</p>\n";
  if (rank > 0 && result.targets.front().goodput) {
    html += "<p class=\"explain\">Time to train and cost with failures, checkpoints and restarts (--goodput).</p>\n";
  }
  return html;
}

}  // namespace

void writeSimulateReport(std::ostream& out, const SimulateReport& report) {
  const auto& experiment = report.experiment;
  const auto& plan = experiment.plan;
  writeHead(out, "trainsim: " + experiment.name);
  out << "<h1>" << escapeHtml(experiment.name) << "</h1>\n";
  out << fmt::format("<p class=\"subtitle\">{} on {} × {} ({}){}</p>\n", escapeHtml(experiment.model.name),
                     grouped(static_cast<double>(plan.gpus)), escapeHtml(experiment.cluster.gpu.key),
                     escapeHtml(experiment.cluster.name),
                     experiment.stack ? fmt::format(", {} {}", escapeHtml(experiment.stack->name),
                                                    escapeHtml(experiment.stack->version))
                                      : "");
  if (const auto overridden = stackOverrideKeys(experiment); !overridden.empty()) {
    out << "<p class=\"subtitle\">stack overrides: " << escapeHtml(fmt::format("{}", fmt::join(overridden, ", ")))
        << "</p>\n";
  }
  out << "<p class=\"subtitle\">" << escapeHtml(planText(experiment, report.result.microbatches)) << "</p>\n";
  out << keyFigures(report) << timeSection(report) << memorySection(report);
  writeFoot(out, report.symmetric ? "Symmetric mode: one data-parallel replica simulated, the others assumed "
                                    "identical. "
                                  : "");
}

void writeSweepReport(std::ostream& out, const SweepReport& report) {
  const auto& result = report.result;
  const auto& first = result.targets.front().experiment;
  writeHead(out, "trainsim sweep: " + first.name);
  out << "<h1>sweep " << escapeHtml(first.name) << "</h1>\n";
  out << fmt::format("<p class=\"subtitle\">{}: {} plans enumerated, {} event-simulated</p>\n",
                     escapeHtml(first.model.name), grouped(static_cast<double>(result.counts.enumerated)),
                     grouped(static_cast<double>(result.counts.simulated)));
  out << "<section>\n<h2>Summary</h2>\n<pre>" << escapeHtml(report.summary) << "</pre>\n</section>\n";
  sweep::PlotOptions plot = report.plot;
  plot.id = kTradeOffChartId;
  std::ostringstream svg;
  sweep::writeTradeOffSvg(svg, result, plot);
  out << "<section>\n<h2>Time and cost</h2>\n"
      << "<p class=\"explain\">Every event-simulated plan, time against cost (logarithmic axes). The plans no "
         "other plan beats on both form the Pareto front, joined and labelled: choose among them by what a day "
         "of training is worth to you.</p>\n"
      << svg.str() << "</section>\n";
  out << "<section>\n<h2>Ranked plans</h2>\n" << rankedPlansTable(result, report.top) << "</section>\n";
  writeFoot(out, "");
}

}  // namespace trainsim::cli
