#include "validation/gemm_measurements.h"

#include <filesystem>
#include <set>

#include "base/config_node.h"
#include "calibrate/harness_results_reader.h"

namespace trainsim::validation {
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

// The rows of a trainsim-calib-gemm results file, on the catalog GPU `gpu` the source names
// (the file carries the device's marketing name, not a catalog key).
std::vector<MeasuredGemm> readHarnessRows(const ConfigNode& file_node, const std::string& path,
                                          const std::string& gpu) {
  const calibrate::HarnessResults results = valueOrThrow(calibrate::loadHarnessResults(path));
  const auto* gemm = std::get_if<calibrate::GemmResults>(&results);
  if (gemm == nullptr || gemm->gemm.empty())
    file_node.failExpected("a trainsim-calib-gemm results file with GEMM rows");
  std::vector<MeasuredGemm> rows;
  for (const calibrate::GemmSample& sample : gemm->gemm) {
    rows.push_back({gpu, gemm->precision, sample.m, sample.n, sample.k, sample.batch, sample.tflops, sample.source});
  }
  return rows;
}

MeasuredGemmSource readGemmSource(const ConfigNode& node, const std::filesystem::path& directory) {
  node.allowKeys({"id", "title", "source", "independent", "rows", "gpu", "harness_results"});
  MeasuredGemmSource source;
  source.id = node.child("id").asString();
  source.title = node.child("title").asString();
  source.source = node.child("source").asString();
  source.independent = node.child("independent").asBool();
  if (const auto file = node.optionalChild("harness_results")) {
    if (node.has("rows")) node.child("rows").fail("a source takes rows or harness_results, not both");
    source.harness_results = file->asString();
    source.rows = readHarnessRows(*file, (directory / source.harness_results).string(), node.child("gpu").asString());
    return source;
  }
  if (node.has("gpu")) node.child("gpu").fail("gpu goes with harness_results; transcribed rows name their own");
  const ConfigNode rows = node.child("rows");
  for (const ConfigNode& row : rows.elements()) source.rows.push_back(readRow(row));
  if (source.rows.empty()) rows.failExpected("at least one row");
  return source;
}

}  // namespace

std::string gemmMeasurementsPath(const ConfigPaths& paths) {
  return (std::filesystem::path(paths.config_dir) / "validation" / "gemm.yaml").string();
}

Expected<std::vector<MeasuredGemmSource>> loadGemmSources(const ConfigPaths& paths) {
  return catchInputErrors([&]() -> std::vector<MeasuredGemmSource> {
    const std::string path = gemmMeasurementsPath(paths);
    const ConfigNode root = loadConfigFile(path);
    root.allowKeys({"sources"});
    std::vector<MeasuredGemmSource> sources;
    std::set<std::string> ids;
    for (const ConfigNode& node : root.child("sources").elements()) {
      sources.push_back(readGemmSource(node, std::filesystem::path(path).parent_path()));
      if (!ids.insert(sources.back().id).second) node.child("id").fail("source id given twice");
    }
    return sources;
  });
}

}  // namespace trainsim::validation
