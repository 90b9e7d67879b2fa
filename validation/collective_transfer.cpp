#include "validation/collective_transfer.h"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <utility>

#include "topology/cluster.h"
#include "topology/cluster_loader.h"
#include "topology/rank_placement.h"
#include "validation/collective_accuracy.h"

namespace trainsim::validation {
namespace {

// The curves of one system run on one cluster with the same settings.
struct SystemGroup {
  std::string system;
  std::vector<const MeasuredCurve*> curves;
};

std::string groupKey(const MeasuredCurve& curve) {
  std::string key = curve.system + "\n" + curve.cluster;
  for (const Override& setting : curve.cluster_settings) key += "\n" + setting.key_path + "=" + setting.value;
  return key;
}

// The curve as `trainsim calibrate` reads a measured run: its ranks per cluster node and
// the time of each size (published, or derived from the bus bandwidth).
calibrate::MeasuredCollective measuredRun(const MeasuredCurve& curve, const topology::Cluster& cluster) {
  topology::RankPlacement placement = topology::placeRanks(cluster, curve.gpus, curve.gpus_per_node);
  std::map<int32_t, int64_t> per_node;
  for (int64_t rank : placement.ranks) ++per_node[cluster.device(cluster.accelerator(rank)).node];
  calibrate::MeasuredCollective run;
  run.source = curve.id;
  run.where = curve.id;
  run.op = curve.op;
  for (const auto& [node, count] : per_node) run.ranks_per_node.push_back(count);
  run.layout = calibrate::derivedLayoutName(run.nodes(), run.maxPerNode());
  const double factor = perf::busBandwidthFactor(curve.op, curve.gpus);
  for (const MeasuredPoint& point : curve.points) {
    const auto bytes = static_cast<double>(point.bytes);
    const double time_us = std::isnan(point.time_us) ? bytes * factor / (point.busbw_GBps * 1e9) * 1e6 : point.time_us;
    run.samples.push_back({bytes, time_us});
  }
  return run;
}

// Bus bandwidth MAPE and bias over the scored sizes of `curves` with `parameters`: the
// curves' own figures, weighted by their scored points.
CurveSetError curveSetError(const std::vector<const MeasuredCurve*>& curves, const ConfigPaths& paths,
                            const perf::CommunicationParameters& parameters) {
  CurveSetError error;
  for (const MeasuredCurve* curve : curves) {
    const CurveAccuracy accuracy = valueOrThrow(compareCollectiveCurve(*curve, paths, parameters));
    error.points += accuracy.scored_points;
    error.mape += accuracy.mape * accuracy.scored_points;
    error.bias += accuracy.bias * accuracy.scored_points;
  }
  if (error.points > 0) {
    error.mape /= error.points;
    error.bias /= error.points;
  }
  return error;
}

}  // namespace

Expected<std::vector<ScaleTransfer>> collectiveScaleTransfer(const ConfigPaths& paths,
                                                             const perf::CommunicationParameters& parameters) {
  return catchInputErrors([&]() -> std::vector<ScaleTransfer> {
    const std::vector<MeasuredCurve> curves = valueOrThrow(loadCollectiveCurves(paths));
    std::vector<std::string> order;
    std::map<std::string, SystemGroup> groups;
    for (const MeasuredCurve& curve : curves) {
      if (!curve.accuracy_target) continue;
      const std::string key = groupKey(curve);
      if (!groups.contains(key)) order.push_back(key);
      groups[key].system = curve.system;
      groups[key].curves.push_back(&curve);
    }
    std::vector<ScaleTransfer> results;
    for (const std::string& key : order) {
      const SystemGroup& group = groups.at(key);
      const MeasuredCurve& first = *group.curves.front();
      const auto spec = valueOrThrow(topology::loadClusterFile(first.cluster, paths, first.cluster_settings));
      const auto cluster = valueOrThrow(topology::Cluster::build(spec));
      std::vector<calibrate::MeasuredCollective> small_runs;
      std::vector<const MeasuredCurve*> small;
      std::vector<const MeasuredCurve*> large;
      ScaleTransfer transfer;
      transfer.system = group.system;
      for (const MeasuredCurve* curve : group.curves) {
        calibrate::MeasuredCollective run = measuredRun(*curve, cluster);
        if (run.nodes() <= kTransferFitMaxNodes) {
          small_runs.push_back(std::move(run));
          small.push_back(curve);
          transfer.fitted_curves.push_back(curve->id);
        } else {
          large.push_back(curve);
          transfer.held_out_curves.push_back(curve->id);
        }
      }
      if (small_runs.empty()) continue;
      transfer.fitted_preset = curveSetError(small, paths, parameters);
      transfer.held_out_preset = curveSetError(large, paths, parameters);
      // A fit needs more scored sizes than the parameters it fits.
      const std::size_t unknowns = calibrate::constrainedParameters(cluster, small_runs).size();
      if (static_cast<std::size_t>(transfer.fitted_preset.points) <= unknowns) {
        transfer.not_calibrated = fmt::format("{} published size(s) of at least 1 MiB for {} parameters",
                                              transfer.fitted_preset.points, unknowns);
      } else {
        calibrate::CommunicationFitOptions options;
        options.min_bytes = static_cast<double>(kScoredMinBytes);
        // The fit runs the release the fitted runs name (the first that names one), as
        // `trainsim calibrate` does; each curve is then scored at its own.
        perf::CommunicationParameters start = parameters;
        for (const MeasuredCurve* curve : small) {
          if (curve->nccl_version) {
            start.nccl_version = *curve->nccl_version;
            break;
          }
        }
        const auto fit = calibrate::fitCommunicationParameters(cluster, small_runs, start, options);
        if (fit.ok()) {
          transfer.values = fit->values;
          transfer.fitted_calibrated = curveSetError(small, paths, fit->parameters);
          transfer.held_out_calibrated = curveSetError(large, paths, fit->parameters);
        } else {
          transfer.not_calibrated = fit.error().message;
        }
      }
      results.push_back(std::move(transfer));
    }
    return results;
  });
}

}  // namespace trainsim::validation
