// Published nccl-tests / rccl-tests measurements that the collective model is checked against
// (`trainsim validate collectives`), read with their citations from
// <config dir>/validation/collectives.yaml (configs/validation/README.md describes the schema).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "base/config_node.h"
#include "base/config_paths.h"
#include "base/expected.h"
#include "perf/collective.h"

namespace trainsim::validation {

inline constexpr double kNotPublished = std::numeric_limits<double>::quiet_NaN();

struct MeasuredPoint {
  int64_t bytes;
  double time_us;  // kNotPublished when the source gives only bandwidth
  double busbw_GBps;
};

struct MeasuredCurve {
  std::string id;
  std::string where;  // file:line:col of the curve's `gpus`, for a run the cluster cannot place
  std::string title;
  // The system measured (machine type and fabric); the accuracy goals are per system.
  std::string system;
  std::string source;
  perf::CollectiveOp op = perf::CollectiveOp::kAllReduce;
  std::string cluster;  // preset in configs/clusters/ that models the system
  // Settings of the run that differ from the preset (e.g. NVLS disabled), applied as --set.
  std::vector<Override> cluster_settings;
  int64_t gpus = 0;           // ranks of the run
  int64_t gpus_per_node = 0;  // spread as this many per node; 0: the first `gpus` in rank order
  // The algorithm the run forced (NCCL_ALGO); none: NCCL's tuner chose.
  std::optional<perf::CollectiveAlgorithm> algorithm;
  // The NCCL release the run used (NCCL_VERSION_CODE), where its source says: the curve is
  // predicted with that release's tuner (communication.nccl_version); none: the parameters'.
  std::optional<double> nccl_version;
  bool accuracy_target = false;  // counts towards the accuracy goals, else a reference
  std::string notes;             // why a curve is a reference only, caveats of the source
  std::vector<MeasuredPoint> points;
  // The system's published small-message latency (us) where the curve itself starts
  // above the latency-bound sizes; kNotPublished otherwise.
  double small_message_latency_us = kNotPublished;
  int64_t small_message_bytes = 0;
};

// The file's path: <config dir>/validation/collectives.yaml.
[[nodiscard]] std::string collectiveCurvesPath(const ConfigPaths& paths);

// All curves of the suite, in the file's order. Errors (file:line:col and key) for an unknown
// or missing key, a value of the wrong type, a curve without points or an id given twice.
[[nodiscard]] Expected<std::vector<MeasuredCurve>> loadCollectiveCurves(const ConfigPaths& paths);

}  // namespace trainsim::validation
