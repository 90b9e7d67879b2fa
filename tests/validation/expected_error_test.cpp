#include "validation/expected_error.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "tests/shipped_defaults.h"

namespace trainsim::validation {
namespace {

ExpectedErrorTable table() {
  ExpectedErrorTable t;
  t.command = "trainsim validate training --fit-rate-fraction";
  t.default_stacks = {"megatron-core", "nemo", "mlperf-nvidia"};
  t.groups = {{"", "h100-sxm", 6, 51, 0.058, -0.010},
              {"pytorch-fsdp", "h100-sxm", 1, 4, 0.250, 0.250},
              {"pytorch-fsdp", "a100-sxm-80gb", 1, 5, 0.120, 0.110},
              {"", "a100-sxm-80gb", 2, 21, 0.050, 0.040}};
  return t;
}

TEST(ExpectedErrorTest, NoStackOrADefaultStackTakesTheRowsWithoutAStack) {
  for (const char* stack : {"", "nemo", "megatron-core"}) {
    const auto error = expectedError(table(), stack, "h100-sxm", false);
    ASSERT_TRUE(error) << stack;
    EXPECT_DOUBLE_EQ(error->mape, 0.058);
    EXPECT_DOUBLE_EQ(error->bias, -0.010);
    EXPECT_EQ(error->sources, 6);
    EXPECT_NE(error->basis.find("h100-sxm"), std::string::npos) << error->basis;
  }
}

TEST(ExpectedErrorTest, AStackOnItsGpuTakesItsOwnGroup) {
  const auto error = expectedError(table(), "pytorch-fsdp", "a100-sxm-80gb", false);
  ASSERT_TRUE(error);
  EXPECT_DOUBLE_EQ(error->mape, 0.120);
  EXPECT_NE(error->basis.find("pytorch-fsdp"), std::string::npos) << error->basis;
}

TEST(ExpectedErrorTest, AStackOnAnotherGpuTakesItsWorstGroupAndSaysSo) {
  const auto error = expectedError(table(), "pytorch-fsdp", "b200", false);
  ASSERT_TRUE(error);
  EXPECT_DOUBLE_EQ(error->mape, 0.250);
  EXPECT_NE(error->basis.find("none on b200"), std::string::npos) << error->basis;
}

TEST(ExpectedErrorTest, AStackWithoutPublishedRunsFallsBackToTheDefaultsAsAFloor) {
  const auto error = expectedError(table(), "deepspeed", "a100-sxm-80gb", false);
  ASSERT_TRUE(error);
  EXPECT_DOUBLE_EQ(error->mape, 0.050);
  EXPECT_NE(error->basis.find("no published run of deepspeed"), std::string::npos) << error->basis;
  EXPECT_NE(error->basis.find("a floor"), std::string::npos) << error->basis;
}

TEST(ExpectedErrorTest, NothingAppliesToAGpuWithoutRows) {
  EXPECT_FALSE(expectedError(table(), "", "mi300x", false));
  EXPECT_FALSE(expectedError(table(), "maxtext", "tpu-v5e", false));
}

ExpectedErrorTable withMixtureOfExperts() {
  ExpectedErrorTable t = table();
  HeldOutAccuracy h100;
  h100.gpu = "h100-sxm";
  h100.sources = 3;
  h100.rows = 24;
  h100.mape = 0.300;
  h100.bias = -0.250;
  h100.moe = true;
  HeldOutAccuracy gb200 = h100;
  gb200.gpu = "gb200";
  gb200.mape = 0.200;
  gb200.bias = -0.100;
  t.groups.push_back(h100);
  t.groups.push_back(gb200);
  return t;
}

// A mixture-of-experts model takes the MoE rows of its GPU whatever its stack; a dense model
// never does.
TEST(ExpectedErrorTest, AMixtureOfExpertsModelTakesTheMoeRowsOfItsGpu) {
  for (const char* stack : {"", "megatron-core", "pytorch-fsdp"}) {
    const auto error = expectedError(withMixtureOfExperts(), stack, "h100-sxm", true);
    ASSERT_TRUE(error) << stack;
    EXPECT_DOUBLE_EQ(error->mape, 0.300);
    EXPECT_DOUBLE_EQ(error->bias, -0.250);
    EXPECT_EQ(error->rows, 24);
    EXPECT_NE(error->basis.find("mixture-of-experts runs on h100-sxm"), std::string::npos) << error->basis;
    EXPECT_TRUE(error->never_fitted);
  }
  const auto dense = expectedError(withMixtureOfExperts(), "", "h100-sxm", false);
  ASSERT_TRUE(dense);
  EXPECT_DOUBLE_EQ(dense->mape, 0.058);
}

TEST(ExpectedErrorTest, AMixtureOfExpertsModelOnAnotherGpuTakesTheWorstMoeGroup) {
  const auto error = expectedError(withMixtureOfExperts(), "", "a100-sxm-80gb", true);
  ASSERT_TRUE(error);
  EXPECT_DOUBLE_EQ(error->mape, 0.300);
  EXPECT_NE(error->basis.find("none on a100-sxm-80gb"), std::string::npos) << error->basis;
}

TEST(ExpectedErrorTest, AMixtureOfExpertsModelOnAGpuWithoutAnyRowsIsUnknown) {
  EXPECT_FALSE(expectedError(withMixtureOfExperts(), "", "mi300x", true));
  // Whatever the stack: a stack's groups on other GPUs do not make this GPU known.
  EXPECT_FALSE(expectedError(withMixtureOfExperts(), "pytorch-fsdp", "mi300x", true));
  EXPECT_TRUE(expectedError(withMixtureOfExperts(), "pytorch-fsdp", "mi300x", false));
  // MoE rows alone make a GPU known to MoE models (not to dense ones).
  ExpectedErrorTable t = withMixtureOfExperts();
  HeldOutAccuracy gb300 = t.groups.back();
  gb300.gpu = "gb300";
  t.groups.push_back(gb300);
  EXPECT_TRUE(expectedError(t, "", "gb300", true));
  EXPECT_FALSE(expectedError(t, "", "gb300", false));
}

TEST(ExpectedErrorTest, WithoutMoeRowsAMixtureOfExpertsModelTakesTheDenseErrorAndSaysSo) {
  const auto error = expectedError(table(), "", "h100-sxm", true);
  ASSERT_TRUE(error);
  EXPECT_DOUBLE_EQ(error->mape, 0.058);
  EXPECT_NE(error->basis.find("no published mixture-of-experts run"), std::string::npos) << error->basis;
}

TEST(ExpectedErrorTest, ASecondGroupForTheSameKeyIsRefusedWithItsPosition) {
  const std::string dir = ::testing::TempDir() + "expected_error_dup";
  std::filesystem::create_directories(dir + "/validation");
  std::ofstream(dir + "/validation/expected_error.yaml") << R"(command: "x"
default_stacks: [nemo]
groups:
  - {moe: true, gpu: h100-sxm, sources: 1, rows: 2, held_out_mape: 0.2, held_out_bias: 0.1}
  - {moe: true, gpu: h100-sxm, sources: 1, rows: 3, held_out_mape: 0.3, held_out_bias: 0.1}
)";
  const auto loaded = loadExpectedErrorTable(ConfigPaths{dir});
  ASSERT_FALSE(loaded.ok());
  const std::string message = loaded.error().toString();
  EXPECT_NE(message.find("expected_error.yaml:5:"), std::string::npos) << message;
  EXPECT_NE(message.find("a second group"), std::string::npos) << message;
}

TEST(ExpectedErrorTest, TheShippedTableLoadsAndCoversTheSuitesGpus) {
  const auto shipped = loadExpectedErrorTable(shippedConfigPaths());
  ASSERT_TRUE(shipped.ok()) << shipped.error().toString();
  for (const char* gpu : {"a100-sxm-80gb", "h100-sxm", "b200", "gb200"}) {
    const auto error = expectedError(*shipped, "", gpu, false);
    ASSERT_TRUE(error) << gpu;
    EXPECT_GT(error->mape, 0.0) << gpu;
    EXPECT_LE(std::abs(error->bias), error->mape) << gpu;
  }
  // The suite's MoE rows run on these GPUs, and each has its group.
  for (const char* gpu : {"h100-sxm", "b200", "gb200"}) {
    const auto error = expectedError(*shipped, "", gpu, true);
    ASSERT_TRUE(error) << gpu;
    EXPECT_NE(error->basis.find("mixture-of-experts runs on " + std::string(gpu)), std::string::npos) << error->basis;
  }
}

}  // namespace
}  // namespace trainsim::validation
