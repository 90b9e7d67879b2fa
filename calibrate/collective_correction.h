// Measured time corrections of one (operation, group layout): what the calibrated simulator
// still misses on a curve that was measured, as the factor measured / simulated per size.
// The communication parameters carry a calibration to groups nobody measured; on a group
// that was measured, `trainsim collective --calibration` also multiplies the simulated time
// by this factor (interpolated linearly in log size and log factor between the measured
// sizes, held at the end values outside them), so that it reproduces the measurement
// (NCCL's own protocol and channel switches fall at sizes no smooth model follows exactly).
// Training simulations (`simulate`, `sweep`) use the parameters only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "perf/collective.h"

namespace trainsim::calibrate {

struct CorrectionPoint {
  double bytes = 0.0;
  double factor = 1.0;  // measured time / simulated time with the calibrated parameters
};

struct CollectiveCorrection {
  perf::CollectiveOp op = perf::CollectiveOp::kAllReduce;
  int64_t group_size = 0;
  int64_t nodes = 0;
  int64_t gpus_per_node = 0;            // the most on one node
  std::vector<CorrectionPoint> points;  // ascending bytes, distinct
};

// The factor for `bytes` of `op` on a group of `group_size` GPUs over `nodes` nodes with at
// most `gpus_per_node` on one, or nothing when no correction covers that layout.
[[nodiscard]] std::optional<double> correctionFactor(const std::vector<CollectiveCorrection>& corrections,
                                                     perf::CollectiveOp op, int64_t group_size, int64_t nodes,
                                                     int64_t gpus_per_node, double bytes);

}  // namespace trainsim::calibrate
