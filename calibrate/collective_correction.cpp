#include "calibrate/collective_correction.h"

#include <cmath>

namespace trainsim::calibrate {

std::optional<double> correctionFactor(const std::vector<CollectiveCorrection>& corrections, perf::CollectiveOp op,
                                       int64_t group_size, int64_t nodes, int64_t gpus_per_node, double bytes) {
  for (const auto& correction : corrections) {
    if (correction.op != op || correction.group_size != group_size || correction.nodes != nodes ||
        correction.gpus_per_node != gpus_per_node || correction.points.empty()) {
      continue;
    }
    const auto& points = correction.points;
    if (bytes <= points.front().bytes) return points.front().factor;
    if (bytes >= points.back().bytes) return points.back().factor;
    for (std::size_t i = 1; i < points.size(); ++i) {
      if (bytes <= points[i].bytes) {
        const double t = std::log(bytes / points[i - 1].bytes) / std::log(points[i].bytes / points[i - 1].bytes);
        return std::exp((1.0 - t) * std::log(points[i - 1].factor) + t * std::log(points[i].factor));
      }
    }
  }
  return std::nullopt;
}

}  // namespace trainsim::calibrate
