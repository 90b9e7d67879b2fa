// Collectives on explicit-graph clusters (devices/links lists): the tuner's estimates come
// from the graph's own links (the homogeneous form's intra_node / inter_node figures do not
// exist there), so every op runs, and a graph that spells out a built-in node gives the
// built-in node's times.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "../topology/test_clusters.h"
#include "perf/collective.h"
#include "perf/collective_simulation.h"
#include "perf/communication_parameters.h"
#include "tests/shipped_defaults.h"

namespace trainsim::perf {
namespace {

using topology::Cluster;
using topology::testing::clusterFromYaml;

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kGiB = 1024.0 * kMiB;

// 4 H100s on one NVSwitch, 450 GB/s each: the audit's reproducer.
const char* kGraphNvSwitchYaml = R"(
name: graph4
gpu: h100-sxm
devices:
  - {name: gpu, kind: gpu, count: 4}
  - {name: sw, kind: nvswitch}
links:
  - {from: gpu0, to: sw, type: nvlink, bandwidth_GBps: 450}
  - {from: gpu1, to: sw, type: nvlink, bandwidth_GBps: 450}
  - {from: gpu2, to: sw, type: nvlink, bandwidth_GBps: 450}
  - {from: gpu3, to: sw, type: nvlink, bandwidth_GBps: 450}
)";

// The same node in the homogeneous form. NVLS is off because an explicit graph does not
// offer it (the file cannot say whether the switch reduces).
const char* kBuiltInNvSwitchYaml = R"(
name: builtin4
gpu: h100-sxm
nodes: 1
gpus_per_node: 4
intra_node: {fabric: nvswitch, bandwidth_GBps: 450, nvls: false}
)";

// 4 GPUs in a ring of direct 100 GB/s NVLinks.
const char* kGraphRingYaml = R"(
name: ring4
gpu: h100-sxm
devices:
  - {name: gpu, kind: gpu, count: 4}
links:
  - {from: gpu0, to: gpu1, type: nvlink, bandwidth_GBps: 100}
  - {from: gpu1, to: gpu2, type: nvlink, bandwidth_GBps: 100}
  - {from: gpu2, to: gpu3, type: nvlink, bandwidth_GBps: 100}
  - {from: gpu3, to: gpu0, type: nvlink, bandwidth_GBps: 100}
)";

// Two nodes of 4 NVSwitch GPUs, each node with one 400 Gb/s InfiniBand NIC under a PCIe
// switch, the NICs on one leaf switch.
const char* kGraphTwoNodesYaml = R"(
name: two-nodes
gpu: h100-sxm
devices:
  - {name: a, kind: gpu, count: 4, node: 0}
  - {name: b, kind: gpu, count: 4, node: 1}
  - {name: swa, kind: nvswitch, node: 0}
  - {name: swb, kind: nvswitch, node: 1}
  - {name: pa, kind: pcie_switch, node: 0}
  - {name: pb, kind: pcie_switch, node: 1}
  - {name: nica, kind: nic, node: 0}
  - {name: nicb, kind: nic, node: 1}
  - {name: leaf, kind: leaf_switch}
links:
  - {from: a0, to: swa, type: nvlink, bandwidth_GBps: 450}
  - {from: a1, to: swa, type: nvlink, bandwidth_GBps: 450}
  - {from: a2, to: swa, type: nvlink, bandwidth_GBps: 450}
  - {from: a3, to: swa, type: nvlink, bandwidth_GBps: 450}
  - {from: b0, to: swb, type: nvlink, bandwidth_GBps: 450}
  - {from: b1, to: swb, type: nvlink, bandwidth_GBps: 450}
  - {from: b2, to: swb, type: nvlink, bandwidth_GBps: 450}
  - {from: b3, to: swb, type: nvlink, bandwidth_GBps: 450}
  - {from: a0, to: pa, type: pcie, bandwidth_GBps: 64}
  - {from: b0, to: pb, type: pcie, bandwidth_GBps: 64}
  - {from: nica, to: pa, type: pcie, bandwidth_GBps: 64}
  - {from: nicb, to: pb, type: pcie, bandwidth_GBps: 64}
  - {from: nica, to: leaf, type: infiniband, bandwidth_Gbps: 400}
  - {from: nicb, to: leaf, type: infiniband, bandwidth_Gbps: 400}
)";

