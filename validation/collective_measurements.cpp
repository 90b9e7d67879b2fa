#include "validation/collective_measurements.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <filesystem>
#include <set>

#include "calibrate/nccl_version.h"

namespace trainsim::validation {
namespace {

MeasuredPoint readPoint(const ConfigNode& node) {
  node.allowKeys({"bytes", "time_us", "busbw_GBps"});
  MeasuredPoint point{};
  point.bytes = node.child("bytes").asPositiveInteger();
  const ConfigNode time = node.child("time_us");
  point.time_us = time.yaml().IsNull() ? kNotPublished : time.asPositiveNumber();
  // Bandwidth printed as 0.00 at small sizes is kept; the time then carries the measurement.
  const ConfigNode busbw = node.child("busbw_GBps");
  point.busbw_GBps = std::isnan(point.time_us) ? busbw.asPositiveNumber() : busbw.asNonNegativeNumber();
  return point;
}

// `cluster_set: {key.path: value}`: the run's settings over the preset, applied as --set is.
std::vector<Override> readClusterSettings(const ConfigNode& node) {
  std::vector<Override> settings;
  for (const auto& [key, value] : node.entries()) {
    if (!value.isScalar()) value.failExpected("a scalar value");
    settings.push_back(Override{key, value.asString(), value.where() + " cluster_set." + key});
  }
  return settings;
}

MeasuredCurve readCurve(const ConfigNode& node) {
  node.allowKeys({"id", "title", "system", "source", "op", "cluster", "cluster_set", "gpus", "gpus_per_node",
                  "algorithm", "nccl_version", "accuracy_target", "notes", "small_message_latency_us",
                  "small_message_bytes", "points"});
  MeasuredCurve curve{};
  curve.id = node.child("id").asString();
  curve.title = node.child("title").asString();
  curve.system = node.child("system").asString();
  curve.source = node.child("source").asString();
  const ConfigNode op = node.child("op");
  const auto parsed_op = perf::parseCollectiveOp(op.asString());
  if (!parsed_op) op.failExpected("all_reduce, all_gather, reduce_scatter, all_to_all, broadcast or send_recv");
  curve.op = *parsed_op;
  curve.cluster = node.child("cluster").asString();
  if (auto settings = node.optionalChild("cluster_set")) curve.cluster_settings = readClusterSettings(*settings);
  curve.gpus = node.child("gpus").asPositiveInteger();
  curve.where = node.child("gpus").where();
  if (auto per_node = node.optionalChild("gpus_per_node")) curve.gpus_per_node = per_node->asPositiveInteger();
  if (auto algorithm = node.optionalChild("algorithm")) {
    curve.algorithm = perf::parseAlgorithmName(algorithm->asString());
    if (!curve.algorithm) algorithm->failExpected("ring, tree, nvls, direct, nvls_tree or pat");
  }
  if (auto release = node.optionalChild("nccl_version")) {
    curve.nccl_version = calibrate::ncclVersionCode(release->asString());
    if (!curve.nccl_version) release->failExpected("an NCCL release written MAJOR.MINOR.PATCH, such as \"2.18.5\"");
  }
  curve.accuracy_target = node.child("accuracy_target").asBool();
  curve.notes = node.string("notes", "");
  // Both or neither: a latency the source publishes for a size below the curve's first point.
  if (auto latency = node.optionalChild("small_message_latency_us")) {
    curve.small_message_latency_us = latency->asPositiveNumber();
    curve.small_message_bytes = node.child("small_message_bytes").asPositiveInteger();
  } else if (node.has("small_message_bytes")) {
    node.failMissing("small_message_latency_us", "small_message_bytes is given");
  }
  const ConfigNode points = node.child("points");
  for (const ConfigNode& point : points.elements()) {
    curve.points.push_back(readPoint(point));
    if (curve.points.size() > 1 && curve.points.back().bytes <= curve.points[curve.points.size() - 2].bytes) {
      point.child("bytes").failExpected("sizes in increasing order");
    }
  }
  if (curve.points.empty()) points.failExpected("at least one point");
  return curve;
}

}  // namespace

std::string collectiveCurvesPath(const ConfigPaths& paths) {
  return (std::filesystem::path(paths.config_dir) / "validation" / "collectives.yaml").string();
}

Expected<std::vector<MeasuredCurve>> loadCollectiveCurves(const ConfigPaths& paths) {
  return catchInputErrors([&]() -> std::vector<MeasuredCurve> {
    const ConfigNode root = loadConfigFile(collectiveCurvesPath(paths));
    root.allowKeys({"curves"});
    std::vector<MeasuredCurve> curves;
    std::set<std::string> ids;
    for (const ConfigNode& node : root.child("curves").elements()) {
      curves.push_back(readCurve(node));
      if (!ids.insert(curves.back().id).second) node.child("id").fail("curve id given twice");
    }
    return curves;
  });
}

}  // namespace trainsim::validation
