// `simulate --html FILE` and `sweep --html FILE`: one self-contained HTML page to look at
// (docs/report.md). Inline CSS, charts as inline SVG drawn here, no script, no font, image or
// URL fetched: it opens offline, from a mail attachment, in any browser. The same result
// gives the same bytes (no date, no path of the run).
#pragma once

#include <cstddef>
#include <optional>
#include <ostream>
#include <string>

#include "goodput/goodput_report.h"
#include "parallelism/experiment.h"
#include "parallelism/iteration_simulation.h"
#include "sweep/sweep.h"
#include "sweep/trade_off_plot.h"
#include "validation/expected_error.h"

namespace trainsim::cli {

// The ids of the charts' <svg> elements.
inline constexpr const char* kTimeChartId = "chart-time";
inline constexpr const char* kMemoryChartId = "chart-memory";
inline constexpr const char* kTradeOffChartId = "chart-tradeoff";

// The fill colour of each series, fixed so that the same part has the same colour in every
// report, distinct between the two charts of a page and from the trade-off plot's (whose
// Pareto front is #1f6fb2, sweep/trade_off_plot.cpp). tests/report/render_report_test.py
// reads these lines to find each chart's pixels in a browser's screenshot.
namespace report_colour {
// "Where the time goes" (kTimeChartId)
inline constexpr const char* kCompute = "#4c78a8";
inline constexpr const char* kTensorComm = "#f58518";  // TP/CP/EP collectives
inline constexpr const char* kDataComm = "#54a24b";
inline constexpr const char* kPipelineComm = "#b279a2";
inline constexpr const char* kBubble = "#e45756";
inline constexpr const char* kHostDispatch = "#eeca3b";
// "Memory per GPU" (kMemoryChartId)
inline constexpr const char* kWeights = "#17becf";
inline constexpr const char* kGradients = "#2f4b7c";
inline constexpr const char* kOptimizer = "#bcbd22";
inline constexpr const char* kActivations = "#ff9da6";
inline constexpr const char* kOtherMemory = "#9d755d";
inline constexpr const char* kCapacity = "#d62728";  // the capacity line
}  // namespace report_colour

struct SimulateReport {
  const parallelism::Experiment& experiment;
  const parallelism::IterationResult& result;
  const std::optional<validation::ExpectedError>& expected_error;
  const std::optional<goodput::GoodputReport>& goodput;  // computed with training.tokens
  bool symmetric = false;
};

// The experiment, model, cluster and plan, the key figures, where the time of each pipeline
// stage goes (kTimeChartId), each stage's memory per GPU against the capacity
// (kMemoryChartId), and tables of the same numbers.
void writeSimulateReport(std::ostream& out, const SimulateReport& report);

struct SweepReport {
  const sweep::SweepResult& result;
  std::string summary;      // the text `sweep` prints above its table
  sweep::PlotOptions plot;  // title and constraints of the trade-off plot
  std::size_t top = 10;     // ranked plans in the table
};

// The sweep's summary, its time/cost trade-off with the Pareto front (sweep/trade_off_plot.h,
// kTradeOffChartId) and the table of the ranked plans.
void writeSweepReport(std::ostream& out, const SweepReport& report);

}  // namespace trainsim::cli
