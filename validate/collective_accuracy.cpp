#include "validate/collective_accuracy.h"

#include <cmath>

#include "sim/collective_simulation.h"
#include "topology/cluster.h"
#include "topology/cluster_loader.h"

namespace trainsim::validate {
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

}  // namespace

Expected<std::vector<CurveAccuracy>> compareAllReduceCurves(const ConfigPaths& paths,
                                                            const sim::CommunicationParameters& parameters) {
  return catchInputErrors([&]() -> std::vector<CurveAccuracy> {
    std::vector<CurveAccuracy> results;
    for (const MeasuredCurve& curve : valueOrThrow(loadAllReduceCurves(paths))) {
      const auto spec = valueOrThrow(topology::loadClusterFile(curve.cluster, paths));
      const auto cluster = valueOrThrow(topology::Cluster::build(spec));
      sim::CollectiveSimulator simulator(cluster, parameters);
      std::vector<int64_t> ranks;
      for (int64_t r = 0; r < curve.gpus; ++r) ranks.push_back(r);
      const double factor = sim::busBandwidthFactor(sim::CollectiveOp::kAllReduce, curve.gpus);

      CurveAccuracy accuracy;
      accuracy.curve = curve;
      auto predict = [&](int64_t bytes) {
        return valueOrThrow(simulator.simulate(
            sim::CollectiveRequest{sim::CollectiveOp::kAllReduce, ranks, static_cast<double>(bytes), {}, {}}));
      };
      double large_sum = 0.0;
      int large_count = 0;
      for (const MeasuredPoint& point : curve.points) {
        const sim::CollectiveResult result = predict(point.bytes);
        PointComparison row;
        row.bytes = point.bytes;
        row.measured_busbw_GBps = point.busbw_GBps;
        row.predicted_busbw_GBps = result.busbw_Bps / 1e9;
        row.measured_time_us = std::isnan(point.time_us)
                                   ? static_cast<double>(point.bytes) * factor / (point.busbw_GBps * 1e9) * 1e6
                                   : point.time_us;
        row.predicted_time_us = result.time_s * 1e6;
        row.algorithm = std::string(sim::algorithmName(result.choice.algorithm));
        row.protocol = std::string(sim::protocolName(result.choice.protocol));
        if (point.bytes >= (int64_t{256} << 20)) {
          large_sum += row.predicted_busbw_GBps / row.measured_busbw_GBps - 1.0;
          ++large_count;
        }
        accuracy.points.push_back(row);
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
      results.push_back(std::move(accuracy));
    }
    return results;
  });
}

}  // namespace trainsim::validate
