// Fitting the default in-situ kernel rate of each GPU type to the validation suite
// (`trainsim validate training --fit-rate-fraction`): the documented source of the defaults
// in perf::ComputeParameters::training_rate_fraction.
//
// The kernel-level model runs every kernel at the rate a microbenchmark measured for it
// repeating that one kernel. Inside a training step of a production stack the kernels reach
// less (framework gaps between kernels, clocks under a whole step's power draw, kernel
// versions other than the benchmarked ones). `calibrate --training-step` fits that fraction
// to the user's own measured steps; this fit gives its default per GPU type from the
// published runs of the suite, so that a prediction made before any measurement is centred
// on what those stacks reach rather than on the microbenchmarks.
//
// Method: the suite runs at a grid of fractions, every GPU type at the same fraction in a run
// and starting from the kernel-level model (no fraction in force). Each row's
// log(predicted step / published step) is then a function of its GPU's fraction,
// interpolated linearly in log f between grid points (a row whose source leaves plan
// settings out re-chooses them at each grid fraction, validation/unpublished_plan_choice.h,
// so its ratio can step where the fastest plan changes). A GPU's fitted fraction zeroes the
// mean of that log ratio over its rows with each source weighing the same (a source's rows
// share its weight): the balanced-in-the-log objective of `calibrate --training-step`,
// without letting the source with the most rows decide. Leave one source out: for each
// source of a GPU type with two or more sources, the fraction fitted on the others and the
// source's mean error at it, which is how the default does on a stack it was not fitted to.
//
// Software stacks: rows whose experiment names a stack (training.stack) are fitted apart,
// one fraction per stack and GPU type (the value a stack file's training_rate_fraction holds,
// configs/stacks/), while the rows without one give the GPU's default. Each stack also gets a
// factor (a stack file's training_rate_stack_factor): the geometric mean over the GPU types it
// has rows on of its fraction over the GPU's default, each GPU type weighted by its sources,
// which a GPU type the stack has no fraction of takes on its default. A stack's source held out
// with no other source of its stack on that GPU is predicted so: at the GPU's default times
// the factor fitted on the stack's other sources, the fraction a user of that stack gets on a
// GPU it was not fitted on.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/config_paths.h"
#include "base/expected.h"
#include "validation/training_suite.h"

namespace trainsim::validation {

// One suite row as the fit sees it: its log(predicted / published step time) at each grid
// fraction.
struct RateFitRow {
  std::string id;
  std::string source;
  std::string gpu_key;
  std::string stack;         // training.stack of the row's experiment ("" for none)
  bool time_metric = false;  // published as a time (error = time ratio - 1), else as a throughput
  std::vector<double> log_time_ratio;
};

struct RateFitSource {
  std::string source;
  int rows = 0;
  double mape_kernel_rates = 0.0;  // mean |error| at fraction 1
  double mape_fitted = 0.0;        // at the GPU's fitted fraction
  // Fitted on the GPU's other sources (absent where the GPU has one source), and this
  // source's mean |error| there.
  std::optional<double> held_out_fraction;
  // The held-out fraction is the GPU's default (the rows without a stack): the source is its
  // stack's only one on this GPU. It is times held_out_stack_factor where the stack's other
  // sources give one (on other GPU types).
  bool held_out_at_default = false;
  std::optional<double> held_out_stack_factor;
  double mape_held_out = 0.0;
  // Mean signed error (predicted / published - 1 in the source's metric), fitted and held out.
  double bias_fitted = 0.0;
  double bias_held_out = 0.0;
  // The held-out errors of the predicted iteration time (predicted / actual step - 1), whatever
  // the source publishes: what `simulate` states as the expected error
  // (configs/validation/expected_error.yaml).
  double time_mape_held_out = 0.0;
  double time_bias_held_out = 0.0;
};

// One fitted fraction: of a GPU type (stack empty), or of a stack on a GPU type.
struct GpuRateFit {
  std::string gpu_key;
  std::string stack;
  double fraction = 1.0;
  bool at_grid_edge = false;  // the balance lies outside the grid: the fraction is the nearest end
  int rows = 0;
  std::vector<RateFitSource> sources;  // in the order of their first row
};

// A stack's fraction over the GPU types' defaults (training_rate_stack_factor).
struct StackRateFactor {
  std::string stack;
  double factor = 1.0;
  int gpus = 0;  // the GPU types it is the mean over
};

struct RateFitResult {
  std::vector<double> grid;
  std::vector<GpuRateFit> gpus;         // in the order of their first row
  std::vector<StackRateFactor> stacks;  // in the order of their first group
  int rows = 0;
  double mape_kernel_rates = 0.0;  // over every row, each weighing the same
  double mape_fitted = 0.0;
  // Every row at its source's held-out fraction, where its GPU (stack) has two or more
  // sources or a stack's source has the GPU's default to fall back on (other rows at their
  // fitted fraction).
  double mape_held_out = 0.0;
};

// The fraction grid the command runs: 0.60 to 1.05 in steps of 0.05 (1 included).
[[nodiscard]] std::vector<double> defaultRateFitGrid();

// The row's error (predicted / published - 1 in its metric) with its GPU at `fraction`,
// interpolated on `grid` (ascending; fractions outside it take the nearest end).
[[nodiscard]] double rateFitRowError(const RateFitRow& row, const std::vector<double>& grid, double fraction);

// The fit, from rows already simulated on `grid` (ascending, at least two fractions, 1 within
// its range; every row with one ratio per fraction).
// `shipped_defaults`: the GPU types' default fractions as shipped (perf::ComputeParameters::
// training_rate_fraction), which a stack's source held out falls back on where no row without
// a stack runs on its GPU (a part that takes its sibling's fraction, A100 40GB the 80GB's).
[[nodiscard]] Expected<RateFitResult> fitRateFractions(const std::vector<double>& grid,
                                                       const std::vector<RateFitRow>& rows,
                                                       const std::map<std::string, double>& shipped_defaults = {});

// Runs the suite (`options`: which rows, the parameters to start from; any training-rate
// fraction in them is dropped) once per fraction of `grid`, the runs spread over the
// machine's hardware threads, and fits. `progress` is called after each run (in the order
// they finish, one call at a time) with the fraction and the run's wall time.
[[nodiscard]] Expected<RateFitResult> runRateFractionFit(const ConfigPaths& paths, TrainingSuiteOptions options,
                                                         const std::vector<double>& grid,
                                                         const std::function<void(double, double)>& progress = {});

}  // namespace trainsim::validation
