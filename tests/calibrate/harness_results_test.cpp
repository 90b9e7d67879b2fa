// Calibration harness: timings into results-file rows, and the results file itself
// (docs/harness.md, format trainsim-harness-1).
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "calibrate/harness/harness_results.h"
#include "calibrate/harness/harness_results_writer.h"

namespace trainsim::harness {
namespace {

using perf::CollectiveOp;

TEST(HarnessResultsTest, MedianOfOddAndEvenCounts) {
  EXPECT_EQ(median({5.0}), 5.0);
  EXPECT_EQ(median({9.0, 1.0, 5.0}), 5.0);
  EXPECT_EQ(median({4.0, 1.0, 100.0, 2.0}), 3.0);  // (2 + 4) / 2, the outlier ignored
}

TEST(HarnessResultsTest, BusBandwidthUsesNcclTestsFactors) {
  // 1 GB in 10 ms = 100 GB/s algbw, over 8 ranks.
  const int64_t bytes = 1000000000;
  const double time_us = 10000.0;
  const CollectiveSample all_reduce = collectiveSample(CollectiveOp::kAllReduce, 8, bytes, time_us);
  EXPECT_DOUBLE_EQ(all_reduce.algbw_GBps, 100.0);
  EXPECT_DOUBLE_EQ(all_reduce.busbw_GBps, 175.0);  // 2 * 7 / 8
  for (const CollectiveOp op : {CollectiveOp::kAllGather, CollectiveOp::kReduceScatter, CollectiveOp::kAllToAll}) {
    EXPECT_DOUBLE_EQ(collectiveSample(op, 8, bytes, time_us).busbw_GBps, 87.5);  // 7 / 8
  }
  EXPECT_DOUBLE_EQ(collectiveSample(CollectiveOp::kSendRecv, 8, bytes, time_us).busbw_GBps, 100.0);
  EXPECT_DOUBLE_EQ(collectiveSample(CollectiveOp::kAllReduce, 2, bytes, time_us).busbw_GBps, 100.0);  // 2 * 1 / 2
  EXPECT_EQ(all_reduce.bytes, bytes);
  EXPECT_EQ(all_reduce.time_us, time_us);
}

TEST(HarnessResultsTest, GemmAndCopyRates) {
  // 2 * 8192^3 FLOPs in 1.25 ms.
  const GemmSample gemm = gemmSample(8192, 8192, 8192, 1, 1250.0, "reference");
  EXPECT_NEAR(gemm.tflops, 2.0 * 8192.0 * 8192.0 * 8192.0 / 1.25e-3 / 1e12, 1e-9);
  EXPECT_NEAR(gemm.tflops, 879.6, 0.1);
  EXPECT_NEAR(gemmSample(128, 256, 512, 4, 1.0, "x").tflops, 2.0 * 128 * 256 * 512 * 4 / 1e-6 / 1e12, 1e-9);
  // 1 GiB copied in 700 us: 2 GiB moved.
  const MemoryBandwidthSample copy = memoryBandwidthSample(int64_t{1} << 30, 700.0);
  EXPECT_NEAR(copy.GBps, 2.0 * 1073741824.0 / 700e-6 / 1e9, 1e-9);
}

TEST(HarnessResultsWriterTest, DecimalsNeverUseExponents) {
  EXPECT_EQ(formatDecimal(12.3), "12.3");
  EXPECT_EQ(formatDecimal(0.000083), "0.000083");
  EXPECT_EQ(formatDecimal(1234567.8), "1234568");
  EXPECT_EQ(formatDecimal(0.0), "0");
  EXPECT_EQ(formatDecimal(890.123456), "890.123");
  EXPECT_EQ(formatDecimal(1e-9), "0.000000001");
  EXPECT_EQ(formatDecimal(2.0), "2");
  EXPECT_EQ(formatDecimal(-0.5), "-0.5");
}

NcclResults sampleNcclResults() {
  NcclResults results;
  results.gpu = "NVIDIA H100 80GB HBM3";
  results.cuda_runtime = "13.0";
  results.nccl_version = "2.28.9";
  results.ranks = 16;
  results.nodes = 2;
  results.gpus_per_node = 8;
  CollectiveSeries series;
  series.op = CollectiveOp::kAllReduce;
  series.layout = LayoutKind::kIntraNode;
  series.group_size = 8;
  series.nodes = 1;
  series.gpus_per_node = 8;
  series.dtype = topology::Precision::kBf16;
  series.warmup = 5;
  series.iterations = 20;
  series.results.push_back(collectiveSample(CollectiveOp::kAllReduce, 8, 1024, 12.3));
  series.results.push_back(collectiveSample(CollectiveOp::kAllReduce, 8, 1 << 30, 5000.0));
  results.collectives.push_back(series);
  CollectiveSeries dp = series;
  dp.op = CollectiveOp::kSendRecv;
  dp.layout = LayoutKind::kDpLike;
  dp.group_size = 2;
  dp.nodes = 2;
  dp.gpus_per_node = 1;
  dp.results = {collectiveSample(CollectiveOp::kSendRecv, 2, 4096, 20.0)};
  results.collectives.push_back(dp);
  return results;
}

TEST(HarnessResultsWriterTest, NcclFileHasTheDocumentedLayout) {
  const std::string text = ncclResultsYaml(sampleNcclResults());
  const std::string expected_start =
      "format: trainsim-harness-1\n"
      "tool: trainsim-calib-nccl\n"
      "gpu: \"NVIDIA H100 80GB HBM3\"\n"
      "cuda_runtime: \"13.0\"\n"
      "nccl_version: \"2.28.9\"\n"
      "ranks: 16\n"
      "nodes: 2\n"
      "gpus_per_node: 8\n"
      "collectives:\n"
      "  - op: all_reduce\n"
      "    layout: intra_node\n"
      "    group_size: 8\n"
      "    nodes: 1\n"
      "    gpus_per_node: 8\n"
      "    dtype: bf16\n"
      "    warmup: 5\n"
      "    iterations: 20\n"
      "    results:\n"
      "      - {bytes: 1024, time_us: 12.3, algbw_GBps: 0.083252, busbw_GBps: 0.145691}\n";
  EXPECT_EQ(text.substr(0, expected_start.size()), expected_start) << text;
}

TEST(HarnessResultsWriterTest, NcclFileRoundTripsThroughAYamlReader) {
  const NcclResults results = sampleNcclResults();
  const YAML::Node root = YAML::Load(ncclResultsYaml(results));
  EXPECT_EQ(root["format"].as<std::string>(), "trainsim-harness-1");
  EXPECT_EQ(root["tool"].as<std::string>(), "trainsim-calib-nccl");
  EXPECT_EQ(root["gpu"].as<std::string>(), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(root["cuda_runtime"].as<std::string>(), "13.0");
  EXPECT_EQ(root["nccl_version"].as<std::string>(), "2.28.9");
  EXPECT_EQ(root["ranks"].as<int>(), 16);
  EXPECT_EQ(root["nodes"].as<int>(), 2);
  EXPECT_EQ(root["gpus_per_node"].as<int>(), 8);
  const YAML::Node collectives = root["collectives"];
  ASSERT_EQ(collectives.size(), 2U);
  EXPECT_EQ(collectives[1]["op"].as<std::string>(), "send_recv");
  EXPECT_EQ(collectives[1]["layout"].as<std::string>(), "dp_like");
  EXPECT_EQ(collectives[1]["group_size"].as<int>(), 2);
  EXPECT_EQ(collectives[1]["nodes"].as<int>(), 2);
  EXPECT_EQ(collectives[1]["gpus_per_node"].as<int>(), 1);
  const YAML::Node rows = collectives[0]["results"];
  ASSERT_EQ(rows.size(), 2U);
  const CollectiveSample& big = results.collectives[0].results[1];
  EXPECT_EQ(rows[1]["bytes"].as<int64_t>(), int64_t{1} << 30);
  EXPECT_NEAR(rows[1]["time_us"].as<double>(), 5000.0, 1e-9);
  EXPECT_NEAR(rows[1]["algbw_GBps"].as<double>(), big.algbw_GBps, big.algbw_GBps * 1e-5);
  EXPECT_NEAR(rows[1]["busbw_GBps"].as<double>(), big.busbw_GBps, big.busbw_GBps * 1e-5);
  for (const auto& key : {"bytes", "time_us", "algbw_GBps", "busbw_GBps"}) EXPECT_TRUE(rows[0][key]) << key;
}

TEST(HarnessResultsWriterTest, GemmFileRoundTripsWithBatchOnlyWhenBatched) {
  GemmResults results;
  results.gpu = "NVIDIA \"quoted\" GPU";
  results.cuda_runtime = "13.0";
  results.precision = topology::Precision::kFp8;
  results.gemm.push_back(gemmSample(8192, 8192, 8192, 1, 1234.5, "reference"));
  results.gemm.push_back(gemmSample(4096, 28672, 4096, 2, 800.0, "mixtral-8x7b-h100"));
  results.gemm.push_back(gemmSample(64, 64, 64, 1, 3.0, "yes"));  // a name YAML would read as a boolean
  results.memory_bandwidth.push_back(memoryBandwidthSample(int64_t{1} << 30, 700.0));
  const std::string text = gemmResultsYaml(results);
  EXPECT_NE(text.find("  - {m: 8192, n: 8192, k: 8192, time_us: 1234.5, tflops: 890.653, source: reference}\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("precision: fp8\n"), std::string::npos);

  const YAML::Node root = YAML::Load(text);
  EXPECT_EQ(root["tool"].as<std::string>(), "trainsim-calib-gemm");
  EXPECT_EQ(root["gpu"].as<std::string>(), "NVIDIA \"quoted\" GPU");
  EXPECT_FALSE(root["nccl_version"]);
  EXPECT_FALSE(root["collectives"]);
  const YAML::Node gemm = root["gemm"];
  ASSERT_EQ(gemm.size(), 3U);
  EXPECT_FALSE(gemm[0]["batch"]);
  EXPECT_EQ(gemm[1]["batch"].as<int>(), 2);
  EXPECT_EQ(gemm[1]["n"].as<int64_t>(), 28672);
  EXPECT_EQ(gemm[1]["source"].as<std::string>(), "mixtral-8x7b-h100");
  EXPECT_EQ(gemm[2]["source"].as<std::string>(), "yes");
  EXPECT_EQ(gemm[2]["source"].Tag(), "!");  // quoted: a string, not a boolean
  const YAML::Node memory = root["memory_bandwidth"];
  ASSERT_EQ(memory.size(), 1U);
  EXPECT_EQ(memory[0]["bytes"].as<int64_t>(), int64_t{1} << 30);
  EXPECT_NEAR(memory[0]["GBps"].as<double>(), results.memory_bandwidth[0].GBps, 0.01);
}

TEST(HarnessResultsWriterTest, EmptyListsAreStillLists) {
  NcclResults nccl;
  const YAML::Node nccl_root = YAML::Load(ncclResultsYaml(nccl));
  EXPECT_TRUE(nccl_root["collectives"].IsSequence());
  GemmResults gemm;
  const YAML::Node gemm_root = YAML::Load(gemmResultsYaml(gemm));
  EXPECT_TRUE(gemm_root["gemm"].IsSequence());
  EXPECT_TRUE(gemm_root["memory_bandwidth"].IsSequence());
}

TEST(HarnessResultsWriterTest, WritesFilesAndReportsUnwritablePaths) {
  const std::string path = ::testing::TempDir() + "harness_results_writer_test.yaml";
  ASSERT_FALSE(writeResultsFile(path, "format: trainsim-harness-1\n"));
  std::ifstream file(path);
  std::stringstream contents;
  contents << file.rdbuf();
  EXPECT_EQ(contents.str(), "format: trainsim-harness-1\n");
  std::remove(path.c_str());
  const auto error = writeResultsFile("/nonexistent-dir/results.yaml", "x");
  ASSERT_TRUE(error);
  EXPECT_EQ(error->where, "/nonexistent-dir/results.yaml");
}

}  // namespace
}  // namespace trainsim::harness
