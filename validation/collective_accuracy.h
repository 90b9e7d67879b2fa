// Predicted vs published collective curves: the accuracy table of the collective model.
#pragma once

#include <string>
#include <vector>

#include "base/config_paths.h"
#include "base/expected.h"
#include "perf/communication_parameters.h"
#include "validation/collective_measurements.h"

namespace trainsim::validation {

// The sizes the accuracy goals score: bus bandwidth from 1 MiB up (docs/collectives.md).
inline constexpr int64_t kScoredMinBytes = int64_t{1} << 20;

struct PointComparison {
  int64_t bytes = 0;
  double measured_busbw_GBps = 0.0;  // as published
  double predicted_busbw_GBps = 0.0;
  double measured_time_us = 0.0;  // published, or derived from the bus bandwidth
  double predicted_time_us = 0.0;
  // predicted / measured bus bandwidth - 1, from the times where the source publishes them
  // (exact where the printed bandwidth is rounded to 0.01 GB/s).
  double error = 0.0;
  std::string algorithm;
  std::string protocol;
};

struct CurveAccuracy {
  MeasuredCurve curve;
  std::vector<PointComparison> points;
  // Bus bandwidth error over the sizes >= kScoredMinBytes: mean absolute and mean signed.
  int scored_points = 0;
  double mape = 0.0;
  double bias = 0.0;
  // Mean signed error of bus bandwidth over the sizes >= 256 MiB.
  double large_message_error = 0.0;
  // Smallest size reaching half of the curve's peak bus bandwidth (log-interpolated).
  double measured_half_peak_bytes = 0.0;
  double predicted_half_peak_bytes = 0.0;
  // Latency of the smallest message.
  int64_t small_message_bytes = 0;
  double measured_small_latency_us = 0.0;
  double predicted_small_latency_us = 0.0;
};

// The accuracy-target curves of one system together.
struct SystemAccuracy {
  std::string system;
  std::vector<std::string> curves;  // ids
  int scored_points = 0;
  double mape = 0.0;  // over every scored point of its curves
  double bias = 0.0;
  // Time error at 1 MiB (predicted / measured - 1), over the curves with a 1 MiB point.
  std::vector<double> one_mib_latency_errors;
};

// One curve of the suite.
[[nodiscard]] Expected<CurveAccuracy> compareCollectiveCurve(const MeasuredCurve& curve, const ConfigPaths& paths,
                                                             const perf::CommunicationParameters& parameters);

[[nodiscard]] Expected<std::vector<CurveAccuracy>> compareCollectiveCurves(
    const ConfigPaths& paths, const perf::CommunicationParameters& parameters);

// Per system, in order of first appearance; reference curves are left out.
[[nodiscard]] std::vector<SystemAccuracy> summarizeSystems(const std::vector<CurveAccuracy>& curves);

}  // namespace trainsim::validation
