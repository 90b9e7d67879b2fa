#include "validation/training_rate_fit.h"
#include "validation/wall_time.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

namespace trainsim::validation {
namespace {

// Bisection steps on log f: the bracket of the widest grid shrinks below 1e-12.
constexpr int kBisectionSteps = 60;

// Linear interpolation of `values` (one per grid fraction) at log(fraction), clamped to the grid.
double interpolate(const std::vector<double>& grid, const std::vector<double>& values, double fraction) {
  if (fraction <= grid.front()) return values.front();
  if (fraction >= grid.back()) return values.back();
  const auto upper = std::upper_bound(grid.begin(), grid.end(), fraction);
  const std::size_t hi = static_cast<std::size_t>(upper - grid.begin());
  const std::size_t lo = hi - 1;
  const double t = (std::log(fraction) - std::log(grid[lo])) / (std::log(grid[hi]) - std::log(grid[lo]));
  return values[lo] + t * (values[hi] - values[lo]);
}

double logRatioAt(const RateFitRow& row, const std::vector<double>& grid, double fraction) {
  return interpolate(grid, row.log_time_ratio, fraction);
}

// The mean log ratio of `rows` at `fraction`, each source weighing the same.
double balance(const std::vector<const RateFitRow*>& rows, const std::vector<double>& grid, double fraction) {
  std::map<std::string, std::pair<double, int>> by_source;
  for (const RateFitRow* row : rows) {
    auto& [sum, count] = by_source[row->source];
    sum += logRatioAt(*row, grid, fraction);
    ++count;
  }
  double total = 0.0;
  for (const auto& [source, entry] : by_source) total += entry.first / entry.second;
  return total / static_cast<double>(by_source.size());
}

struct Balanced {
  double fraction;
  bool at_edge;
};

// The fraction in the grid's range where balance() crosses zero (it falls as the fraction
// grows: faster kernels, shorter predicted steps), else the nearest end of the grid.
Balanced balancedFraction(const std::vector<const RateFitRow*>& rows, const std::vector<double>& grid) {
  double lo = std::log(grid.front());
  double hi = std::log(grid.back());
  if (balance(rows, grid, grid.front()) <= 0.0) return {grid.front(), true};
  if (balance(rows, grid, grid.back()) >= 0.0) return {grid.back(), true};
  for (int step = 0; step < kBisectionSteps; ++step) {
    const double mid = 0.5 * (lo + hi);
    if (balance(rows, grid, std::exp(mid)) > 0.0) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return {std::exp(0.5 * (lo + hi)), false};
}

// How a source's rows are scored at a fraction: in the source's metric (rateFitRowError) or
// as the error of the predicted step time; as the mean of |error| or of the signed error.
enum class ErrorOf : uint8_t { kMetric, kTime };

double meanError(const std::vector<const RateFitRow*>& rows, const std::vector<double>& grid, double fraction,
                 ErrorOf of, bool absolute) {
  if (rows.empty()) return 0.0;
  double sum = 0.0;
  for (const RateFitRow* row : rows) {
    const double error = of == ErrorOf::kMetric ? rateFitRowError(*row, grid, fraction)
                                                : std::exp(logRatioAt(*row, grid, fraction)) - 1.0;
    sum += absolute ? std::fabs(error) : error;
  }
  return sum / static_cast<double>(rows.size());
}

// `stack`'s fraction over the GPU types' defaults: the geometric mean over the GPU types it has
// rows on (outside `left_out`'s) of its balanced fraction there over `default_of` the GPU, each
// weighted by its sources. None where no GPU type with a default is left.
std::optional<double> stackFactor(const std::string& stack, const std::vector<RateFitRow>& rows,
                                  const std::vector<double>& grid,
                                  const std::function<std::optional<double>(const std::string&)>& default_of,
                                  const std::string& left_out, int* gpus = nullptr) {
  std::map<std::string, std::vector<const RateFitRow*>> by_gpu;
  std::vector<std::string> gpu_order;
  for (const RateFitRow& row : rows) {
    if (row.stack != stack || row.source == left_out) continue;
    if (!by_gpu.contains(row.gpu_key)) gpu_order.push_back(row.gpu_key);
    by_gpu[row.gpu_key].push_back(&row);
  }
  double sum = 0.0;
  double weight = 0.0;
  int counted = 0;
  for (const std::string& gpu : gpu_order) {
    const std::optional<double> base = default_of(gpu);
    if (!base) continue;
    const std::vector<const RateFitRow*>& group = by_gpu.at(gpu);
    std::vector<std::string> sources;
    for (const RateFitRow* row : group) {
      if (std::find(sources.begin(), sources.end(), row->source) == sources.end()) sources.push_back(row->source);
    }
    const double w = static_cast<double>(sources.size());
    sum += w * std::log(balancedFraction(group, grid).fraction / *base);
    weight += w;
    ++counted;
  }
  if (gpus != nullptr) *gpus = counted;
  if (counted == 0) return std::nullopt;
  return std::exp(sum / weight);
}

}  // namespace

std::vector<double> defaultRateFitGrid() {
  std::vector<double> grid;
  for (int hundredths = 60; hundredths <= 105; hundredths += 5) grid.push_back(hundredths / 100.0);
  return grid;
}

double rateFitRowError(const RateFitRow& row, const std::vector<double>& grid, double fraction) {
  const double log_ratio = logRatioAt(row, grid, fraction);
  return std::exp(row.time_metric ? log_ratio : -log_ratio) - 1.0;
}

Expected<RateFitResult> fitRateFractions(const std::vector<double>& grid, const std::vector<RateFitRow>& rows,
                                         const std::map<std::string, double>& shipped_defaults) {
  return catchInputErrors([&]() -> RateFitResult {
    if (grid.size() < 2 || !std::is_sorted(grid.begin(), grid.end()) ||
        std::adjacent_find(grid.begin(), grid.end()) != grid.end() || grid.front() <= 0.0 || grid.front() > 1.0 ||
        grid.back() < 1.0) {
      throwInputError("--fit-rate-fraction", "",
                      "the fraction grid must ascend strictly through positive values and span 1");
    }
    if (rows.empty()) throwInputError("--fit-rate-fraction", "", "no simulated row to fit");
    for (const auto& row : rows) {
      if (row.log_time_ratio.size() != grid.size()) {
        throwInputError("--fit-rate-fraction", row.id,
                        fmt::format("{} ratios for a grid of {} fractions", row.log_time_ratio.size(), grid.size()));
      }
    }

    RateFitResult result;
    result.grid = grid;
    result.rows = static_cast<int>(rows.size());
    double sum_kernel_rates = 0.0;
    double sum_fitted = 0.0;
    double sum_held_out = 0.0;
    // The groups fitted apart, in the order of their first row: a GPU type's rows without a
    // stack first where it has both, so that its stacks can fall back on its fraction.
    std::vector<std::pair<std::string, std::string>> groups;  // (stack, gpu)
    for (const auto& row : rows) {
      const std::pair<std::string, std::string> group{row.stack, row.gpu_key};
      if (std::find(groups.begin(), groups.end(), group) == groups.end()) groups.push_back(group);
    }
    std::stable_partition(groups.begin(), groups.end(), [](const auto& group) { return group.first.empty(); });
    std::map<std::string, double> default_fraction;  // per GPU, from the rows without a stack
    // A GPU type's default: fitted on its rows without a stack, else as shipped.
    const auto default_of = [&](const std::string& gpu_key) -> std::optional<double> {
      if (const auto fitted = default_fraction.find(gpu_key); fitted != default_fraction.end()) return fitted->second;
      if (const auto shipped = shipped_defaults.find(gpu_key); shipped != shipped_defaults.end())
        return shipped->second;
      return std::nullopt;
    };
    for (const auto& [stack, gpu_key] : groups) {
      std::vector<const RateFitRow*> group_rows;
      std::vector<std::string> source_order;
      for (const auto& row : rows) {
        if (row.gpu_key != gpu_key || row.stack != stack) continue;
        group_rows.push_back(&row);
        if (std::find(source_order.begin(), source_order.end(), row.source) == source_order.end()) {
          source_order.push_back(row.source);
        }
      }
      GpuRateFit fit;
      fit.gpu_key = gpu_key;
      fit.stack = stack;
      fit.rows = static_cast<int>(group_rows.size());
      const Balanced balanced = balancedFraction(group_rows, grid);
      fit.fraction = balanced.fraction;
      fit.at_grid_edge = balanced.at_edge;
      if (stack.empty()) default_fraction[gpu_key] = fit.fraction;
      const std::optional<double> fallback = default_of(gpu_key);
      for (const auto& source : source_order) {
        std::vector<const RateFitRow*> inside;
        std::vector<const RateFitRow*> others;
        for (const RateFitRow* row : group_rows) (row->source == source ? inside : others).push_back(row);
        RateFitSource entry;
        entry.source = source;
        entry.rows = static_cast<int>(inside.size());
        entry.mape_kernel_rates = meanError(inside, grid, 1.0, ErrorOf::kMetric, true);
        entry.mape_fitted = meanError(inside, grid, fit.fraction, ErrorOf::kMetric, true);
        entry.bias_fitted = meanError(inside, grid, fit.fraction, ErrorOf::kMetric, false);
        entry.mape_held_out = entry.mape_fitted;
        entry.bias_held_out = entry.bias_fitted;
        if (!others.empty()) {
          entry.held_out_fraction = balancedFraction(others, grid).fraction;
        } else if (!stack.empty() && fallback) {
          entry.held_out_stack_factor = stackFactor(stack, rows, grid, default_of, source);
          entry.held_out_fraction = *fallback * entry.held_out_stack_factor.value_or(1.0);
          entry.held_out_at_default = true;
        }
        const double scored_at = entry.held_out_fraction.value_or(fit.fraction);
        if (entry.held_out_fraction) {
          entry.mape_held_out = meanError(inside, grid, scored_at, ErrorOf::kMetric, true);
          entry.bias_held_out = meanError(inside, grid, scored_at, ErrorOf::kMetric, false);
        }
        entry.time_mape_held_out = meanError(inside, grid, scored_at, ErrorOf::kTime, true);
        entry.time_bias_held_out = meanError(inside, grid, scored_at, ErrorOf::kTime, false);
        const double weight = static_cast<double>(inside.size());
        sum_kernel_rates += weight * entry.mape_kernel_rates;
        sum_fitted += weight * entry.mape_fitted;
        sum_held_out += weight * entry.mape_held_out;
        fit.sources.push_back(entry);
      }
      result.gpus.push_back(std::move(fit));
    }
    for (const auto& group : groups) {
      const std::string& stack = group.first;
      if (stack.empty() || std::any_of(result.stacks.begin(), result.stacks.end(),
                                       [&](const StackRateFactor& known) { return known.stack == stack; })) {
        continue;
      }
      StackRateFactor entry{stack, 1.0, 0};
      if (const auto factor = stackFactor(stack, rows, grid, default_of, "", &entry.gpus)) entry.factor = *factor;
      result.stacks.push_back(entry);
    }
    result.mape_kernel_rates = sum_kernel_rates / result.rows;
    result.mape_fitted = sum_fitted / result.rows;
    result.mape_held_out = sum_held_out / result.rows;
    return result;
  });
}

Expected<RateFitResult> runRateFractionFit(const ConfigPaths& paths, TrainingSuiteOptions options,
                                           const std::vector<double>& grid,
                                           const std::function<void(double, double)>& progress) {
  TRAINSIM_ASSIGN_OR_RETURN(TrainingRows suite_rows, loadTrainingRows(paths));
  // Validation-only sources are neither fitted to nor run here (TrainingSource::rate_fit).
  std::erase_if(suite_rows.rows, [&](const TrainingRow& row) { return !suite_rows.source(row.source).rate_fit; });
  // Which GPU types the suite's rows run on, so that each run can set all of them.
  std::vector<std::string> gpu_keys;
  for (const auto& row : suite_rows.rows) {
    const auto experiment = trainingExperiment(row, paths);
    if (!experiment.ok()) continue;
    const std::string& key = experiment->cluster.gpu.key;
    if (std::find(gpu_keys.begin(), gpu_keys.end(), key) == gpu_keys.end()) gpu_keys.push_back(key);
  }

  // One suite run per grid fraction, independent of the others: they run on as many
  // threads as the machine has (each run is deterministic, and the results are read in
  // grid order, so the fit does not depend on the thread count).
  std::vector<std::optional<Expected<TrainingSuiteResult>>> suites(grid.size());
  std::atomic<std::size_t> next{0};
  std::mutex progress_mutex;
  const auto work = [&] {
    for (std::size_t k = next++; k < grid.size(); k = next++) {
      const auto start = std::chrono::steady_clock::now();
      // Over each row's stack (and a calibration), so that the grid's fraction is in force
      // whatever fraction a stack carries.
      TrainingSuiteOptions at_fraction = options;
      at_fraction.over_stack = [&, fraction = grid[k]](parallelism::SimulationOptions& simulation) {
        if (options.over_stack) options.over_stack(simulation);
        auto& fractions = simulation.compute.training_rate_fraction;
        fractions.clear();
        for (const auto& key : gpu_keys) fractions.push_back({key, fraction});
      };
      suites[k] = runTrainingSuite(suite_rows, paths, at_fraction);
      if (progress) {
        std::lock_guard lock(progress_mutex);
        progress(grid[k], secondsSince(start));
      }
    }
  };
  const std::size_t thread_count =
      std::clamp<std::size_t>(std::thread::hardware_concurrency(), std::size_t{1}, grid.size());
  std::vector<std::thread> threads;
  for (std::size_t t = 1; t < thread_count; ++t) threads.emplace_back(work);
  work();
  for (auto& thread : threads) thread.join();

  std::vector<RateFitRow> rows;
  std::map<std::string, std::size_t> index_of;
  std::vector<bool> ran_everywhere;
  for (std::size_t k = 0; k < grid.size(); ++k) {
    TRAINSIM_ASSIGN_OR_RETURN(const TrainingSuiteResult suite, std::move(*suites[k]));
    for (const auto& comparison : suite.rows) {
      const TrainingRow& measurement = comparison.row;
      if (k == 0) {
        const TrainingMetric metric = suite_rows.source(measurement.source).metric;
        index_of[measurement.id] = rows.size();
        rows.push_back({measurement.id,
                        measurement.source,
                        comparison.gpu_key,
                        comparison.experiment ? comparison.experiment->training.stack : std::string(),
                        isTimeMetric(metric),
                        {}});
        ran_everywhere.push_back(true);
      }
      const std::size_t i = index_of.at(measurement.id);
      if (!comparison.ran) {
        ran_everywhere[i] = false;
        rows[i].log_time_ratio.push_back(0.0);
        continue;
      }
      const double log_ratio = std::log1p(comparison.error);
      rows[i].log_time_ratio.push_back(rows[i].time_metric ? log_ratio : -log_ratio);
    }
  }
  std::vector<RateFitRow> simulated;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (ran_everywhere[i]) simulated.push_back(std::move(rows[i]));
  }
  std::map<std::string, double> shipped_defaults;
  for (const auto& key : gpu_keys) shipped_defaults[key] = options.simulation.compute.trainingRateFraction(key);
  return fitRateFractions(grid, simulated, shipped_defaults);
}

}  // namespace trainsim::validation
