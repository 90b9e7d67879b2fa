#include "topology/cluster_loader.h"

#include <gtest/gtest.h>

#include "test_clusters.h"

namespace trainsim::topology {
namespace {

using testing::kTestGpu;
using testing::loadError;
using testing::shippedConfigs;
using testing::specFromYaml;

std::string withGpu(const std::string& rest) { return std::string("gpu:") + kTestGpu + rest; }

TEST(ClusterLoaderTest, AppliesDocumentedDefaults) {
  auto spec = specFromYaml(withGpu("nodes: 2\ngpus_per_node: 8\ninter_node: {nic_bandwidth_Gbps: 400}\n"));
  ASSERT_TRUE(spec.ok()) << spec.error().toString();
  EXPECT_EQ(spec->intra_node.fabric, IntraNodeFabric::kNvSwitch);  // from the GPU's default_fabric
  EXPECT_DOUBLE_EQ(spec->intra_node.bandwidth_GBps, 450);
  EXPECT_DOUBLE_EQ(spec->intra_node.latency_us, 0.7);
  EXPECT_DOUBLE_EQ(spec->pcie.bandwidth_GBps, 64);
  ASSERT_TRUE(spec->inter_node.has_value());
  EXPECT_EQ(spec->inter_node->nics_per_node, 8);
  EXPECT_EQ(spec->inter_node->protocol, NetworkProtocol::kInfiniBand);
  EXPECT_EQ(spec->inter_node->topology, NetworkTopology::kFatTree);
  EXPECT_DOUBLE_EQ(spec->inter_node->latency_us, 2.0);
  EXPECT_EQ(spec->inter_node->switch_radix, 64);
  EXPECT_EQ(spec->inter_node->oversubscription, std::vector<double>{1.0});
}

TEST(ClusterLoaderTest, EveryShippedPresetLoadsAndBuilds) {
  for (const char* name : {"dgx-a100", "dgx-h100", "dgx-h200", "aws-p4d", "aws-p5", "azure-nd-a100-v4", "gcp-a3",
                           "l40s-pcie-roce", "rtx4090-workstation", "tpu-v4-pod-slice", "mi300x-node"}) {
    auto spec = loadClusterFile(name, shippedConfigs());
    ASSERT_TRUE(spec.ok()) << name << ": " << spec.error().toString();
    auto cluster = Cluster::build(spec.value());
    ASSERT_TRUE(cluster.ok()) << name << ": " << cluster.error().toString();
    EXPECT_EQ(cluster->acceleratorCount(), spec->totalGpus()) << name;
  }
}

TEST(ClusterLoaderTest, OverridesApplyBeforeValidation) {
  auto spec = loadClusterFile("dgx-h100", shippedConfigs(),
                              {parseOverride("nodes=4"), parseOverride("inter_node.oversubscription=2")});
  ASSERT_TRUE(spec.ok()) << spec.error().toString();
  EXPECT_EQ(spec->nodes, 4);
  EXPECT_EQ(spec->inter_node->oversubscription, std::vector<double>{2.0});
  auto bad = loadClusterFile("dgx-h100", shippedConfigs(), {parseOverride("inter_node.nic_bandwidth_Gbps=fast")});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().toString(),
            "--set inter_node.nic_bandwidth_Gbps=fast: inter_node.nic_bandwidth_Gbps: expected a positive number, "
            "found \"fast\"");
}

TEST(ClusterLoaderTest, UnknownPresetNamesTheDirectory) {
  auto spec = loadClusterFile("dgx-z100", ConfigPaths{"/nowhere"});
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.error().toString(),
            "dgx-z100: unknown cluster preset (no /nowhere/clusters/dgx-z100.yaml); give a preset name or a file path");
}

