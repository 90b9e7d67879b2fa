// Published nccl-tests all_reduce measurements, copied with their citations, that the
// collective model is checked against (`trainsim validate collectives`).
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

namespace trainsim::validate {

inline constexpr double kNotPublished = std::numeric_limits<double>::quiet_NaN();

struct MeasuredPoint {
  int64_t bytes;
  double time_us;  // kNotPublished when the source gives only bandwidth
  double busbw_GBps;
};

struct MeasuredCurve {
  std::string id;
  std::string title;
  std::string source;
  std::string cluster;   // preset in configs/clusters/ that models the system
  int64_t gpus;          // the first N GPUs in rank order
  bool accuracy_target;  // one of the curves the project's accuracy goals name
  std::span<const MeasuredPoint> points;
  // The system's published small-message latency (us) where the curve itself starts
  // above the latency-bound sizes; kNotPublished otherwise.
  double small_message_latency_us = kNotPublished;
  int64_t small_message_bytes = 0;
};

// All curves of the suite, in a fixed order.
[[nodiscard]] const std::vector<MeasuredCurve>& measuredAllReduceCurves();

}  // namespace trainsim::validate