std::vector<int64_t> firstRanks(int64_t n) {
  std::vector<int64_t> ranks;
  for (int64_t r = 0; r < n; ++r) ranks.push_back(r);
  return ranks;
}

constexpr CollectiveOp kAllOps[] = {CollectiveOp::kAllReduce, CollectiveOp::kAllGather, CollectiveOp::kReduceScatter,
                                    CollectiveOp::kAllToAll,  CollectiveOp::kBroadcast, CollectiveOp::kSendRecv};

// Regression test for the input-robustness audit, item 1: every algorithm's estimate was
// infinite on an explicit graph (its intra_node bandwidth is not set), reported as
// "--proto: the NVLS algorithms (nvls, nvls_tree) run only with the Simple protocol".
TEST(CollectiveExplicitGraphTest, EveryOpRunsOnEachGraph) {
  for (const char* yaml : {kGraphNvSwitchYaml, kGraphRingYaml, kGraphTwoNodesYaml}) {
    const Cluster cluster = clusterFromYaml(yaml);
    CollectiveSimulator simulator(cluster, shippedCommunication());
    for (CollectiveOp op : kAllOps) {
      for (double size : {8.0, 1.0 * kMiB, 1.0 * kGiB}) {
        auto result = simulator.simulate(
            CollectiveRequest{op, firstRanks(cluster.acceleratorCount()), size, std::nullopt, std::nullopt});
        ASSERT_TRUE(result.ok()) << cluster.spec().name << " " << collectiveOpName(op) << " " << size << ": "
                                 << result.error().toString();
        EXPECT_TRUE(std::isfinite(result->time_s) && result->time_s > 0.0)
            << cluster.spec().name << " " << collectiveOpName(op) << " " << size;
        EXPECT_TRUE(std::isfinite(result->choice.estimated_time_s) && result->choice.estimated_time_s > 0.0);
      }
    }
  }
}

// The graph spells out what the homogeneous form builds for one NVSwitch node (GPU <->
// NVSwitch NVLinks of 450 GB/s, 0.35 us each); the built-in node's PCIe tree carries no
// GPU-to-GPU traffic. Every op picks the same algorithm and protocol and takes the same
// time, to the picosecond the engine counts in.
TEST(CollectiveExplicitGraphTest, NvSwitchGraphMatchesTheBuiltInNode) {
  const Cluster graph = clusterFromYaml(kGraphNvSwitchYaml);
  const Cluster built_in = clusterFromYaml(kBuiltInNvSwitchYaml);
  CollectiveSimulator on_graph(graph, shippedCommunication());
  CollectiveSimulator on_built_in(built_in, shippedCommunication());
  for (CollectiveOp op : kAllOps) {
    for (int64_t n : {2, 4}) {
      for (double size : {8.0, 64.0 * 1024.0, 1.0 * kMiB, 64.0 * kMiB, 1.0 * kGiB}) {
        const CollectiveRequest request{op, firstRanks(n), size, std::nullopt, std::nullopt};
        auto a = on_graph.simulate(request);
        auto b = on_built_in.simulate(request);
        ASSERT_TRUE(a.ok()) << a.error().toString();
        ASSERT_TRUE(b.ok()) << b.error().toString();
        const std::string what =
            std::string(collectiveOpName(op)) + " n=" + std::to_string(n) + " S=" + std::to_string(size);
        EXPECT_EQ(a->choice.algorithm, b->choice.algorithm) << what;
        EXPECT_EQ(a->choice.protocol, b->choice.protocol) << what;
        EXPECT_EQ(a->choice.channels, b->choice.channels) << what;
        EXPECT_DOUBLE_EQ(a->choice.estimated_time_s, b->choice.estimated_time_s) << what;
        EXPECT_NEAR(a->time_s, b->time_s, 1e-9 * b->time_s) << what;
      }
    }
  }
}

