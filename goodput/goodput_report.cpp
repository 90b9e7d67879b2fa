#include "goodput/goodput_report.h"

#include <algorithm>
#include <cmath>

#include "goodput/stragglers.h"

namespace trainsim::goodput {

std::optional<GoodputInputs> goodputInputs(const parallelism::Experiment& experiment,
                                           const topology::ReliabilitySpec& reliability) {
  if (!experiment.training.tokens) return std::nullopt;
  GoodputInputs inputs;
  const JobDevices devices = jobDevices(experiment);
  inputs.rates = jobFailureRates(reliability.failures, devices);
  inputs.checkpoint = checkpointCost(experiment, devices, reliability.storage);
  inputs.restart = reliability.restart;
  inputs.spares = reliability.spares;
  inputs.interval_iterations = experiment.training.checkpoint.interval_iterations;
  return inputs;
}

GoodputInputs withIterationTime(GoodputInputs inputs, const parallelism::Experiment& experiment,
                                double iteration_time_s) {
  const auto& training = experiment.training;
  const double iterations = *training.tokens / static_cast<double>(training.tokensPerIteration());
  inputs.useful_s = iterations * iteration_time_s;
  inputs.iteration_s = iteration_time_s;
  if (training.checkpoint.interval_s) {
    inputs.interval_iterations = std::max<int64_t>(1, llround(*training.checkpoint.interval_s / iteration_time_s));
  }
  return inputs;
}

std::optional<GoodputReport> goodputAt(const parallelism::Experiment& experiment,
                                       const topology::ReliabilitySpec& reliability, double iteration_time_s,
                                       const GoodputOptions& options) {
  const std::optional<GoodputInputs> base = goodputInputs(experiment, reliability);
  if (!base) return std::nullopt;
  const GoodputInputs inputs = withIterationTime(*base, experiment, iteration_time_s);
  GoodputReport report;
  report.devices = jobDevices(experiment);
  report.rates = inputs.rates;
  report.checkpoint = inputs.checkpoint;
  report.iteration_time_s = iteration_time_s;
  report.useful_s = inputs.useful_s;
  report.estimate = estimateGoodput(inputs);
  if (!report.estimate) return report;
  report.time_to_train_s = report.estimate->wall_s;
  report.gpu_hours = report.estimate->wall_s * static_cast<double>(report.devices.gpus) / 3600.0;
  if (experiment.cluster.price_per_gpu_hour)
    report.cost_usd = *report.gpu_hours * *experiment.cluster.price_per_gpu_hour;
  if (options.draws > 0) report.monte_carlo = simulateGoodput(inputs, *report.estimate, options.draws, options.seed);
  return report;
}

Expected<std::optional<GoodputReport>> goodputOf(const parallelism::Experiment& experiment,
                                                 const topology::ReliabilitySpec& reliability,
                                                 const parallelism::IterationResult& result,
                                                 const parallelism::SimulationOptions& simulation,
                                                 const GoodputOptions& options) {
  if (!experiment.training.tokens) return std::optional<GoodputReport>();
  const topology::Stragglers& stragglers = reliability.stragglers;
  if (!options.stragglers || stragglers.fraction <= 0.0 || stragglers.slowdown <= 1.0) {
    return goodputAt(experiment, reliability, result.iteration_time_s, options);
  }
  StragglerDraw draw = drawStragglers(experiment.plan.gpus, stragglers, options.seed);
  double iteration_time_s = result.iteration_time_s;
  if (draw.slow_gpus > 0) {
    parallelism::SimulationOptions slowed = simulation;
    slowed.trace = nullptr;
    slowed.iteration.symmetric = false;
    slowed.iteration.rank_compute_scale = std::move(draw.rank_compute_scale);
    auto simulated = parallelism::simulateIteration(experiment, slowed);
    if (!simulated) return simulated.error();
    iteration_time_s = simulated->iteration_time_s;
  }
  std::optional<GoodputReport> report = goodputAt(experiment, reliability, iteration_time_s, options);
  if (report) report->stragglers = StragglerEffect{draw.slow_gpus, iteration_time_s};
  return report;
}

}  // namespace trainsim::goodput
