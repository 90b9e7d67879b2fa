// `trainsim sweep EXPERIMENT.yaml`: search the parallel plans of an experiment (and of
// several clusters or GPU counts), rank them by time, cost or MFU, print the top K, and
// write every plan with its status to --json / --csv, the time/cost trade-off to --plot and a
// report page to --html.
// Under mpirun (MPI build) the plans are split over the ranks; rank 0 prints and writes.
// docs/sweep.md documents the options, the statuses and the screen rule.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/command_context.h"
#include "sim/memory_budget.h"

namespace trainsim::cli {

struct SweepOptions {
  std::string experiment;
  std::vector<std::string> overrides;
  std::vector<std::string> vary;
  std::vector<std::string> fix;
  std::vector<std::string> clusters;
  std::vector<int64_t> gpus;
  std::string objective = "time";
  std::optional<double> deadline_days;
  std::optional<double> budget_usd;
  // Signed, so that a negative count on the command line is an error instead of wrapping
  // to a huge unsigned one.
  int64_t top = 10;
  bool simulate_all = false;
  int64_t max_simulations = 0;  // 0: no cap
  bool full = false;
  bool goodput = false;  // rank by time and cost with failures (goodput/)
  // Per simulation: a plan estimated above it is not simulated (invalid, with the estimate).
  double max_memory_GiB = sim::kDefaultMemoryBudgetGiB;
  std::optional<int64_t> threads;  // default: every hardware thread
  std::string json_file;
  std::string csv_file;
  std::string plot_file;
  std::string html_file;         // --html: the report page (html_report.h)
  std::string calibration_file;  // --calibration calib.yaml
};

void addSweepCommand(CLI::App& app, SweepOptions& options);
int runSweep(const SweepOptions& options, const CommandContext& context);

}  // namespace trainsim::cli