// A large ring all-reduce runs at the links' effective bandwidth: bus bandwidth just under
// 450 GB/s x the H100 NVLink efficiency on the NVSwitch graph, 100 GB/s x it on the ring of
// direct links (each ring edge is one link).
TEST(CollectiveExplicitGraphTest, LargeAllReduceRunsAtTheLinksBandwidth) {
  const CommunicationParameters parameters = shippedCommunication();
  const double efficiency = parameters.linkEfficiency(topology::LinkType::kNvLink, "h100-sxm");
  for (const auto& [yaml, link_GBps] : {std::pair{kGraphNvSwitchYaml, 450.0}, std::pair{kGraphRingYaml, 100.0}}) {
    const Cluster cluster = clusterFromYaml(yaml);
    CollectiveSimulator simulator(cluster, parameters);
    auto result = simulator.simulate(
        CollectiveRequest{CollectiveOp::kAllReduce, firstRanks(4), 4.0 * kGiB, std::nullopt, std::nullopt});
    ASSERT_TRUE(result.ok()) << result.error().toString();
    EXPECT_EQ(result->choice.algorithm, CollectiveAlgorithm::kRing);
    const double link_Bps = link_GBps * 1e9 * efficiency;
    EXPECT_LE(result->busbw_Bps, link_Bps) << cluster.spec().name;
    EXPECT_GT(result->busbw_Bps, 0.97 * link_Bps) << cluster.spec().name;
    EXPECT_NEAR(result->algbw_Bps, result->busbw_Bps / (2.0 * 3.0 / 4.0), 1e-6 * result->algbw_Bps);
  }
}

// Across the two-node graph's single NIC per node, the ring's two inter-node edges carry
// 2(n-1)/n S each at the NIC's effective rate: bus bandwidth just under 50 GB/s x the
// InfiniBand efficiency.
TEST(CollectiveExplicitGraphTest, TwoNodeRingIsLimitedByTheNic) {
  const CommunicationParameters parameters = shippedCommunication();
  const Cluster cluster = clusterFromYaml(kGraphTwoNodesYaml);
  EXPECT_EQ(cluster.spec().nodes, 2);
  CollectiveSimulator simulator(cluster, parameters);
  auto result = simulator.simulate(CollectiveRequest{CollectiveOp::kAllReduce, firstRanks(8), 4.0 * kGiB,
                                                     CollectiveAlgorithm::kRing, Protocol::kSimple});
  ASSERT_TRUE(result.ok()) << result.error().toString();
  EXPECT_EQ(result->choice.channels, 1);  // one NIC per node
  const double nic_Bps = 400e9 / 8.0 * parameters.infiniband_efficiency;
  EXPECT_LE(result->busbw_Bps, nic_Bps);
  EXPECT_GT(result->busbw_Bps, 0.97 * nic_Bps);
  // The tuner sees the graph's NIC as it sees the homogeneous form's: the same estimate as
  // 2 nodes of 4 GPUs with one 400 Gb/s NIC each.
  const Cluster built_in = clusterFromYaml(R"(
name: two-nodes-built-in
gpu: h100-sxm
nodes: 2
gpus_per_node: 4
intra_node: {fabric: nvswitch, bandwidth_GBps: 450, nvls: false}
inter_node: {nics_per_node: 1, nic_bandwidth_Gbps: 400, protocol: infiniband}
)");
  CollectiveSimulator built_in_simulator(built_in, parameters);
  for (double size : {8.0, 1.0 * kMiB, 4.0 * kGiB}) {
    const CollectiveRequest request{CollectiveOp::kAllReduce, firstRanks(8), size, std::nullopt, std::nullopt};
    auto graph = simulator.simulate(request);
    auto reference = built_in_simulator.simulate(request);
    ASSERT_TRUE(graph.ok() && reference.ok());
    EXPECT_EQ(graph->choice.algorithm, reference->choice.algorithm) << size;
    EXPECT_EQ(graph->choice.protocol, reference->choice.protocol) << size;
    EXPECT_DOUBLE_EQ(graph->choice.estimated_time_s, reference->choice.estimated_time_s) << size;
  }
}

}  // namespace
}  // namespace trainsim::perf
