// Predicted vs published all_reduce curves: the accuracy table of the collective model.
#pragma once

#include <vector>

#include "base/config_paths.h"
#include "base/expected.h"
#include "sim/communication_parameters.h"
#include "validate/collective_measurements.h"

namespace trainsim::validate {

struct PointComparison {
  int64_t bytes = 0;
  double measured_busbw_GBps = 0.0;
  double predicted_busbw_GBps = 0.0;
  double measured_time_us = 0.0;  // published, or derived from the bus bandwidth
  double predicted_time_us = 0.0;
  std::string algorithm;
  std::string protocol;
};

struct CurveAccuracy {
  MeasuredCurve curve;
  std::vector<PointComparison> points;
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

[[nodiscard]] Expected<std::vector<CurveAccuracy>> compareAllReduceCurves(
    const ConfigPaths& paths, const sim::CommunicationParameters& parameters);

}  // namespace trainsim::validate
