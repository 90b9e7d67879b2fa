// Published nccl-tests all_reduce measurements that the collective model is checked against
// (`trainsim validate collectives`), read with their citations from
// <config dir>/validation/collectives.yaml (configs/validation/README.md describes the schema).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "base/config_paths.h"
#include "base/expected.h"

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
  std::vector<MeasuredPoint> points;
  // The system's published small-message latency (us) where the curve itself starts
  // above the latency-bound sizes; kNotPublished otherwise.
  double small_message_latency_us = kNotPublished;
  int64_t small_message_bytes = 0;
};

// The file's path: <config dir>/validation/collectives.yaml.
[[nodiscard]] std::string allReduceCurvesPath(const ConfigPaths& paths);

// All curves of the suite, in the file's order. Errors (file:line:col and key) for an unknown
// or missing key, a value of the wrong type, a curve without points or an id given twice.
[[nodiscard]] Expected<std::vector<MeasuredCurve>> loadAllReduceCurves(const ConfigPaths& paths);

}  // namespace trainsim::validate
