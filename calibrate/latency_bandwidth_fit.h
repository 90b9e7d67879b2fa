// The per-curve summary fit `trainsim calibrate` prints and records for every measured
// (operation, group layout): the alpha-beta model t(S) = alpha + S / beta of one call of
// S bytes (nccl-tests' "size"), alpha the latency, beta the asymptotic algorithm bandwidth
// (bus bandwidth = beta x nccl-tests' bus factor of the op).
//
// Fitted by least squares in relative error, min sum w_i ((alpha + S_i / beta) / t_i - 1)^2,
// which is linear in (alpha, 1/beta) and weighs a 30 us point like a 30 ms one; made robust
// by iteratively reweighted least squares with Huber weights (k = 1.345 robust standard
// deviations, the scale re-estimated each round as 1.4826 x the median absolute residual),
// so one noisy size (a protocol switch, a congested run) bends the fit little. alpha and
// 1/beta are kept >= 0 (a negative one is refitted as 0).
//
// Quality: R^2 of log t (1 - SS_res / SS_tot of log predicted vs log measured time: times
// span several decades, so R^2 of raw times would be ~1 whatever the fit), the RMS and the
// largest relative residual, and how many points the robust weights set aside (weight < 0.5).
#pragma once

#include <cstdint>
#include <vector>

#include "base/expected.h"
#include "calibrate/measured_collective.h"

namespace trainsim::calibrate {

struct LatencyBandwidthFit {
  double latency_us = 0.0;          // alpha
  double algbw_GBps = 0.0;          // beta (10^9 B/s)
  double busbw_GBps = 0.0;          // beta x bus factor
  double r_squared_log_time = 0.0;  // see above
  double rms_relative_residual = 0.0;
  double max_relative_residual = 0.0;  // largest |t_fit / t - 1|
  int points = 0;
  int downweighted = 0;  // robust weight < 0.5 at the end
  int iterations = 0;    // IRLS rounds
};

// Needs at least two samples with distinct sizes. `bus_factor` = nccl-tests' factor of the op.
[[nodiscard]] Expected<LatencyBandwidthFit> fitLatencyBandwidth(const std::vector<CollectiveSample>& samples,
                                                                double bus_factor);

}  // namespace trainsim::calibrate
