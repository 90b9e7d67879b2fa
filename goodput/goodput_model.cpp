#include "goodput/goodput_model.h"

#include <algorithm>
#include <cmath>

namespace trainsim::goodput {
namespace {

// The chance that fewer than `spares` nodes are under repair when one fails: nodes enter
// repair as hardware failures arrive (rate `rate`) and stay `repair_s`, so the count under
// repair is Poisson with mean rate x repair_s (an M/G/infinity queue).
double spareAvailable(int64_t spares, double rate, double repair_s) {
  if (spares <= 0) return 0.0;
  const double mean = rate * repair_s;
  double term = std::exp(-mean);  // P(0 under repair)
  double sum = term;
  for (int64_t k = 1; k < spares; ++k) {
    term *= mean / static_cast<double>(k);
    sum += term;
    if (sum >= 1.0 || (static_cast<double>(k) > mean && term < 1e-17)) break;
  }
  return std::min(sum, 1.0);
}

// (exp(lambda x) - 1) / lambda: the expected time a restart of x seconds takes when a
// failure can interrupt it (and it starts over); x when lambda is 0.
double interruptible(double x, double lambda) { return lambda > 0.0 ? std::expm1(lambda * x) / lambda : x; }

// The largest exponent the estimate evaluates: beyond it exp overflows a double and the run
// makes no progress in any meaningful sense.
constexpr double kMaxExponent = 700.0;

}  // namespace

RestartSeconds restartSeconds(const GoodputInputs& inputs) {
  const topology::RestartCosts& restart = inputs.restart;
  RestartSeconds seconds;
  seconds.spare_available =
      spareAvailable(inputs.spares.nodes, inputs.rates.hardware, inputs.spares.repair_hours * 3600.0);
  const double replace =
      seconds.spare_available * inputs.spares.swap_s + (1.0 - seconds.spare_available) * restart.reschedule_s;
  const double resume = restart.process_start_s + inputs.checkpoint.load_s + restart.warmup_s;
  seconds.software = restart.detection_s + resume;
  seconds.hardware = seconds.software + replace;
  seconds.planned = inputs.checkpoint.write_s + resume;
  return seconds;
}

double dalyInterval(double delta, double mtbf) {
  if (!std::isfinite(mtbf)) return mtbf;
  if (delta >= 2.0 * mtbf) return mtbf;
  const double ratio = delta / (2.0 * mtbf);
  return std::sqrt(2.0 * delta * mtbf) * (1.0 + std::sqrt(ratio) / 3.0 + ratio / 9.0) - delta;
}

int64_t checkpointIntervalIterations(const GoodputInputs& inputs) {
  const double iterations = std::max(1.0, std::ceil(inputs.useful_s / inputs.iteration_s));
  if (inputs.interval_iterations) return std::clamp<int64_t>(*inputs.interval_iterations, 1, llround(iterations));
  const double lambda = inputs.rates.unplanned();
  if (lambda <= 0.0) return llround(iterations);  // nothing fails: one checkpoint at the end would do
  double tau = dalyInterval(inputs.checkpoint.stall_s, 1.0 / lambda);
  if (inputs.checkpoint.async) tau = std::max(tau, inputs.checkpoint.write_s);
  return std::clamp<int64_t>(llround(tau / inputs.iteration_s), 1, llround(iterations));
}

std::optional<GoodputEstimate> estimateGoodput(const GoodputInputs& inputs) {
  GoodputEstimate estimate;
  estimate.interval_chosen = !inputs.interval_iterations;
  estimate.interval_iterations = checkpointIntervalIterations(inputs);
  estimate.interval_s = static_cast<double>(estimate.interval_iterations) * inputs.iteration_s;
  estimate.restart = restartSeconds(inputs);
  const double tau = estimate.interval_s;
  const CheckpointCost& checkpoint = inputs.checkpoint;
  // An asynchronous save waits for the previous one to be durable.
  const double stall = checkpoint.stall_s + (checkpoint.async ? std::max(0.0, checkpoint.write_s - tau) : 0.0);
  const double lambda = inputs.rates.unplanned();
  const double share = inputs.rates.hardwareShare();
  const double restart_eff = share * interruptible(estimate.restart.hardware, lambda) +
                             (1.0 - share) * interruptible(estimate.restart.software, lambda);
  const double failures_per_restart = share * std::exp(lambda * estimate.restart.hardware) +
                                      (1.0 - share) * std::exp(lambda * estimate.restart.software);
  const double segment = tau + stall;
  if (lambda * segment > kMaxExponent || lambda * estimate.restart.hardware > kMaxExponent) return std::nullopt;
  const double failed_attempts = std::expm1(lambda * segment);  // per segment, expected
  const double async_lag = checkpoint.async ? checkpoint.write_s : 0.0;
  const double segment_wall = lambda > 0.0 ? failed_attempts * (1.0 / lambda + restart_eff + async_lag) : segment;
  const double segments = inputs.useful_s / tau;
  // The run ends with its last iteration, not with a checkpoint.
  estimate.checkpoints = std::max(0.0, std::ceil(segments) - 1.0);
  const double restarting = segments * failed_attempts * restart_eff;  // wall time in unplanned restarts
  const double unplanned_wall = segments * segment_wall - (segments - estimate.checkpoints) * stall;
  // Planned stops come while the job runs (not while it restarts), each costing R_planned.
  estimate.planned = inputs.rates.planned * (unplanned_wall - restarting);
  estimate.wall_s = unplanned_wall + estimate.planned * estimate.restart.planned;
  if (!std::isfinite(estimate.wall_s)) return std::nullopt;
  estimate.goodput = inputs.useful_s / estimate.wall_s;
  estimate.unplanned = segments * failed_attempts * failures_per_restart;
  estimate.lost_checkpoint_s = estimate.checkpoints * stall;
  estimate.lost_restart_s = restarting + estimate.planned * estimate.restart.planned;
  estimate.lost_rework_s =
      std::max(0.0, estimate.wall_s - inputs.useful_s - estimate.lost_checkpoint_s - estimate.lost_restart_s);
  return estimate;
}

}  // namespace trainsim::goodput
