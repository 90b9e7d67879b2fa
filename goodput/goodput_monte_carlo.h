// The goodput model's process drawn at random instead of taken in expectation: failure by
// failure, with the spare pool's state, failures during restarts and asynchronous
// checkpoints that are not yet durable. Gives the spread of the time to train (p50, p90), and
// checks the analytic estimate (goodput_model.h) where its approximations are first order.
// Deterministic: the same inputs, draws and seed give the same figures on every platform
// (mt19937_64 with its own uniform-to-exponential mapping, one generator per draw).
#pragma once

#include <cstdint>

#include "goodput/goodput_model.h"

namespace trainsim::goodput {

struct MonteCarloSummary {
  int64_t draws = 0;
  uint64_t seed = 0;
  double wall_mean_s = 0.0;
  double wall_p50_s = 0.0;
  double wall_p90_s = 0.0;
  double unplanned_mean = 0.0;
  double unplanned_p50 = 0.0;
  double unplanned_p90 = 0.0;
  double planned_mean = 0.0;
  double goodput_mean = 0.0;  // useful_s / wall, averaged over the draws
};

// `draws` runs of the process with `estimate`'s checkpoint interval and restart costs.
// Percentiles interpolate linearly between order statistics.
[[nodiscard]] MonteCarloSummary simulateGoodput(const GoodputInputs& inputs, const GoodputEstimate& estimate,
                                                int64_t draws, uint64_t seed);

}  // namespace trainsim::goodput
