#include "calibrate/harness_results_reader.h"

#include <fmt/format.h>

#include <filesystem>

#include "base/config_node.h"
#include "calibrate/measurement_limits.h"
#include "calibrate/nccl_version.h"

namespace trainsim::calibrate {
namespace {

MeasuredCollective readCollective(const ConfigNode& entry, const std::string& name, const std::string& gpu,
                                  int64_t file_nodes, int64_t file_gpus_per_node) {
  entry.allowKeys({"op", "layout", "group_size", "nodes", "gpus_per_node", "dtype", "warmup", "iterations", "results"});
  MeasuredCollective curve;
  curve.source = name;
  curve.where = entry.where();
  curve.gpu_name = gpu;
  const ConfigNode op = entry.child("op");
  const std::string op_name = op.asEnum({"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "send_recv"});
  curve.op = *perf::parseCollectiveOp(op_name);
  curve.layout = entry.child("layout").asEnum({"intra_node", "one_per_node", "tp_like", "dp_like", "world"});
  const ConfigNode size_node = entry.child("group_size");
  const int64_t group_size = size_node.asIntegerIn(1, limits::kMaxGpus);
  const ConfigNode nodes_node = entry.child("nodes");
  const int64_t nodes = nodes_node.asIntegerIn(1, limits::kMaxGpus);
  const ConfigNode per_node_node = entry.child("gpus_per_node");
  const int64_t per_node = per_node_node.asIntegerIn(1, limits::kMaxGpus);
  if (group_size < 2) size_node.failExpected("a group of at least 2 GPUs");
  if (nodes * per_node != group_size) {
    size_node.fail(fmt::format("group_size {} is not nodes x gpus_per_node = {} x {}", group_size, nodes, per_node));
  }
  if (nodes > file_nodes) nodes_node.fail(fmt::format("the group spans {} nodes, the run had {}", nodes, file_nodes));
  if (per_node > file_gpus_per_node) {
    per_node_node.fail(fmt::format("{} GPUs per node in the group, the run had {}", per_node, file_gpus_per_node));
  }
  curve.ranks_per_node.assign(static_cast<std::size_t>(nodes), per_node);
  (void)entry.child("dtype").asString();
  (void)entry.child("warmup").asIntegerIn(0, limits::kMaxIterations);
  (void)entry.child("iterations").asIntegerIn(1, limits::kMaxIterations);
  const ConfigNode results = entry.child("results");
  for (const auto& row : results.elements()) {
    row.allowKeys({"bytes", "time_us", "algbw_GBps", "busbw_GBps"});
    const ConfigNode bytes = row.child("bytes");
    CollectiveSample sample{static_cast<double>(bytes.asIntegerIn(1, limits::kMaxBytes)),
                            row.child("time_us").asNumberIn(limits::kMinTimeUs, limits::kMaxTimeUs)};
    (void)row.child("algbw_GBps").asNumberIn(0.0, limits::kMaxBandwidthGBps);
    (void)row.child("busbw_GBps").asNumberIn(0.0, limits::kMaxBandwidthGBps);
    if (!curve.samples.empty() && sample.bytes <= curve.samples.back().bytes) {
      bytes.fail(
          fmt::format("sizes must grow from row to row; {} follows {}", sample.bytes, curve.samples.back().bytes));
    }
    curve.samples.push_back(sample);
  }
  if (curve.samples.empty()) results.failExpected("at least one result row");
  return curve;
}

NcclResults readNccl(const ConfigNode& root, const std::string& name) {
  root.allowKeys(
      {"format", "tool", "gpu", "cuda_runtime", "nccl_version", "ranks", "nodes", "gpus_per_node", "collectives"});
  NcclResults results;
  results.source = name;
  results.gpu_name = root.child("gpu").asString();
  results.cuda_runtime = root.child("cuda_runtime").asString();
  const ConfigNode version = root.child("nccl_version");
  results.nccl_version = version.asString();
  const std::optional<double> version_code = ncclVersionCode(results.nccl_version);
  if (!version_code) version.failExpected("an NCCL release as MAJOR.MINOR.PATCH (\"2.27.3\")");
  const ConfigNode ranks = root.child("ranks");
  results.ranks = ranks.asIntegerIn(1, limits::kMaxGpus);
  results.nodes = root.child("nodes").asIntegerIn(1, limits::kMaxGpus);
  results.gpus_per_node = root.child("gpus_per_node").asIntegerIn(1, limits::kMaxGpus);
  if (results.nodes * results.gpus_per_node != results.ranks) {
    ranks.fail(fmt::format("ranks {} is not nodes x gpus_per_node = {} x {}", results.ranks, results.nodes,
                           results.gpus_per_node));
  }
  const ConfigNode collectives = root.child("collectives");
  for (const auto& entry : collectives.elements()) {
    results.collectives.push_back(readCollective(entry, name, results.gpu_name, results.nodes, results.gpus_per_node));
  }
  if (results.collectives.empty()) collectives.failExpected("at least one collective");
  for (MeasuredCollective& curve : results.collectives) curve.nccl_version = version_code;
  return results;
}

GemmResults readGemm(const ConfigNode& root, const std::string& name) {
  root.allowKeys({"format", "tool", "gpu", "cuda_runtime", "precision", "gemm", "memory_bandwidth"});
  GemmResults results;
  results.source = name;
  results.gpu_name = root.child("gpu").asString();
  results.cuda_runtime = root.child("cuda_runtime").asString();
  const ConfigNode precision = root.child("precision");
  const auto parsed = topology::parsePrecision(precision.asString());
  if (!parsed) precision.failExpected("one of fp64, fp32, tf32, fp16, bf16, fp8");
  results.precision = *parsed;
  for (const auto& row : root.child("gemm").elements()) {
    row.allowKeys({"m", "n", "k", "batch", "time_us", "tflops", "source"});
    GemmSample sample;
    sample.m = row.child("m").asIntegerIn(1, limits::kMaxDimension);
    sample.n = row.child("n").asIntegerIn(1, limits::kMaxDimension);
    sample.k = row.child("k").asIntegerIn(1, limits::kMaxDimension);
    if (auto batch = row.optionalChild("batch")) sample.batch = batch->asIntegerIn(1, limits::kMaxDimension);
    sample.time_us = row.child("time_us").asNumberIn(limits::kMinTimeUs, limits::kMaxTimeUs);
    sample.tflops = row.child("tflops").asNumberIn(limits::kMinTflops, limits::kMaxTflops);
    sample.source = row.child("source").asString();
    results.gemm.push_back(std::move(sample));
  }
  for (const auto& row : root.child("memory_bandwidth").elements()) {
    row.allowKeys({"bytes", "time_us", "GBps"});
    results.memory.push_back(
        {static_cast<double>(row.child("bytes").asIntegerIn(1, limits::kMaxBytes)),
         row.child("time_us").asNumberIn(limits::kMinTimeUs, limits::kMaxTimeUs),
         row.child("GBps").asNumberIn(topology::limits::kMinBandwidthGBps, limits::kMaxBandwidthGBps)});
  }
  return results;
}

HarnessResults readHarnessResults(const ConfigNode& root, const std::string& name) {
  root.requireMap();
  const ConfigNode format = root.child("format");
  if (format.asString() != kHarnessFormat) format.failExpected(std::string(kHarnessFormat));
  const std::string tool = root.child("tool").asEnum({"trainsim-calib-nccl", "trainsim-calib-gemm"});
  if (tool == "trainsim-calib-nccl") return readNccl(root, name);
  return readGemm(root, name);
}

}  // namespace

Expected<HarnessResults> parseHarnessResults(const std::string& text, const std::string& name) {
  return catchInputErrors([&] {
    const ConfigNode root = parseConfigText(text, name);
    if (!root.yaml().IsDefined() || root.yaml().IsNull()) throwInputError(name, "", "the file is empty");
    return readHarnessResults(root, name);
  });
}

Expected<HarnessResults> loadHarnessResults(const std::string& path) {
  return catchInputErrors([&] {
    // Checked here: a directory opens as a stream and fails only when read.
    std::error_code ignored;
    if (std::filesystem::is_directory(path, ignored)) {
      throwInputError(path, "", "is a directory, expected a trainsim-calib-nccl or trainsim-calib-gemm results file");
    }
    return readHarnessResults(loadConfigFile(path), path);
  });
}

}  // namespace trainsim::calibrate
