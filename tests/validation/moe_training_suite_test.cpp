// The mixture-of-experts sources of the training suite (bridge-moe, automodel-moe, mcore-moe,
// mcore-moe-report): validation only (never fitted to), predicted at the dense sources'
// kernel-rate fractions. The rows that simulate in a fraction of a second guard the figures of
// docs/training-validation.md, "Mixture-of-experts sources"; the whole set is
// `trainsim validate training --row ...` over the four files (about 2 minutes).
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

#include "tests/shipped_simulation_options.h"
#include "validation/training_suite.h"

namespace trainsim::validation {
namespace {

const ConfigPaths kPaths{TRAINSIM_CONFIG_DIR_FOR_TESTS};

TEST(MoeTrainingSuiteTest, SmallRowsStayNearTheirDocumentedErrors) {
  // The error of each row (predicted / published tokens/s, TFLOP/s for Mixtral, - 1) as
  // docs/training-validation.md gives it; each stays within 3 points of it.
  const std::map<std::string, double> measured = {
      {"bridge-moe-022", 0.232},      // B200, Qwen3-30B-A3B, 8 GPUs, MXFP8, HybridEP
      {"bridge-moe-028", 0.166},      // GB200, the same
      {"automodel-moe-004", -0.107},  // H100, Qwen3-30B-A3B, FSDP2 + EP 8, DeepEP
      {"mcore-moe-001", 0.062},       // H100, Mixtral 8x7B, 64 GPUs
      // The Megatron-Core MoE report's Table 11 (all but the 1,024-GPU H100 row, 4.5 s).
      {"mcore-moe-report-001", 0.222},   // GB300, DeepSeek-V3 MXFP8, 64-GPU NVLink domains
      {"mcore-moe-report-002", 0.052},   // GB200, DeepSeek-V3 MXFP8
      {"mcore-moe-report-003", -0.055},  // GB200, DeepSeek-V3 BF16, pp 8
      {"mcore-moe-report-005", 0.134},   // GB300, Qwen3-235B-A22B MXFP8
      {"mcore-moe-report-006", 0.216},   // GB200, Qwen3-235B-A22B MXFP8, micro-batch 3
      {"mcore-moe-report-007", 0.237},   // GB200, Qwen3-235B-A22B BF16
      {"mcore-moe-report-008", 0.107},   // H100, Qwen3-235B-A22B BF16, 256 GPUs
      {"mcore-moe-report-009", -0.200},  // GB300, Qwen3-235B-A22B, 131,072 tokens, cp 4
  };
  TrainingSuiteOptions options;
  options.simulation = shippedSimulationOptions();
  for (const auto& [id, error] : measured) options.only.push_back(id);
  const auto result = runTrainingSuite(kPaths, options);
  ASSERT_TRUE(result.ok()) << result.error().toString();
  ASSERT_EQ(result->rows.size(), measured.size());
  for (const auto& comparison : result->rows) {
    ASSERT_TRUE(comparison.ran) << comparison.row.id;
    EXPECT_NEAR(comparison.error, measured.at(comparison.row.id), 0.03) << comparison.row.id;
  }
}

TEST(MoeTrainingSuiteTest, DeepSeekV3OnItsOwnH800ClusterStaysNearItsDocumentedError) {
  // DeepSeek-V3's pre-training on 2,048 H800 (pp 16, ep 64 over 8 nodes, the flex dispatcher
  // with node-limited routing, DualPipe in both directions, the all-to-all overlapped): +12.2%
  // against the report's GPU-hour average (docs/training-validation.md, "The DeepSeek-V3
  // report"). Its memory is not asserted: without DeepSeek's FP8 activation caching (not
  // modelled) DualPipe's 17 micro-batches in flight need 90.9 of the H800's 80 GiB.
  TrainingSuiteOptions options;
  options.simulation = shippedSimulationOptions();
  options.only = {"deepseek-v3-moe-001"};
  const auto result = runTrainingSuite(kPaths, options);
  ASSERT_TRUE(result.ok()) << result.error().toString();
  ASSERT_EQ(result->rows.size(), 1U);
  const auto& row = result->rows[0];
  ASSERT_TRUE(row.ran);
  EXPECT_NEAR(row.error, 0.122, 0.03);
}

TEST(MoeTrainingSuiteTest, GpuSegmentsKeepExpertGroupsInsideOneNvlinkDomain) {
  // GB200 Qwen3-235B-A22B on 256 GPUs (pp 8, ep 32): with Megatron-Bridge's 64-GPU segments
  // every stage's expert group sits in one rack; filling 72-GPU racks put stages 2, 4 and 6
  // across two racks, and the row came out 3.8 times too slow (-73.6%).
  TrainingSuiteOptions options;
  options.simulation = shippedSimulationOptions();
  options.only = {"bridge-moe-030"};
  const auto result = runTrainingSuite(kPaths, options);
  ASSERT_TRUE(result.ok()) << result.error().toString();
  ASSERT_EQ(result->rows.size(), 1U);
  EXPECT_LT(std::fabs(result->rows[0].error), 0.2);
}

}  // namespace
}  // namespace trainsim::validation
