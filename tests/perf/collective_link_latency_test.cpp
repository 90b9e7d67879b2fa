// Link latencies in the collective model: NCCL's per-step latencies were measured on links
// with the default latencies and on InfiniBand, so a cluster whose intra-node or network
// route is slower or faster by delta costs every step of that class delta more or less
// (never below nothing). Regression tests for the input-robustness audit, item 10:
// intra_node.latency_us, then inter_node.latency_us, had no effect.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "../topology/test_clusters.h"
#include "base/config_node.h"
#include "perf/collective.h"
#include "perf/collective_simulation.h"
#include "perf/communication_parameters.h"
#include "tests/shipped_defaults.h"

namespace trainsim::perf {
namespace {

using topology::Cluster;
using topology::testing::clusterFromYaml;
using topology::testing::presetCluster;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
// The engine rounds each latency and transfer to the picosecond.
constexpr double kTolerance_s = 1e-11;

std::vector<int64_t> firstRanks(int64_t n) {
  std::vector<int64_t> ranks;
  for (int64_t r = 0; r < n; ++r) ranks.push_back(r);
  return ranks;
}

// One node of 4 H100s on an NVSwitch, NVLS off, with `extra` in the intra_node section.
Cluster nvSwitchNode(const std::string& extra = "") {
  return clusterFromYaml(
      "name: node\ngpu: h100-sxm\nnodes: 1\ngpus_per_node: 4\n"
      "intra_node: {fabric: nvswitch, nvls: false" +
      extra + "}\n");
}

// The same node as an explicit graph, each NVLink with `link_latency` (empty: the default).
Cluster nvSwitchGraph(const std::string& link_latency = "") {
  std::string yaml =
      "name: graph\ngpu: h100-sxm\ndevices:\n  - {name: gpu, kind: gpu, count: 4}\n"
      "  - {name: sw, kind: nvswitch}\nlinks:\n";
  for (int g = 0; g < 4; ++g) {
    yaml += "  - {from: gpu" + std::to_string(g) + ", to: sw, type: nvlink, bandwidth_GBps: 450" +
            (link_latency.empty() ? "" : ", latency_us: " + link_latency) + "}\n";
  }
  return clusterFromYaml(yaml);
}

CollectiveResult run(const Cluster& cluster, const CollectiveRequest& request) {
  CollectiveSimulator simulator(cluster, shippedCommunication());
  auto result = simulator.simulate(request);
  if (!result.ok()) {
    ADD_FAILURE() << result.error().toString();
    return {};
  }
  return result.value();
}

CollectiveRequest forced(CollectiveOp op, int64_t n, double bytes, CollectiveAlgorithm algorithm, Protocol protocol) {
  return CollectiveRequest{op, firstRanks(n), bytes, algorithm, protocol};
}

// Default 0.7 us; 5.7 us is 5 us more on each of the ring's 2(n-1) = 6 steps, whatever
// the protocol, in the simulated time and in the tuner's estimate.
TEST(CollectiveLinkLatencyTest, IntraNodeLatencyAddsToEveryRingStep) {
  const Cluster base = nvSwitchNode();
  const Cluster slow = nvSwitchNode(", latency_us: 5.7");
  for (Protocol protocol : kAllProtocols) {
    for (double bytes : {8.0, 65536.0}) {
      const auto request = forced(CollectiveOp::kAllReduce, 4, bytes, CollectiveAlgorithm::kRing, protocol);
      const CollectiveResult a = run(base, request);
      const CollectiveResult b = run(slow, request);
      EXPECT_NEAR(b.time_s - a.time_s, 6 * 5e-6, kTolerance_s) << protocolName(protocol) << " " << bytes;
      EXPECT_NEAR(b.choice.estimated_time_s - a.choice.estimated_time_s, 6 * 5e-6, 1e-12) << protocolName(protocol);
    }
  }
  // all_gather: n-1 = 3 steps.
  const auto gather = forced(CollectiveOp::kAllGather, 4, 4096.0, CollectiveAlgorithm::kRing, Protocol::kSimple);
  EXPECT_NEAR(run(slow, gather).time_s - run(base, gather).time_s, 3 * 5e-6, kTolerance_s);
}

// A faster fabric takes the difference off each step, but a step never costs less than
// nothing: with latency 0 the Simple step (3.4 us) loses 0.7 us, the LL step (0.6 us) all of it.
TEST(CollectiveLinkLatencyTest, LowerLatencyShortensStepsDownToZero) {
  const Cluster base = nvSwitchNode();
  const Cluster fast = nvSwitchNode(", latency_us: 0");
  const auto simple = forced(CollectiveOp::kAllReduce, 4, 8.0, CollectiveAlgorithm::kRing, Protocol::kSimple);
  EXPECT_NEAR(run(base, simple).time_s - run(fast, simple).time_s, 6 * 0.7e-6, kTolerance_s);
  const auto ll = forced(CollectiveOp::kAllReduce, 4, 8.0, CollectiveAlgorithm::kRing, Protocol::kLL);
  EXPECT_NEAR(run(base, ll).time_s - run(fast, ll).time_s, 6 * 0.6e-6, kTolerance_s);
}

// Point-to-point ops take one step.
TEST(CollectiveLinkLatencyTest, IntraNodeLatencyAddsToTheDirectStep) {
  const Cluster base = nvSwitchNode();
  const Cluster slow = nvSwitchNode(", latency_us: 5.7");
  for (CollectiveOp op : {CollectiveOp::kSendRecv, CollectiveOp::kAllToAll}) {
    const auto request = forced(op, 4, 4096.0, CollectiveAlgorithm::kDirect, Protocol::kSimple);
    EXPECT_NEAR(run(slow, request).time_s - run(base, request).time_s, 5e-6, kTolerance_s) << collectiveOpName(op);
  }
}

// An explicit graph's link latencies count the same way: two NVLinks of 2.85 us make the
// 5.7 us GPU-to-GPU path of the homogeneous node above, and the times agree.
TEST(CollectiveLinkLatencyTest, ExplicitGraphLinkLatencyCounts) {
  const Cluster base = nvSwitchGraph();
  const Cluster slow = nvSwitchGraph("2.85");
  const Cluster slow_built_in = nvSwitchNode(", latency_us: 5.7");
  const auto request = forced(CollectiveOp::kAllReduce, 4, 8.0, CollectiveAlgorithm::kRing, Protocol::kSimple);
  EXPECT_NEAR(run(slow, request).time_s - run(base, request).time_s, 6 * 5e-6, kTolerance_s);
  EXPECT_NEAR(run(slow, request).time_s, run(slow_built_in, request).time_s, kTolerance_s);
}

// NVLS is one step GPU -> NVSwitch -> GPU.
TEST(CollectiveLinkLatencyTest, IntraNodeLatencyAddsToTheNvlsStep) {
  const Cluster base = presetCluster("dgx-h100", {parseOverride("nodes=1")});
  const Cluster slow =
      presetCluster("dgx-h100", {parseOverride("nodes=1"), parseOverride("intra_node.latency_us=5.7")});
  const auto request = forced(CollectiveOp::kAllReduce, 8, 1.0 * kGiB, CollectiveAlgorithm::kNvls, Protocol::kSimple);
  EXPECT_NEAR(run(slow, request).time_s - run(base, request).time_s, 5e-6, kTolerance_s);
}

// Across two DGX H100s: a ring of 16 has 2 x 15 steps, 2 of them across the network, 28
// inside the nodes; the tree has 2 x (8 - 1) chain steps. The network steps do not change.
TEST(CollectiveLinkLatencyTest, IntraNodeLatencyAddsToTheIntraNodeStepsAcrossNodes) {
  const Cluster base = presetCluster("dgx-h100", {parseOverride("nodes=2")});
  const Cluster slow =
      presetCluster("dgx-h100", {parseOverride("nodes=2"), parseOverride("intra_node.latency_us=5.7")});
  for (Protocol protocol : kAllProtocols) {
    const auto ring = forced(CollectiveOp::kAllReduce, 16, 8.0, CollectiveAlgorithm::kRing, protocol);
    EXPECT_NEAR(run(slow, ring).time_s - run(base, ring).time_s, 28 * 5e-6, kTolerance_s) << protocolName(protocol);
    const auto tree = forced(CollectiveOp::kAllReduce, 16, 8.0, CollectiveAlgorithm::kTree, protocol);
    EXPECT_NEAR(run(slow, tree).time_s - run(base, tree).time_s, 2 * 7 * 5e-6, kTolerance_s) << protocolName(protocol);
  }
}

// Without NVLink the GPUs talk through their PCIe switch: pcie.latency_us (GPU -> switch ->
// GPU, half per hop) is the intra-node hop's latency.
TEST(CollectiveLinkLatencyTest, PcieLatencyAddsToPcieSteps) {
  const std::string yaml =
      "name: pcie-node\ngpu: h100-sxm\nnodes: 1\ngpus_per_node: 4\n"
      "intra_node: {fabric: pcie}\npcie: {gpus_per_switch: 4";
  const Cluster base = clusterFromYaml(yaml + "}\n");
  const Cluster slow = clusterFromYaml(yaml + ", latency_us: 6}\n");
  const auto request = forced(CollectiveOp::kAllReduce, 4, 8.0, CollectiveAlgorithm::kRing, Protocol::kSimple);
  EXPECT_NEAR(run(slow, request).time_s - run(base, request).time_s, 6 * 5e-6, kTolerance_s);
}

// Two nodes of 4 GPUs, one NIC per GPU under one leaf switch, with `extra` in inter_node.
Cluster twoNodes(const std::string& extra = "") {
  return clusterFromYaml(
      "name: pair\ngpu: h100-sxm\nnodes: 2\ngpus_per_node: 4\n"
      "intra_node: {fabric: nvswitch, nvls: false}\n"
      "inter_node: {nics_per_node: 4, nic_bandwidth_Gbps: 400, topology: fat_tree" +
      extra + "}\n");
}

// NIC to NIC through the leaf is inter_node.latency_us (InfiniBand's default 2 us); at 10 us
// each network step costs 8 us more: a ring of 8 has 2 x 7 steps of which 2 cross the
// network, the double binary tree 2 x 1, a send between the nodes 1. The intra-node steps
// do not change.
TEST(CollectiveLinkLatencyTest, NetworkLatencyAddsToEveryNetworkStep) {
  const Cluster base = twoNodes();
  const Cluster slow = twoNodes(", latency_us: 10");
  for (Protocol protocol : kAllProtocols) {
    const auto ring = forced(CollectiveOp::kAllReduce, 8, 8.0, CollectiveAlgorithm::kRing, protocol);
    EXPECT_NEAR(run(slow, ring).time_s - run(base, ring).time_s, 2 * 8e-6, kTolerance_s) << protocolName(protocol);
    EXPECT_NEAR(run(slow, ring).choice.estimated_time_s - run(base, ring).choice.estimated_time_s, 2 * 8e-6, 1e-12)
        << protocolName(protocol);
    const auto tree = forced(CollectiveOp::kAllReduce, 8, 8.0, CollectiveAlgorithm::kTree, protocol);
    EXPECT_NEAR(run(slow, tree).time_s - run(base, tree).time_s, 2 * 8e-6, kTolerance_s) << protocolName(protocol);
  }
  const CollectiveRequest send{
      CollectiveOp::kSendRecv, {0, 4}, 4096.0, CollectiveAlgorithm::kDirect, Protocol::kSimple};
  EXPECT_NEAR(run(slow, send).time_s - run(base, send).time_s, 8e-6, kTolerance_s);
}

// The network step latencies were measured over InfiniBand: a RoCE (3 us) or EFA (10 us)
// fabric at its default latency pays the difference on each network step, and one set to
// InfiniBand's 2 us runs as InfiniBand.
TEST(CollectiveLinkLatencyTest, NetworkProtocolsSlowerThanInfinibandPayTheirLatency) {
  const Cluster infiniband = twoNodes();
  const auto ring = forced(CollectiveOp::kAllReduce, 8, 8.0, CollectiveAlgorithm::kRing, Protocol::kSimple);
  const double base = run(infiniband, ring).time_s;
  EXPECT_NEAR(run(twoNodes(", protocol: roce"), ring).time_s - base, 2 * 1e-6, kTolerance_s);
  EXPECT_NEAR(run(twoNodes(", protocol: efa"), ring).time_s - base, 2 * 8e-6, kTolerance_s);
  EXPECT_NEAR(run(twoNodes(", protocol: efa, latency_us: 2"), ring).time_s, base, kTolerance_s);
}

}  // namespace
}  // namespace trainsim::perf
