#include "validate/gemm_measurements.h"

#include <filesystem>
#include <set>

#include "base/config_node.h"

namespace trainsim::validate {
namespace {

using topology::Precision;

MeasuredGemm readRow(const ConfigNode& node) {
  node.allowKeys({"gpu", "precision", "m", "n", "k", "tflops"});
  MeasuredGemm row;
  row.gpu = node.child("gpu").asString();
  const ConfigNode precision = node.child("precision");
  const auto parsed = topology::parsePrecision(precision.asString());
  if (!parsed) precision.failExpected("a precision (fp16, bf16, fp8, ...)");
  row.precision = *parsed;
  row.m = node.child("m").asPositiveInteger();
  row.n = node.child("n").asPositiveInteger();
  row.k = node.child("k").asPositiveInteger();
  row.tflops = node.child("tflops").asPositiveNumber();
  return row;
}

MeasuredGemmSource readSource(const ConfigNode& node) {
  node.allowKeys({"id", "title", "source", "independent", "rows"});
  MeasuredGemmSource source;
  source.id = node.child("id").asString();
  source.title = node.child("title").asString();
  source.source = node.child("source").asString();
  source.independent = node.child("independent").asBool();
  const ConfigNode rows = node.child("rows");
  for (const ConfigNode& row : rows.elements()) source.rows.push_back(readRow(row));
  if (source.rows.empty()) rows.failExpected("at least one row");
  return source;
}

}  // namespace

GemmElementBytes gemmElementBytes(Precision precision) {
  if (precision == Precision::kFp8) return {1.0, 2.0};
  if (precision == Precision::kFp64) return {8.0, 8.0};
  if (precision == Precision::kFp32 || precision == Precision::kTf32) return {4.0, 4.0};
  return {2.0, 2.0};
}

std::string gemmMeasurementsPath(const ConfigPaths& paths) {
  return (std::filesystem::path(paths.config_dir) / "validation" / "gemm.yaml").string();
}

Expected<std::vector<MeasuredGemmSource>> loadGemmSources(const ConfigPaths& paths) {
  return catchInputErrors([&]() -> std::vector<MeasuredGemmSource> {
    const ConfigNode root = loadConfigFile(gemmMeasurementsPath(paths));
    root.allowKeys({"sources"});
    std::vector<MeasuredGemmSource> sources;
    std::set<std::string> ids;
    for (const ConfigNode& node : root.child("sources").elements()) {
      sources.push_back(readSource(node));
      if (!ids.insert(sources.back().id).second) node.child("id").fail("source id given twice");
    }
    return sources;
  });
}

}  // namespace trainsim::validate
