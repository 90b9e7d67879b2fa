#include "calibrate/training_step_fit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

namespace trainsim::calibrate {
namespace {

constexpr int kMaxSimulations = 40;
// Converged when the mean log ratio is within this (0.01% of a step) or the bracket on log f
// is this narrow.
constexpr double kLogTolerance = 1e-4;
constexpr double kBracketTolerance = 1e-6;

parallelism::SimulationOptions withFraction(parallelism::SimulationOptions options, const std::string& gpu_key,
                                            double fraction) {
  auto& rows = options.compute.training_rate_fraction;
  std::erase_if(rows, [&](const perf::MeasuredFraction& row) { return row.gpu_key == gpu_key; });
  rows.push_back({gpu_key, fraction});
  return options;
}

double rmsRelativeError(const std::vector<double>& simulated, const std::vector<MeasuredTrainingStep>& steps) {
  double sum = 0.0;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const double error = simulated[i] / steps[i].seconds - 1.0;
    sum += error * error;
  }
  return std::sqrt(sum / static_cast<double>(steps.size()));
}

}  // namespace

Expected<TrainingStepFit> fitTrainingRateFraction(const std::vector<MeasuredTrainingStep>& steps,
                                                  const parallelism::SimulationOptions& defaults,
                                                  const Calibration& in_force) {
  return catchInputErrors([&] {
    if (steps.empty()) throwInputError("--training-step", "", "no measured training step to fit");
    TrainingStepFit fit;
    fit.gpu_key = steps.front().experiment.cluster.gpu.key;
    for (const auto& step : steps) {
      if (step.experiment.cluster.gpu.key != fit.gpu_key) {
        throwInputError(step.source, "",
                        fmt::format("runs on {} GPUs, the other steps on {}: one fit is for one kind of GPU",
                                    step.experiment.cluster.gpu.key, fit.gpu_key));
      }
      if (!(std::isfinite(step.seconds) && step.seconds > 0.0)) {
        throwInputError(step.source, "", "the measured step time must be a positive number of seconds");
      }
    }

    // Each step's options as `simulate --calibration` builds them: the defaults, the step's
    // stack, then the calibration (which wins over the stack), then the fraction tried.
    std::vector<parallelism::SimulationOptions> prepared;
    prepared.reserve(steps.size());
    for (const auto& step : steps) {
      parallelism::SimulationOptions options = defaults;
      parallelism::applySoftwareStack(step.experiment, options);
      applyCalibration(in_force, options);
      prepared.push_back(std::move(options));
    }

    // Simulated step times at fraction f (none: each step's fraction in force, the "before"),
    // and g(f) = mean log(simulated / measured).
    auto simulate = [&](std::optional<double> fraction) {
      std::vector<double> seconds;
      seconds.reserve(steps.size());
      for (std::size_t i = 0; i < steps.size(); ++i) {
        const auto& step = steps[i];
        auto result = parallelism::simulateIteration(
            step.experiment, fraction ? withFraction(prepared[i], fit.gpu_key, *fraction) : prepared[i]);
        if (!result.ok()) {
          Error error = result.error();
          if (error.where.empty()) error.where = step.source;
          throw InputError(error);
        }
        seconds.push_back(result.value().iteration_time_s);
      }
      ++fit.simulations;
      return seconds;
    };
    auto meanLogRatio = [&](const std::vector<double>& simulated) {
      double sum = 0.0;
      for (std::size_t i = 0; i < steps.size(); ++i) sum += std::log(simulated[i] / steps[i].seconds);
      return sum / static_cast<double>(steps.size());
    };

    const std::vector<double> before = simulate(std::nullopt);
    fit.rms_relative_error_before = rmsRelativeError(before, steps);

    // Bracket [lo, hi] on x = log f with g(lo) >= 0 >= g(hi).
    double lo = std::log(perf::kMinTrainingRateFraction);
    double hi = std::log(perf::kMaxTrainingRateFraction);
    double g_lo = meanLogRatio(simulate(std::exp(lo)));
    double g_hi = meanLogRatio(simulate(std::exp(hi)));
    if (g_lo < 0.0) {
      throwInputError(steps.front().source, "",
                      fmt::format("the measured steps are slower than the model with the kernels at {} of their rates "
                                  "(simulated / measured {:.3f} there): check the experiments' plans and clusters",
                                  perf::kMinTrainingRateFraction, std::exp(g_lo)));
    }
    if (g_hi > 0.0) {
      throwInputError(
          steps.front().source, "",
          fmt::format("the measured steps are faster than the model with the kernels at {} times their "
                      "rates (simulated / measured {:.3f} there): check the experiments' plans and clusters",
                      perf::kMaxTrainingRateFraction, std::exp(g_hi)));
    }
    // Illinois regula falsi: the secant of the bracket, halving the weight of an end that
    // stays put twice, so that the bracket closes from both sides.
    double x = lo;
    int side = 0;
    while (fit.simulations < kMaxSimulations && hi - lo > kBracketTolerance) {
      x = (lo * g_hi - hi * g_lo) / (g_hi - g_lo);
      const double g = meanLogRatio(simulate(std::exp(x)));
      if (std::abs(g) < kLogTolerance) break;
      if (g > 0.0) {
        lo = x;
        g_lo = g;
        if (side == -1) g_hi /= 2.0;
        side = -1;
      } else {
        hi = x;
        g_hi = g;
        if (side == 1) g_lo /= 2.0;
        side = 1;
      }
    }
    fit.fraction = std::exp(x);

    const std::vector<double> after = simulate(fit.fraction);
    fit.rms_relative_error_after = rmsRelativeError(after, steps);
    for (std::size_t i = 0; i < steps.size(); ++i) {
      fit.steps.push_back({steps[i].source, steps[i].seconds, before[i], after[i]});
    }
    return fit;
  });
}

}  // namespace trainsim::calibrate