TEST(ClusterLoaderTest, MalformedClustersGiveExactMessages) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {withGpu("nodes: 1\ngpus_per_node: 8\nnodez: 3\n"), "test.yaml:11:1: nodez: unknown key (did you mean 'nodes'?)"},
      {withGpu("nodes: 0\ngpus_per_node: 8\n"), "test.yaml:9:8: nodes: expected a positive integer, found \"0\""},
      {withGpu("nodes: 1.5\ngpus_per_node: 8\n"), "test.yaml:9:8: nodes: expected a positive integer, found \"1.5\""},
      {withGpu("nodes: 1\n"), "test.yaml:1:1: gpus_per_node: missing required key"},
      {withGpu("nodes: 2\ngpus_per_node: 8\n"),
       "test.yaml:1:1: inter_node: missing required key (a cluster with nodes > 1 needs an inter_node section)"},
      {withGpu("nodes: 2\ngpus_per_node: 8\ninter_node:\n  nic_bandwidth_Gbps: fast\n"),
       "test.yaml:12:23: inter_node.nic_bandwidth_Gbps: expected a positive number, found \"fast\""},
      {withGpu("nodes: 2\ngpus_per_node: 8\ninter_node:\n  nic_bandwidth_Gbps: 400\n  topology: dragonfly\n"),
       "test.yaml:13:13: inter_node.topology: expected fat_tree, rail_optimized or torus, found \"dragonfly\""},
      {withGpu("nodes: 2\ngpus_per_node: 8\ninter_node:\n  nic_bandwidth_Gbps: 400\n  oversubscription: 0.5\n"),
       "test.yaml:13:21: inter_node.oversubscription: expected a ratio >= 1 (down:up bandwidth of a tier), found "
       "\"0.5\""},
      {withGpu("nodes: 1\ngpus_per_node: 8\nintra_node: {fabric: pcie, nvls: true}\n"),
       "test.yaml:11:34: intra_node.nvls: NVLink SHARP needs an NVSwitch fabric (intra_node.fabric: nvswitch)"},
      {withGpu("nodes: 1\ngpus_per_node: 8\npcie: {gpus_per_switch: 3}\n"),
       "test.yaml:11:25: pcie.gpus_per_switch: expected a divisor of gpus_per_node (8), found \"3\""},
      {withGpu("nodes: 16\ngpus_per_node: 4\ninter_node: {topology: torus, torus_dims: [4, 4, 2]}\n"),
       "test.yaml:11:43: inter_node.torus_dims: the torus has 32 chips but the cluster has nodes x gpus_per_node = "
       "64; make the product of torus_dims equal to that"},
      {"gpu: h100-sxn\nnodes: 1\ngpus_per_node: 8\n",
       "test.yaml:1:6: gpu: unknown GPU \"h100-sxn\" (did you mean 'h100-sxm'?); see configs/gpus.yaml or give an "
       "inline mapping with peak_tflops, memory_GiB, memory_bandwidth_GBps"},
      {withGpu("nodes: 1\ngpus_per_node: 8\nprice_per_gpu_hour: -2\n"),
       "test.yaml:11:21: price_per_gpu_hour: expected a number >= 0, found \"-2\""},
      {"gpu:\n  peak_tflops: {bf16: fast}\n  memory_GiB: 80\n  memory_bandwidth_GBps: 2000\nnodes: 1\ngpus_per_node: "
       "1\n",
       "test.yaml:2:23: gpu.peak_tflops.bf16: expected a positive number, found \"fast\""},
      {"gpu: h100-sxm\ndevices:\n  - {name: a, kind: gpu}\n  - {name: b, kind: gpu}\nlinks:\n  - {from: a, to: c, "
       "type: nvlink, bandwidth_GBps: 100}\n",
       "test.yaml:6:19: links[0].to: unknown device \"c\"; declare it under devices"},
      {"gpu: h100-sxm\ndevices:\n  - {name: a, kind: gpu}\n  - {name: b, kind: gpu}\nlinks: []\n",
       "test.yaml: links: device b is not connected to a; add links joining them"},
      {"nodes: [1\n", "test.yaml:2:1: invalid YAML: end of sequence flow not found"},
  };
  for (const auto& [yaml, expected] : cases) EXPECT_EQ(loadError(yaml), expected) << yaml;
}

TEST(ClusterLoaderTest, ExplicitGraphBuildsWhatItSays) {
  auto spec = specFromYaml(R"(
name: two-boxes
gpu: h100-sxm
devices:
  - {name: gpu, kind: gpu, count: 2, node: 0}
  - {name: sw, kind: pcie_switch}
links:
  - {from: gpu0, to: sw, type: pcie, bandwidth_GBps: 32}
  - {from: gpu1, to: sw, type: pcie, bandwidth_Gbps: 256, latency_us: 0.25}
)");
  ASSERT_TRUE(spec.ok()) << spec.error().toString();
  auto cluster = Cluster::build(spec.value());
  ASSERT_TRUE(cluster.ok());
  EXPECT_EQ(cluster->acceleratorCount(), 2);
  EXPECT_EQ(cluster->links().size(), 4u);
  EXPECT_DOUBLE_EQ(cluster->link(2).bandwidth_Bps, 32e9);
  EXPECT_EQ(cluster->link(2).latency_ps, 250'000);
}

}  // namespace
}  // namespace trainsim::topology

namespace trainsim::topology {
namespace {

TEST(ClusterLoaderTest, OddGpuCountsDefaultToOneGpuPerPcieSwitch) {
  auto spec = testing::specFromYaml("gpu: h100-sxm\nnodes: 1\ngpus_per_node: 3\n");
  ASSERT_TRUE(spec.ok()) << spec.error().toString();
  EXPECT_EQ(spec->pcie.gpus_per_switch, 1);
  EXPECT_EQ(spec->pcie.sockets, 1);
  auto six = testing::specFromYaml("gpu: h100-sxm\nnodes: 1\ngpus_per_node: 6\npcie: {gpus_per_switch: 3}\n");
  ASSERT_TRUE(six.ok()) << six.error().toString();
  EXPECT_EQ(six->pcie.sockets, 2);
  EXPECT_TRUE(Cluster::build(spec.value()).ok());
}

}  // namespace
}  // namespace trainsim::topology
