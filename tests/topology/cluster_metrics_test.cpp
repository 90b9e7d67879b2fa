#include "topology/cluster_metrics.h"

#include <gtest/gtest.h>

#include "test_clusters.h"

namespace trainsim::topology {
namespace {

using testing::clusterFromYaml;
using testing::kTestGpu;

// 48 single-GPU nodes on radix-12 switches: 1:1 leaves have 6 down / 6 up (8 leaves),
// 2:1 leaves have 8 down / 4 up (6 leaves); both two-tier.
std::string fatTree(const std::string& oversubscription) {
  return std::string(R"(
name: tree
gpu:)") + kTestGpu +
         R"(
nodes: 48
gpus_per_node: 1
inter_node:
  nic_bandwidth_Gbps: 200
  switch_radix: 12
  oversubscription: )" +
         oversubscription + "\n";
}

TEST(ClusterMetricsTest, TwoToOneOversubscriptionHalvesBisectionBandwidth) {
  const Cluster full = clusterFromYaml(fatTree("1"));
  const Cluster tapered = clusterFromYaml(fatTree("2"));
  const double full_bisection = bisectionBandwidth(full);
  // 24 GPUs on each side, 25 GB/s each: 600 GB/s across a non-blocking tree.
  EXPECT_DOUBLE_EQ(full_bisection, 24 * 25e9);
  EXPECT_DOUBLE_EQ(bisectionBandwidth(tapered), full_bisection / 2);
}

TEST(ClusterMetricsTest, CountsDevicesAndInjectionBandwidth) {
  const Cluster cluster = clusterFromYaml(fatTree("1"));
  const ClusterMetrics metrics = measureCluster(cluster);
  EXPECT_EQ(metrics.devices_by_kind.at("gpu"), 48);
  EXPECT_EQ(metrics.devices_by_kind.at("nic"), 48);
  EXPECT_EQ(metrics.devices_by_kind.at("leaf_switch"), 8);
  EXPECT_EQ(metrics.devices_by_kind.at("spine_switch"), 6);  // one per leaf uplink
  EXPECT_EQ(metrics.links_by_type.at("infiniband"), 48 + 8 * 6);
  EXPECT_DOUBLE_EQ(metrics.network_injection_per_gpu_Bps, 25e9);
}

TEST(ClusterMetricsTest, ThreeTierFatTreeHasTextbookShape) {
  // Radix 8, 1:1: the k-ary fat tree holds k^3/4 = 128 hosts with 32 leaves, 32
  // aggregation (spine) switches in 8 pods and (k/2)^2 = 16 cores.
  const Cluster cluster = clusterFromYaml(std::string(R"(
name: k8
gpu:)") + kTestGpu + R"(
nodes: 128
gpus_per_node: 1
inter_node: {nic_bandwidth_Gbps: 100, switch_radix: 8}
)");
  const ClusterMetrics metrics = measureCluster(cluster);
  EXPECT_EQ(metrics.devices_by_kind.at("leaf_switch"), 32);
  EXPECT_EQ(metrics.devices_by_kind.at("spine_switch"), 32);
  EXPECT_EQ(metrics.devices_by_kind.at("core_switch"), 16);
  EXPECT_DOUBLE_EQ(bisectionBandwidth(cluster), 64 * 12.5e9);
}

TEST(ClusterMetricsTest, DgxNodeScaleUpAndBisection) {
  const Cluster cluster = testing::presetCluster("dgx-h100", {parseOverride("nodes=1")});
  const ClusterMetrics metrics = measureCluster(cluster);
  EXPECT_DOUBLE_EQ(metrics.scale_up_bandwidth_per_gpu_Bps, 450e9);
  // Four GPUs send to the other four through the NVSwitch (4 x 450 GB/s) and, through
  // their PCIe links (4 x 64 GB/s), over the CPUs and the NICs' leaf switch.
  EXPECT_DOUBLE_EQ(bisectionBandwidth(cluster), 4 * 450e9 + 4 * 64e9);
}

}  // namespace
}  // namespace trainsim::topology
