#include "topology/reliability_spec.h"

#include <gtest/gtest.h>

#include "test_clusters.h"
#include "topology/cluster_loader.h"

namespace trainsim::topology {
namespace {

using testing::kTestGpu;
using testing::shippedConfigs;
using testing::specFromYaml;

TEST(ReliabilitySpecTest, ShippedDefaultsLoadComplete) {
  const auto defaults = loadDefaultReliability(shippedConfigs());
  ASSERT_TRUE(defaults.ok()) << defaults.error().toString();
  EXPECT_GT(defaults->failures.gpu, 0.0);
  EXPECT_GT(defaults->failures.software, 0.0);
  EXPECT_GT(defaults->storage.write_GBps, 0.0);
  EXPECT_GT(defaults->restart.detection_s, 0.0);
  EXPECT_EQ(defaults->spares.nodes, 0);
  EXPECT_DOUBLE_EQ(defaults->stragglers.fraction, 0.0);
}

TEST(ReliabilitySpecTest, AClusterSectionReplacesOnlyWhatItGives) {
  auto spec = specFromYaml(std::string("gpu: ") + kTestGpu +
                           "\nnodes: 1\ngpus_per_node: 8\nreliability:\n  failures: {gpu: 2.5}\n"
                           "  hot_spares: {nodes: 3}\n");
  ASSERT_TRUE(spec.ok()) << spec.error().toString();
  const auto defaults = loadDefaultReliability(shippedConfigs());
  const auto reliability = clusterReliability(*spec, shippedConfigs());
  ASSERT_TRUE(reliability.ok()) << reliability.error().toString();
  EXPECT_DOUBLE_EQ(reliability->failures.gpu, 2.5);
  EXPECT_DOUBLE_EQ(reliability->failures.host, defaults->failures.host);
  EXPECT_EQ(reliability->spares.nodes, 3);
  EXPECT_DOUBLE_EQ(reliability->spares.repair_hours, defaults->spares.repair_hours);
}

TEST(ReliabilitySpecTest, ErrorsNameTheKeyWhenTheClusterLoads) {
  const std::string head = std::string("gpu: ") + kTestGpu + "\nnodes: 1\ngpus_per_node: 8\nreliability:\n";
  auto unknown = specFromYaml(head + "  failures: {gpus: 1}\n");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().toString().find("gpus: unknown key (did you mean 'gpu'?)"), std::string::npos)
      << unknown.error().toString();
  auto negative = specFromYaml(head + "  stragglers: {fraction: 1.5}\n");
  ASSERT_FALSE(negative.ok());
  EXPECT_NE(negative.error().toString().find("fraction"), std::string::npos) << negative.error().toString();
  auto slowdown = specFromYaml(head + "  stragglers: {slowdown: 0.5}\n");
  ASSERT_FALSE(slowdown.ok());
  auto storage = specFromYaml(head + "  checkpoint_storage: {write_GBps: 0}\n");
  ASSERT_FALSE(storage.ok());
}

TEST(ReliabilitySpecTest, SetOverridesReachTheSection) {
  auto spec = loadClusterFile("dgx-h100", shippedConfigs(), {parseOverride("reliability.failures.gpu=7")});
  ASSERT_TRUE(spec.ok()) << spec.error().toString();
  const auto reliability = clusterReliability(*spec, shippedConfigs());
  ASSERT_TRUE(reliability.ok());
  EXPECT_DOUBLE_EQ(reliability->failures.gpu, 7.0);
}

TEST(ReliabilitySpecTest, AConfigDirectoryWithoutDefaultsIsAnError) {
  const auto defaults = loadDefaultReliability(ConfigPaths{"/nonexistent-trainsim-config"});
  ASSERT_FALSE(defaults.ok());
  EXPECT_NE(defaults.error().toString().find("reliability.yaml"), std::string::npos) << defaults.error().toString();
}

}  // namespace
}  // namespace trainsim::topology
