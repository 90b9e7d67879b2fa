#include "validate/collective_measurements.h"

#include <filesystem>
#include <set>

#include "base/config_node.h"

namespace trainsim::validate {
namespace {

MeasuredPoint readPoint(const ConfigNode& node) {
  node.allowKeys({"bytes", "time_us", "busbw_GBps"});
  MeasuredPoint point{};
  point.bytes = node.child("bytes").asPositiveInteger();
  const ConfigNode time = node.child("time_us");
  point.time_us = time.yaml().IsNull() ? kNotPublished : time.asPositiveNumber();
  point.busbw_GBps = node.child("busbw_GBps").asNonNegativeNumber();
  return point;
}

MeasuredCurve readCurve(const ConfigNode& node) {
  node.allowKeys({"id", "title", "source", "cluster", "gpus", "accuracy_target", "small_message_latency_us",
                  "small_message_bytes", "points"});
  MeasuredCurve curve{};
  curve.id = node.child("id").asString();
  curve.title = node.child("title").asString();
  curve.source = node.child("source").asString();
  curve.cluster = node.child("cluster").asString();
  curve.gpus = node.child("gpus").asPositiveInteger();
  curve.accuracy_target = node.child("accuracy_target").asBool();
  // Both or neither: a latency the source publishes for a size below the curve's first point.
  if (auto latency = node.optionalChild("small_message_latency_us")) {
    curve.small_message_latency_us = latency->asPositiveNumber();
    curve.small_message_bytes = node.child("small_message_bytes").asPositiveInteger();
  } else if (node.has("small_message_bytes")) {
    node.failMissing("small_message_latency_us", "small_message_bytes is given");
  }
  const ConfigNode points = node.child("points");
  for (const ConfigNode& point : points.elements()) curve.points.push_back(readPoint(point));
  if (curve.points.empty()) points.failExpected("at least one point");
  return curve;
}

}  // namespace

std::string allReduceCurvesPath(const ConfigPaths& paths) {
  return (std::filesystem::path(paths.config_dir) / "validation" / "collectives.yaml").string();
}

Expected<std::vector<MeasuredCurve>> loadAllReduceCurves(const ConfigPaths& paths) {
  return catchInputErrors([&]() -> std::vector<MeasuredCurve> {
    const ConfigNode root = loadConfigFile(allReduceCurvesPath(paths));
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

}  // namespace trainsim::validate
