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
  // RoCE (ECMP): routes hold every switch-to-switch hop.
  const Cluster cluster =
      presetCluster("dgx-h100", {parseOverride("nodes=32"), parseOverride("inter_node.protocol=roce")});
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
  protocol: roce
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
inter_node: {protocol: roce, nic_bandwidth_Gbps: 100, switch_radix: 8}
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

namespace trainsim::topology {
namespace {

// A radix-8 fat tree of 128 single-GPU nodes (4 NICs per leaf, 4 leaves per pod, 8 pods).
std::string radix8FatTree(const std::string& protocol, double oversubscription) {
  return std::string(R"(
name: k8
gpu:)") + testing::kTestGpu +
         R"(
nodes: 128
gpus_per_node: 1
inter_node: {protocol: )" +
         protocol + ", oversubscription: " + std::to_string(oversubscription) +
         R"(, nic_bandwidth_Gbps: 100, switch_radix: 8}
)";
}

std::vector<LinkId> switchToSwitchLinks(const Cluster& cluster, const Route& route) {
  std::vector<LinkId> result;
  for (LinkId id : route.links) {
    const Link& link = cluster.link(id);
    const bool from_switch = cluster.device(link.from).kind != DeviceKind::kNic &&
                             cluster.device(link.from).kind != DeviceKind::kPcieSwitch &&
                             !isAccelerator(cluster.device(link.from).kind);
    const bool to_switch = cluster.device(link.to).kind != DeviceKind::kNic &&
                           cluster.device(link.to).kind != DeviceKind::kPcieSwitch &&
                           !isAccelerator(cluster.device(link.to).kind);
    if (from_switch && to_switch) result.push_back(id);
  }
  return result;
}

TEST(RouterTest, AdaptiveRoutingHoldsNoSingleSwitchLinkOnANonBlockingTree) {
  // InfiniBand: adaptive routing spreads a flow over all uplinks; on a 1:1 tree no trunk can
  // limit it, so the route keeps only its NIC legs, with the latency of the full climb.
  const Cluster ib = testing::clusterFromYaml(radix8FatTree("infiniband", 1.0));
  const Cluster roce = testing::clusterFromYaml(radix8FatTree("roce", 1.0));
  ASSERT_TRUE(ib.closFabric()->adaptive_routing);
  ASSERT_FALSE(roce.closFabric()->adaptive_routing);
  Router ib_router(ib);
  Router roce_router(roce);
  int64_t previous_latency = 0;
  for (int b : {3, 15, 127}) {  // same leaf, same pod, across pods
    const Route& adaptive = ib_router.route(ib.accelerator(0), ib.accelerator(b));
    const Route& hashed = roce_router.route(roce.accelerator(0), roce.accelerator(b));
    EXPECT_TRUE(switchToSwitchLinks(ib, adaptive).empty()) << b;
    EXPECT_EQ(adaptive.links.size(), 6u) << b;  // GPU-PCIe-NIC-leaf and back down
    EXPECT_EQ(switchToSwitchLinks(roce, hashed).size(), hashed.links.size() - 6) << b;
    // The latency still counts every hop of the climb.
    EXPECT_GT(adaptive.latency_ps, previous_latency) << b;
    previous_latency = adaptive.latency_ps;
    EXPECT_DOUBLE_EQ(adaptive.bottleneck_Bps, 100e9 / 8) << b;
  }
  // No trunks were built, and the topology's cables are the same.
  for (const Link& link : ib.links()) EXPECT_FALSE(link.trunk);
  EXPECT_EQ(ib.links().size(), roce.links().size());
}

TEST(RouterTest, AdaptiveRoutingSharesTheTrunkOfAnOversubscribedTier) {
  // 2:1 at every tier below the top: routes that leave a leaf go up its trunk (its uplinks
  // together) and come down the destination leaf's, and higher tiers' likewise.
  const Cluster cluster = testing::clusterFromYaml(radix8FatTree("infiniband", 2.0));
  Router router(cluster);
  const auto& tiers = cluster.closFabric()->tiers;
  ASSERT_GE(tiers.size(), 2u);
  ASSERT_FALSE(tiers[0].up_trunks.empty());
  const Link& leaf_trunk = cluster.link(tiers[0].up_trunks[0]);
  EXPECT_TRUE(leaf_trunk.trunk);
  EXPECT_DOUBLE_EQ(leaf_trunk.bandwidth_Bps, static_cast<double>(tiers[0].up_ports) * 100e9 / 8);
  const Route& same_leaf = router.route(cluster.accelerator(0), cluster.accelerator(1));
  EXPECT_EQ(same_leaf.links.size(), 6u);
  const Route& other_leaf = router.route(cluster.accelerator(0), cluster.accelerator(127));
  std::vector<LinkId> trunks;
  for (LinkId id : other_leaf.links) {
    if (cluster.link(id).trunk) trunks.push_back(id);
  }
  ASSERT_GE(trunks.size(), 2u);
  EXPECT_EQ(trunks.front(), tiers[0].up_trunks[0]);  // up from the source leaf
  EXPECT_EQ(cluster.link(trunks.back()).reverse,     // down into the destination leaf
            tiers[0].up_trunks[static_cast<std::size_t>(cluster.closFabric()->tiers[0].switch_count - 1)]);
  EXPECT_TRUE(switchToSwitchLinks(cluster, other_leaf).size() == trunks.size());
  // Trunks stay out of the graph: no device lists one among its out-links.
  for (DeviceId device = 0; device < cluster.devices().size(); ++device) {
    for (LinkId id : cluster.outLinks(device)) EXPECT_FALSE(cluster.link(id).trunk);
  }
}

}  // namespace
}  // namespace trainsim::topology
