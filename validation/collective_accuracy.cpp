#include "validation/collective_accuracy.h"

#include <algorithm>
#include <cmath>

#include "perf/collective_simulation.h"
#include "topology/cluster.h"
#include "topology/cluster_loader.h"
#include "topology/rank_placement.h"

namespace trainsim::validation {
namespace {

// First size where bus bandwidth reaches half of the curve's peak, interpolated on log(size).
double halfPeakBytes(const std::vector<PointComparison>& points, bool predicted) {
  auto busbw = [&](const PointComparison& p) { return predicted ? p.predicted_busbw_GBps : p.measured_busbw_GBps; };
  double peak = 0.0;
  for (const auto& point : points) peak = std::max(peak, busbw(point));
  const double half = peak / 2.0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (busbw(points[i]) < half) continue;
    if (i == 0) return static_cast<double>(points[0].bytes);
    const double low = busbw(points[i - 1]);
    const double fraction = (half - low) / (busbw(points[i]) - low);
    const double log_low = std::log(static_cast<double>(points[i - 1].bytes));
    const double log_high = std::log(static_cast<double>(points[i].bytes));
    return std::exp(log_low + fraction * (log_high - log_low));
  }
  return 0.0;
}

// The run's ranks on the curve's cluster; a curve the cluster cannot hold is an input error.
std::vector<int64_t> curveRanks(const MeasuredCurve& curve, const topology::Cluster& cluster) {
  topology::RankPlacement placement = topology::placeRanks(cluster, curve.gpus, curve.gpus_per_node);
  if (!placement.problem.empty()) {
    throwInputError(curve.where, "curves." + curve.id + ".gpus", "cluster " + curve.cluster + ": " + placement.problem);
  }
  return std::move(placement.ranks);
}

CurveAccuracy compareCurve(const MeasuredCurve& curve, const ConfigPaths& paths,
                           const perf::CommunicationParameters& parameters) {
  const auto spec = valueOrThrow(topology::loadClusterFile(curve.cluster, paths, curve.cluster_settings));
  const auto cluster = valueOrThrow(topology::Cluster::build(spec));
  perf::CommunicationParameters release = parameters;
  if (curve.nccl_version) release.nccl_version = *curve.nccl_version;
  perf::CollectiveSimulator simulator(cluster, release);
  const std::vector<int64_t> ranks = curveRanks(curve, cluster);
  const double factor = perf::busBandwidthFactor(curve.op, curve.gpus);
  auto predict = [&](int64_t bytes) {
    return valueOrThrow(simulator.simulate(
        perf::CollectiveRequest{curve.op, ranks, static_cast<double>(bytes), curve.algorithm, std::nullopt}));
  };

  CurveAccuracy accuracy;
  accuracy.curve = curve;
  double large_sum = 0.0;
  int large_count = 0;
  double absolute_sum = 0.0;
  double signed_sum = 0.0;
  for (const MeasuredPoint& point : curve.points) {
    const perf::CollectiveResult result = predict(point.bytes);
    PointComparison row;
    row.bytes = point.bytes;
    row.measured_busbw_GBps = point.busbw_GBps;
    row.predicted_busbw_GBps = result.busbw_Bps / 1e9;
    const bool timed = !std::isnan(point.time_us);
    row.measured_time_us =
        timed ? point.time_us : static_cast<double>(point.bytes) * factor / (point.busbw_GBps * 1e9) * 1e6;
    row.predicted_time_us = result.time_s * 1e6;
    row.error = timed ? row.measured_time_us / row.predicted_time_us - 1.0
                      : row.predicted_busbw_GBps / row.measured_busbw_GBps - 1.0;
    row.algorithm = std::string(perf::algorithmName(result.choice.algorithm));
    row.protocol = std::string(perf::protocolName(result.choice.protocol));
    if (point.bytes >= kScoredMinBytes) {
      absolute_sum += std::fabs(row.error);
      signed_sum += row.error;
      ++accuracy.scored_points;
    }
    if (point.bytes >= (int64_t{256} << 20)) {
      large_sum += row.error;
      ++large_count;
    }
    accuracy.points.push_back(row);
  }
  if (accuracy.scored_points > 0) {
    accuracy.mape = absolute_sum / accuracy.scored_points;
    accuracy.bias = signed_sum / accuracy.scored_points;
  }
  accuracy.large_message_error = large_count > 0 ? large_sum / large_count : 0.0;
  accuracy.measured_half_peak_bytes = halfPeakBytes(accuracy.points, false);
  accuracy.predicted_half_peak_bytes = halfPeakBytes(accuracy.points, true);
  if (!std::isnan(curve.small_message_latency_us)) {
    accuracy.small_message_bytes = curve.small_message_bytes;
    accuracy.measured_small_latency_us = curve.small_message_latency_us;
    accuracy.predicted_small_latency_us = predict(curve.small_message_bytes).time_s * 1e6;
  } else {
    accuracy.small_message_bytes = accuracy.points.front().bytes;
    accuracy.measured_small_latency_us = accuracy.points.front().measured_time_us;
    accuracy.predicted_small_latency_us = accuracy.points.front().predicted_time_us;
  }
  return accuracy;
}

}  // namespace

Expected<CurveAccuracy> compareCollectiveCurve(const MeasuredCurve& curve, const ConfigPaths& paths,
                                               const perf::CommunicationParameters& parameters) {
  return catchInputErrors([&] { return compareCurve(curve, paths, parameters); });
}

Expected<std::vector<CurveAccuracy>> compareCollectiveCurves(const ConfigPaths& paths,
                                                             const perf::CommunicationParameters& parameters) {
  return catchInputErrors([&]() -> std::vector<CurveAccuracy> {
    std::vector<CurveAccuracy> results;
    for (const MeasuredCurve& curve : valueOrThrow(loadCollectiveCurves(paths))) {
      results.push_back(compareCurve(curve, paths, parameters));
    }
    return results;
  });
}

std::vector<SystemAccuracy> summarizeSystems(const std::vector<CurveAccuracy>& curves) {
  std::vector<SystemAccuracy> systems;
  for (const CurveAccuracy& accuracy : curves) {
    if (!accuracy.curve.accuracy_target) continue;
    auto system = std::find_if(systems.begin(), systems.end(),
                               [&](const SystemAccuracy& found) { return found.system == accuracy.curve.system; });
    if (system == systems.end()) {
      SystemAccuracy added;
      added.system = accuracy.curve.system;
      system = systems.insert(systems.end(), std::move(added));
    }
    system->curves.push_back(accuracy.curve.id);
    // Sums of the curves' figures weighted by their scored points, divided below.
    system->scored_points += accuracy.scored_points;
    system->mape += accuracy.mape * accuracy.scored_points;
    system->bias += accuracy.bias * accuracy.scored_points;
    for (const PointComparison& point : accuracy.points) {
      if (point.bytes == kScoredMinBytes) {
        system->one_mib_latency_errors.push_back(point.predicted_time_us / point.measured_time_us - 1.0);
      }
    }
  }
  for (SystemAccuracy& system : systems) {
    if (system.scored_points == 0) continue;
    system.mape /= system.scored_points;
    system.bias /= system.scored_points;
  }
  return systems;
}

}  // namespace trainsim::validation
