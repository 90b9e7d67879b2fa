// Rings over a full mesh of point-to-point links: disjoint Hamiltonian cycles, and ring
// collectives on an xGMI node that use every link instead of one per GPU.
#include "perf/mesh_rings.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <utility>

#include "perf/collective_flow_bound.h"
#include "perf/collective_simulation.h"
#include "perf/default_parameters.h"
#include "topology/cluster.h"
#include "topology/cluster_loader.h"

namespace trainsim::perf {
namespace {

// Each order visits every position once; no directed edge (closing edge included) twice.
void expectDisjointHamiltonianCycles(const std::vector<std::vector<int>>& orders, int n) {
  std::set<std::pair<int, int>> edges;
  for (const auto& order : orders) {
    ASSERT_EQ(static_cast<int>(order.size()), n);
    EXPECT_EQ(std::set<int>(order.begin(), order.end()).size(), static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < order.size(); ++i) {
      EXPECT_TRUE(edges.insert({order[i], order[(i + 1) % order.size()]}).second) << "n = " << n;
    }
  }
}

TEST(MeshRings, DecomposeTheMeshIntoNMinusOneDisjointRingsWhereTheyExist) {
  for (int n : {3, 5, 7, 8, 9, 12, 16}) {
    const auto& orders = disjointRingOrders(n);
    EXPECT_EQ(static_cast<int>(orders.size()), n - 1) << "n = " << n;
    expectDisjointHamiltonianCycles(orders, n);
  }
  // K*_4 and K*_6 have no such decomposition (Tillson 1980): fewer rings, still disjoint.
  for (int n : {4, 6}) {
    const auto& orders = disjointRingOrders(n);
    EXPECT_GE(orders.size(), 1u);
    EXPECT_LT(static_cast<int>(orders.size()), n - 1);
    expectDisjointHamiltonianCycles(orders, n);
  }
  EXPECT_EQ(disjointRingOrders(2).size(), 1u);
}

TEST(MeshRings, ChannelsPairEveryNicWithEveryRing) {
  EXPECT_EQ(meshRingChannels(8, 1), 7);
  EXPECT_EQ(meshRingChannels(8, 8), 56);
  EXPECT_EQ(meshRingChannels(8, 7), 7);
}

topology::Cluster meshCluster(int nodes) {
  const ConfigPaths paths{TRAINSIM_CONFIG_DIR_FOR_TESTS};
  auto spec = topology::loadClusterFile("mi300x-node", paths, {}).value();
  spec.nodes = nodes;
  return topology::Cluster::build(spec).value();
}

TEST(MeshRings, RingAllReduceOnAnXgmiNodeUsesAllSevenLinks) {
  const topology::Cluster cluster = meshCluster(2);
  const CommunicationParameters parameters =
      defaultCommunicationParameters(ConfigPaths{TRAINSIM_CONFIG_DIR_FOR_TESTS}).value();
  CollectiveSimulator simulator(cluster, parameters);
  const std::vector<int64_t> node = {0, 1, 2, 3, 4, 5, 6, 7};
  const auto result = simulator.simulate(
      CollectiveRequest{CollectiveOp::kAllReduce, node, 4.0 * (1 << 30), CollectiveAlgorithm::kRing, {}});
  ASSERT_TRUE(result.ok()) << result.error().toString();
  // 7 links x 64 GB/s x the MI300X's xGMI efficiency: the ring's bus bandwidth approaches it
  // (one link per GPU would give a seventh).
  const double links_GBps = 7.0 * 64.0 * parameters.linkEfficiency(topology::LinkType::kNvLink, "mi300x");
  EXPECT_GT(result.value().busbw_Bps / 1e9, 0.95 * links_GBps);
  EXPECT_LE(result.value().busbw_Bps / 1e9, links_GBps);
  EXPECT_EQ(result.value().choice.channels, 7);

  // Across two nodes every channel's ring also crosses all of its node's GPUs: the ring is
  // bound by the NICs or the whole mesh, whichever is slower, not by a doubled-up link.
  std::vector<int64_t> both;
  for (int64_t rank = 0; rank < 16; ++rank) both.push_back(rank);
  const auto across = simulator.simulate(
      CollectiveRequest{CollectiveOp::kAllReduce, both, 4.0 * (1 << 30), CollectiveAlgorithm::kRing, {}});
  ASSERT_TRUE(across.ok()) << across.error().toString();
  const double bound_GBps = std::min(8.0 * 50.0 * parameters.infiniband_efficiency, links_GBps);
  EXPECT_GT(across.value().busbw_Bps / 1e9, 0.95 * bound_GBps);
  EXPECT_LE(across.value().busbw_Bps / 1e9, bound_GBps);

  // The memory estimate's flow bound counts the mesh channels exactly.
  CollectiveShape shape;
  shape.op = CollectiveOp::kAllReduce;
  shape.gpus = 16;
  shape.most_per_node = 8;
  shape.multi_node = true;
  shape.nics_per_node = channelLimit(cluster.spec());
  shape.mesh = meshFabric(cluster.spec());
  shape.algorithm = CollectiveAlgorithm::kRing;
  EXPECT_EQ(collectiveFlowBound(shape), static_cast<double>(across.value().flows));
}

}  // namespace
}  // namespace trainsim::perf
