// The collective and GEMM suites' data files (configs/validation/collectives.yaml, gemm.yaml):
// the shipped ones load, and a malformed one is refused at the file, line, column and key.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>

#include "tests/scratch_config_dir.h"
#include "validation/collective_measurements.h"
#include "validation/gemm_measurements.h"

namespace trainsim::validation {
namespace {

using ::testing::HasSubstr;

const ConfigPaths kPaths{TRAINSIM_CONFIG_DIR_FOR_TESTS};

// A config directory with one file under validation/.
class ValidationDir {
 public:
  ValidationDir(const std::string& name, const std::string& text) { dir_.write("validation/" + name, text); }
  [[nodiscard]] ConfigPaths paths() const { return dir_.paths(); }
  [[nodiscard]] std::string file(const std::string& name) const { return dir_.file("validation/" + name); }

 private:
  ScratchConfigDir dir_{"trainsim_measurement_files_test"};
};

TEST(MeasurementFilesTest, TheShippedCurvesLoadInTheirOrder) {
  const auto curves = loadCollectiveCurves(kPaths);
  ASSERT_TRUE(curves.ok()) << curves.error().toString();
  ASSERT_EQ(curves->size(), 54u);
  const MeasuredCurve& deepops = curves->front();
  EXPECT_EQ(deepops.id, "deepops-2x-dgx-a100");
  EXPECT_EQ(deepops.points.size(), 13u);
  EXPECT_EQ(deepops.points[5].bytes, 33554432);
  EXPECT_EQ(deepops.points[5].time_us, 536.0);
  EXPECT_EQ(deepops.points[5].busbw_GBps, 117.38);
  EXPECT_EQ(deepops.small_message_latency_us, 39.5);
  EXPECT_EQ(deepops.small_message_bytes, 8);
  // The Azure curves publish bus bandwidth only, and no latency of their own.
  const MeasuredCurve& azure = (*curves)[1];
  EXPECT_TRUE(std::isnan(azure.points.front().time_us));
  EXPECT_TRUE(std::isnan(azure.small_message_latency_us));
  EXPECT_EQ((*curves)[5].id, "echo-azure-a100-16");
  EXPECT_FALSE((*curves)[5].accuracy_target);
  // The multi-node tables: ops other than all_reduce, runs spread over nodes, forced algorithms.
  const auto find = [&](const std::string& id) -> const MeasuredCurve& {
    for (const auto& curve : *curves) {
      if (curve.id == id) return curve;
    }
    throw std::runtime_error("no curve " + id);
  };
  EXPECT_EQ(find("oci-gb200-48n-alltoall").op, perf::CollectiveOp::kAllToAll);
  EXPECT_EQ(find("oci-gb200-48n-alltoall").gpus, 192);
  EXPECT_EQ(find("oci-gb200-48n-alltoall").gpus_per_node, 64);
  EXPECT_EQ(find("gcp-a3mega-2n-allgather").op, perf::CollectiveOp::kAllGather);
  EXPECT_EQ(find("aac11-mi325x-8n-allreduce").algorithm, perf::CollectiveAlgorithm::kRing);
  ASSERT_EQ(find("coreweave-gb200-1rack-allreduce").cluster_settings.size(), 1u);
  EXPECT_EQ(find("coreweave-gb200-1rack-allreduce").cluster_settings[0].key_path, "intra_node.nvls");
  // The NCCL release, where the source names it.
  EXPECT_EQ(find("azure-nd-h200-v5-8").nccl_version, 22005);
  EXPECT_EQ(find("coreweave-gb200-20rack-allreduce").nccl_version, 22602);
  EXPECT_EQ(deepops.nccl_version, std::nullopt);
}

TEST(MeasurementFilesTest, AMalformedCurveIsRefusedAtItsPosition) {
  const std::string curve =
      "curves:\n"
      "  - id: demo\n"
      "    title: \"Demo\"\n"
      "    system: \"Demo system\"\n"
      "    source: \"a test\"\n"
      "    op: all_reduce\n"
      "    cluster: dgx-a100\n"
      "    gpus: 8\n"
      "    accuracy_target: true\n"
      "    points:\n"
      "      - {bytes: 1024, time_us: null, busbw_GBps: 1.5}\n";
  const ValidationDir good("collectives.yaml", curve);
  ASSERT_TRUE(loadCollectiveCurves(good.paths()).ok());

  std::string typo = curve;
  typo.replace(typo.find("busbw_GBps"), 10, "busbw_GBs");
  const ValidationDir unknown("collectives.yaml", typo);
  const auto unknown_key = loadCollectiveCurves(unknown.paths());
  ASSERT_FALSE(unknown_key.ok());
  EXPECT_EQ(unknown_key.error().where, unknown.file("collectives.yaml") + ":11:38");
  EXPECT_EQ(unknown_key.error().key_path, "curves[0].points[0].busbw_GBs");
  EXPECT_NE(unknown_key.error().message.find("unknown key"), std::string::npos) << unknown_key.error().toString();

  std::string negative = curve;
  negative.replace(negative.find("gpus: 8"), 7, "gpus: -8");
  const ValidationDir wrong("collectives.yaml", negative);
  const auto wrong_value = loadCollectiveCurves(wrong.paths());
  ASSERT_FALSE(wrong_value.ok());
  EXPECT_EQ(wrong_value.error().where, wrong.file("collectives.yaml") + ":8:11");
  EXPECT_EQ(wrong_value.error().key_path, "curves[0].gpus");

  std::string bad_op = curve;
  bad_op.replace(bad_op.find("op: all_reduce"), 14, "op: allreduce");
  const ValidationDir op_dir("collectives.yaml", bad_op);
  const auto op_error = loadCollectiveCurves(op_dir.paths());
  ASSERT_FALSE(op_error.ok());
  EXPECT_EQ(op_error.error().where, op_dir.file("collectives.yaml") + ":6:9");
  EXPECT_EQ(op_error.error().key_path, "curves[0].op");

  std::string forced = curve;
  forced.replace(forced.find("    accuracy_target"), 0, "    algorithm: butterfly\n");
  const ValidationDir algorithm_dir("collectives.yaml", forced);
  const auto algorithm_error = loadCollectiveCurves(algorithm_dir.paths());
  ASSERT_FALSE(algorithm_error.ok());
  EXPECT_EQ(algorithm_error.error().key_path, "curves[0].algorithm");
  EXPECT_NE(algorithm_error.error().message.find("ring, tree, nvls, direct, nvls_tree or pat"), std::string::npos);

  std::string release = curve;
  release.replace(release.find("    accuracy_target"), 0, "    nccl_version: \"2.18\"\n");
  const ValidationDir release_dir("collectives.yaml", release);
  const auto release_error = loadCollectiveCurves(release_dir.paths());
  ASSERT_FALSE(release_error.ok());
  EXPECT_EQ(release_error.error().key_path, "curves[0].nccl_version");
  EXPECT_NE(release_error.error().message.find("MAJOR.MINOR.PATCH"), std::string::npos);

  std::string unordered = curve;
  unordered += "      - {bytes: 512, time_us: null, busbw_GBps: 1.0}\n";
  const ValidationDir order_dir("collectives.yaml", unordered);
  const auto order_error = loadCollectiveCurves(order_dir.paths());
  ASSERT_FALSE(order_error.ok());
  EXPECT_EQ(order_error.error().key_path, "curves[0].points[1].bytes");
}

TEST(MeasurementFilesTest, TheShippedGemmSourcesLoadInTheirOrder) {
  const auto sources = loadGemmSources(kPaths);
  ASSERT_TRUE(sources.ok()) << sources.error().toString();
  ASSERT_EQ(sources->size(), 5u);
  EXPECT_EQ((*sources)[0].id, "azure-cublaslt");
  EXPECT_TRUE((*sources)[0].independent);
  // The A100 row at 32768^3 is not published: 8 A100 rows, 9 H100 and 9 H200.
  EXPECT_EQ((*sources)[0].rows.size(), 26u);
  EXPECT_EQ((*sources)[1].rows.size(), 9u);
  EXPECT_EQ((*sources)[2].id, "mamf");
  ASSERT_EQ((*sources)[2].rows.size(), 14u);
  const MeasuredGemm& h100 = (*sources)[2].rows[3];
  EXPECT_EQ(h100.gpu, "h100-sxm");
  EXPECT_EQ(h100.precision, topology::Precision::kFp8);
  EXPECT_EQ(h100.m, 1024);
  EXPECT_EQ(h100.n, 9216);
  EXPECT_EQ(h100.k, 14336);
  EXPECT_EQ(h100.tflops, 1402.6);
  // The measured H100 harness files: every shape of the file, labelled by its workload.
  const MeasuredGemmSource& bf16 = (*sources)[3];
  EXPECT_EQ(bf16.id, "harness-h100-bf16");
  EXPECT_EQ(bf16.harness_results, "gemm-harness/h100-gemm-bf16-2026-11-26.yaml");
  ASSERT_EQ(bf16.rows.size(), 354u);
  EXPECT_EQ(bf16.rows[0].gpu, "h100-sxm");
  EXPECT_EQ(bf16.rows[0].precision, topology::Precision::kBf16);
  EXPECT_EQ(bf16.rows[0].label, "automodel-moe-001");
  EXPECT_EQ(bf16.rows[6].batch, 4);
  EXPECT_EQ(bf16.rows.back().label, "reference");
  EXPECT_EQ((*sources)[4].rows.size(), 349u);
  EXPECT_EQ((*sources)[4].rows[0].precision, topology::Precision::kFp8);
}

// A source reads its rows from a trainsim-calib-gemm results file beside gemm.yaml, or from
// its own rows, not both; the file's errors name the file.
TEST(MeasurementFilesTest, AGemmSourceReadsAHarnessFileBesideTheSuite) {
  const std::string header =
      "sources:\n"
      "  - id: measured\n"
      "    title: \"Measured\"\n"
      "    source: \"a test\"\n"
      "    independent: true\n"
      "    gpu: h100-sxm\n"
      "    harness_results: h100.yaml\n";
  const std::string harness =
      "format: trainsim-harness-1\ntool: trainsim-calib-gemm\ngpu: \"NVIDIA H100 80GB HBM3\"\n"
      "cuda_runtime: \"13.0\"\nprecision: fp8\ngemm:\n"
      "  - {m: 4096, n: 4096, k: 4096, time_us: 110, tflops: 1249.5, source: row-a}\n"
      "  - {m: 8192, n: 1024, k: 256, batch: 8, time_us: 30, tflops: 572.6, source: row-b}\n"
      "memory_bandwidth: []\n";
  const ValidationDir dir("gemm.yaml", header);
  std::ofstream(dir.file("h100.yaml")) << harness;
  const auto sources = loadGemmSources(dir.paths());
  ASSERT_TRUE(sources.ok()) << sources.error().toString();
  ASSERT_EQ(sources->front().rows.size(), 2u);
  const MeasuredGemm& grouped = sources->front().rows[1];
  EXPECT_EQ(grouped.gpu, "h100-sxm");
  EXPECT_EQ(grouped.precision, topology::Precision::kFp8);
  EXPECT_EQ(grouped.batch, 8);
  EXPECT_EQ(grouped.tflops, 572.6);
  EXPECT_EQ(grouped.label, "row-b");

  const ValidationDir both(
      "gemm.yaml", header + "    rows:\n      - {gpu: h100-sxm, precision: fp8, m: 1, n: 2, k: 3, tflops: 4}\n");
  std::ofstream(both.file("h100.yaml")) << harness;
  const auto refused = loadGemmSources(both.paths());
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.error().toString(), HasSubstr("rows or harness_results, not both"));

  const ValidationDir missing("gemm.yaml", header);
  const auto unreadable = loadGemmSources(missing.paths());
  ASSERT_FALSE(unreadable.ok());
  EXPECT_THAT(unreadable.error().toString(), HasSubstr("h100.yaml"));
}

TEST(MeasurementFilesTest, AGemmRowInAnUnknownPrecisionIsRefusedAtItsPosition) {
  const ValidationDir dir("gemm.yaml",
                          "sources:\n"
                          "  - id: demo\n"
                          "    title: \"Demo\"\n"
                          "    source: \"a test\"\n"
                          "    independent: true\n"
                          "    rows:\n"
                          "      - {gpu: h100-sxm, precision: fp9, m: 1, n: 2, k: 3, tflops: 4}\n");
  const auto sources = loadGemmSources(dir.paths());
  ASSERT_FALSE(sources.ok());
  EXPECT_EQ(sources.error().where, dir.file("gemm.yaml") + ":7:36");
  EXPECT_EQ(sources.error().key_path, "sources[0].rows[0].precision");
}

}  // namespace
}  // namespace trainsim::validation
