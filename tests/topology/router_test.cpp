#include "topology/router.h"

#include <gtest/gtest.h>

#include <set>

#include "test_clusters.h"

namespace trainsim::topology {
namespace {

using testing::clusterFromYaml;
using testing::kTestGpu;
using testing::presetCluster;

std::vector<DeviceKind> hopKinds(const Cluster& cluster, DeviceId from, const Route& route) {
  std::vector<DeviceKind> kinds = {cluster.device(from).kind};
  for (LinkId id : route.links) kinds.push_back(cluster.device(cluster.link(id).to).kind);
  return kinds;
}

TEST(RouterTest, DgxH100IntraNodePathGoesThroughNvSwitchAt450GBps) {
  const Cluster cluster = presetCluster("dgx-h100");
  Router router(cluster);
  const Route& route = router.route(cluster.accelerator(0), cluster.accelerator(1));
  ASSERT_EQ(route.links.size(), 2u);
  EXPECT_EQ(hopKinds(cluster, cluster.accelerator(0), route),
            (std::vector<DeviceKind>{DeviceKind::kGpu, DeviceKind::kNvSwitch, DeviceKind::kGpu}));
  for (LinkId id : route.links) {
    EXPECT_EQ(cluster.link(id).type, LinkType::kNvLink);
    EXPECT_DOUBLE_EQ(cluster.link(id).bandwidth_Bps, 450e9);
  }
  EXPECT_DOUBLE_EQ(route.bottleneck_Bps, 450e9);
}

TEST(RouterTest, DgxH100InterNodePathGoesNicLeafNic) {
  const Cluster cluster = presetCluster("dgx-h100");
  Router router(cluster);
  const int per_node = cluster.spec().gpus_per_node;
  const Route& route = router.route(cluster.accelerator(0), cluster.accelerator(per_node));
  EXPECT_EQ(
      hopKinds(cluster, cluster.accelerator(0), route),
      (std::vector<DeviceKind>{DeviceKind::kGpu, DeviceKind::kPcieSwitch, DeviceKind::kNic, DeviceKind::kLeafSwitch,
                               DeviceKind::kNic, DeviceKind::kPcieSwitch, DeviceKind::kGpu}));
  // The GPU's own NIC (NIC 0 for GPU 0) on both sides: rail 0.
  EXPECT_EQ(cluster.device(cluster.link(route.links[1]).to).name, "n0/nic0");
  EXPECT_EQ(cluster.device(cluster.link(route.links[3]).to).name, "n1/nic0");
  EXPECT_DOUBLE_EQ(route.bottleneck_Bps, 400e9 / 8);
}

TEST(RouterTest, RailOptimizedSameRailIsOneSwitchHopAcrossTheScalableUnit) {
  const Cluster cluster = presetCluster("dgx-h100", {parseOverride("nodes=32")});
  Router router(cluster);
  // GPU 5 of node 0 and GPU 5 of node 31: same rail leaf.
  const Route& route = router.route(cluster.accelerator(5), cluster.accelerator(31 * 8 + 5));
  EXPECT_EQ(route.links.size(), 6u);
  // GPU 5 of node 0 to GPU 4 of node 1: different rails, so leaf 5 -> spine -> leaf 4,
  // leaving through GPU 5's own NIC and arriving through GPU 4's.
  const Route& cross = router.route(cluster.accelerator(5), cluster.accelerator(8 + 4));
  EXPECT_EQ(hopKinds(cluster, cluster.accelerator(5), cross),
            (std::vector<DeviceKind>{DeviceKind::kGpu, DeviceKind::kPcieSwitch, DeviceKind::kNic,
                                     DeviceKind::kLeafSwitch, DeviceKind::kSpineSwitch, DeviceKind::kLeafSwitch,
                                     DeviceKind::kNic, DeviceKind::kPcieSwitch, DeviceKind::kGpu}));
  EXPECT_EQ(cluster.device(cluster.link(cross.links[1]).to).name, "n0/nic5");
  EXPECT_EQ(cluster.device(cluster.link(cross.links[5]).to).name, "n1/nic4");
}

TEST(RouterTest, TorusNeighboursAreOneHop) {
  const Cluster cluster = clusterFromYaml(std::string(R"(
name: torus
gpu:)") + kTestGpu + R"(
nodes: 16
gpus_per_node: 4
inter_node:
  topology: torus
  torus_dims: [4, 4, 4]
  link_bandwidth_GBps: 45
)");
  Router router(cluster);
  // Rank = x + 4 * (y + 4 * z). Neighbours in x, y, z, and the wrap-around in x.
  for (int neighbour : {1, 4, 16, 3, 12, 48}) {
    const Route& route = router.route(cluster.accelerator(0), cluster.accelerator(neighbour));
    EXPECT_EQ(route.links.size(), 1u) << "rank " << neighbour;
    EXPECT_EQ(cluster.link(route.links[0]).type, LinkType::kIci);
    EXPECT_DOUBLE_EQ(route.bottleneck_Bps, 45e9);
  }
  // The far corner (2, 2, 2) is 6 hops away.
  EXPECT_EQ(router.route(cluster.accelerator(0), cluster.accelerator(2 + 4 * (2 + 4 * 2))).links.size(), 6u);
}

TEST(RouterTest, RoutesAreDeterministicAndSpreadOverSpines) {
  const std::string yaml = std::string(R"(
name: spread
gpu:)") + kTestGpu + R"(
nodes: 16
gpus_per_node: 1
inter_node:
  nic_bandwidth_Gbps: 200
  switch_radix: 8
)";
  const Cluster cluster = clusterFromYaml(yaml);
  const Cluster again = clusterFromYaml(yaml);
  Router router(cluster);
  Router other(again);
  std::set<DeviceId> spines;
  for (int a = 0; a < 4; ++a) {
    for (int b = 12; b < 16; ++b) {
      const Route& route = router.route(cluster.accelerator(a), cluster.accelerator(b));
      EXPECT_EQ(route.links, other.route(again.accelerator(a), again.accelerator(b)).links);
      for (LinkId id : route.links) {
        if (cluster.device(cluster.link(id).to).kind == DeviceKind::kSpineSwitch) spines.insert(cluster.link(id).to);
      }
    }
  }
  // 16 pairs across leaves choose among 4 spines: ECMP must use more than one.
  EXPECT_GT(spines.size(), 1u);
}

TEST(RouterTest, PcieOnlyServerRoutesThroughPcieSwitchAndCpu) {
  const Cluster cluster = clusterFromYaml(R"(
name: workstation
gpu:
  peak_tflops: {fp16: 165}
  memory_GiB: 24
  memory_bandwidth_GBps: 1008
  pcie_bandwidth_GBps: 32
nodes: 1
gpus_per_node: 4
pcie: {gpus_per_switch: 2, sockets: 1}
)");
  Router router(cluster);
  const Route& same_switch = router.route(cluster.accelerator(0), cluster.accelerator(1));
  EXPECT_EQ(hopKinds(cluster, cluster.accelerator(0), same_switch),
            (std::vector<DeviceKind>{DeviceKind::kGpu, DeviceKind::kPcieSwitch, DeviceKind::kGpu}));
  const Route& other_switch = router.route(cluster.accelerator(0), cluster.accelerator(3));
  EXPECT_EQ(hopKinds(cluster, cluster.accelerator(0), other_switch),
            (std::vector<DeviceKind>{DeviceKind::kGpu, DeviceKind::kPcieSwitch, DeviceKind::kCpu,
                                     DeviceKind::kPcieSwitch, DeviceKind::kGpu}));
  EXPECT_DOUBLE_EQ(other_switch.bottleneck_Bps, 32e9);
  EXPECT_EQ(other_switch.latency_ps, 2'000'000);  // 4 PCIe hops of 0.5 us
}

}  // namespace
}  // namespace trainsim::topology

namespace trainsim::topology {
namespace {

TEST(RouterTest, FatTreeRoutesClimbOnlyAsHighAsNeeded) {
  // Radix 8: 4 NICs per leaf, 4 leaves per pod, 8 pods (k-ary fat tree, k = 8).
  const Cluster cluster = testing::clusterFromYaml(std::string(R"(
name: k8
gpu:)") + testing::kTestGpu + R"(
nodes: 128
gpus_per_node: 1
inter_node: {nic_bandwidth_Gbps: 100, switch_radix: 8}
)");
  Router router(cluster);
  // GPU->PCIe->NIC and NIC->PCIe->GPU are 4 links; the network adds 2, 4 or 6.
  EXPECT_EQ(router.route(cluster.accelerator(0), cluster.accelerator(3)).links.size(), 6u);     // same leaf
  EXPECT_EQ(router.route(cluster.accelerator(0), cluster.accelerator(15)).links.size(), 8u);    // same pod
  EXPECT_EQ(router.route(cluster.accelerator(0), cluster.accelerator(127)).links.size(), 10u);  // across pods
  // Every route between every pair is a valid chain of links.
  for (int a = 0; a < 128; a += 7) {
    for (int b = 0; b < 128; b += 5) {
      const Route& route = router.route(cluster.accelerator(a), cluster.accelerator(b));
      DeviceId at = cluster.accelerator(a);
      for (LinkId id : route.links) {
        ASSERT_EQ(cluster.link(id).from, at);
        at = cluster.link(id).to;
      }
      EXPECT_EQ(at, cluster.accelerator(b));
    }
  }
}

}  // namespace
}  // namespace trainsim::topology
