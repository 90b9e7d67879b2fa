// `trainsim simulate EXPERIMENT.yaml`: one simulated iteration, extrapolated to the run.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/command_context.h"
#include "sim/memory_budget.h"

namespace trainsim::cli {

struct SimulateOptions {
  std::string experiment;
  std::vector<std::string> overrides;
  std::string json_file;
  std::string trace_file;
  std::string html_file;         // --html: the report page (html_report.h)
  std::string calibration_file;  // --calibration calib.yaml
  bool ignore_memory = false;
  bool symmetric = false;
  bool every_microbatch = false;                         // no steady-state extrapolation
  bool ops = false;                                      // the busiest stage's compute, op by op
  double max_memory_GiB = sim::kDefaultMemoryBudgetGiB;  // refuse plans estimated above it
  int64_t goodput_draws = 0;       // Monte Carlo draws of the run with failures (0: analytic only)
  uint64_t seed = 1;               // for those draws and for the slow GPUs
  std::optional<int64_t> threads;  // the steady state's simulations at once; default: every hardware thread
};

void addSimulateCommand(CLI::App& app, SimulateOptions& options);
int runSimulate(const SimulateOptions& options, const CommandContext& context);

}  // namespace trainsim::cli
