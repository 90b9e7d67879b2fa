// The NCCL-like collective model (perf/collective_*.cpp): closed forms on one NVSwitch node,
// byte conservation across nodes, determinism, contention, NVLS, the tuner and request
// validation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "../topology/test_clusters.h"
#include "base/config_node.h"
#include "perf/collective.h"
#include "perf/collective_algorithms.h"
#include "perf/collective_builder.h"
#include "perf/collective_simulation.h"
#include "perf/communication_parameters.h"
#include "perf/nccl_tuner.h"
#include "sim/engine.h"
#include "sim/flow_network.h"
#include "sim/result.h"
#include "sim/sim_time.h"
#include "sim/task_executor.h"
#include "sim/task_graph.h"
#include "tests/shipped_defaults.h"
#include "topology/router.h"

namespace trainsim::perf {
namespace {

using topology::Cluster;
using topology::Router;
using topology::testing::clusterFromYaml;
using topology::testing::presetCluster;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kMiB = 1024.0 * 1024.0;
constexpr auto kSimple = static_cast<std::size_t>(Protocol::kSimple);
constexpr auto kRingIndex = static_cast<std::size_t>(CollectiveAlgorithm::kRing);
constexpr auto kNvLinkIndex = static_cast<std::size_t>(HopClass::kNvLink);

// One NVSwitch node of 8 inline GPUs at 100 GB/s per GPU. The inline GPU's key is
// "inline", so its NVLink efficiency is nvlink_efficiency_default.
const char* kOneNodeYaml = R"(
name: one-node
gpu:
  name: test-gpu
  peak_tflops: {bf16: 100}
  memory_GiB: 80
  memory_bandwidth_GBps: 2000
  intra_node_bandwidth_GBps: 100
  default_fabric: nvswitch
  pcie_bandwidth_GBps: 64
nodes: 1
gpus_per_node: 8
intra_node:
  fabric: nvswitch
)";

const Cluster& oneNode() {
  static const Cluster cluster = clusterFromYaml(kOneNodeYaml);
  return cluster;
}

// 4 nodes of 8 inline GPUs, one 200 Gb/s InfiniBand NIC per GPU unless `nics` says otherwise;
// `extra` adds lines to the inter_node section.
std::string multiNodeYaml(int nics, int nodes = 4, int nic_Gbps = 200, const std::string& extra = "") {
  return std::string(R"(
name: multi-node
gpu:)") + topology::testing::kTestGpu +
         "nodes: " + std::to_string(nodes) + R"(
gpus_per_node: 8
inter_node:
  nics_per_node: )" +
         std::to_string(nics) + "\n  nic_bandwidth_Gbps: " + std::to_string(nic_Gbps) + R"(
  protocol: infiniband
  topology: fat_tree
)" + extra;
}

// Every latency and the pipeline fill set to zero: only bytes / bandwidth remain.
CommunicationParameters zeroLatencyParameters() {
  CommunicationParameters parameters = shippedCommunication();
  parameters.launch_overhead_us = 0.0;
  for (auto& row : parameters.base_latency_us) row = {0.0, 0.0, 0.0};
  for (auto& row : parameters.ring_step_latency_us) row = {0.0, 0.0, 0.0};
  for (auto& row : parameters.tree_step_latency_us) row = {0.0, 0.0, 0.0};
  parameters.nvls_step_latency_us = 0.0;
  parameters.chunk_bytes = {0.0, 0.0, 0.0};
  return parameters;
}

std::vector<int64_t> firstRanks(int64_t n, int64_t first = 0) {
  std::vector<int64_t> ranks;
  for (int64_t r = 0; r < n; ++r) ranks.push_back(first + r);
  return ranks;
}

// A collective built with CollectiveBuilder and run on its own engine, flow network and
// executor (what CollectiveSimulator does), keeping the graph and the run summary.
struct CollectiveRun {
  CollectiveChoice choice;
  sim::SimTime makespan = 0;
  sim::TaskGraph graph;
  sim::RunSummary summary;
};

CollectiveRun runCollectives(const Cluster& cluster, const CommunicationParameters& parameters,
                             const std::vector<CollectiveRequest>& requests, Router* shared_router = nullptr) {
  CollectiveRun run;
  Router own_router(cluster);
  Router& router = shared_router != nullptr ? *shared_router : own_router;
  CollectiveBuilder builder(cluster, router, run.graph, parameters);
  for (const auto& request : requests) {
    auto choice = builder.choose(request);
    if (!choice.ok()) {
      ADD_FAILURE() << choice.error().toString();
      return run;
    }
    run.choice = choice.value();
    builder.add(request, choice.value());
  }
  sim::Engine engine;
  sim::FlowNetwork network(engine, CollectiveBuilder::effectiveCapacities(cluster, parameters));
  sim::TaskExecutor executor(engine, network, run.graph);
  run.makespan = executor.run();
  EXPECT_TRUE(executor.allFinished());
  run.summary = sim::summarizeRun(engine, network, executor);
  return run;
}

CollectiveRun runCollective(const Cluster& cluster, const CommunicationParameters& parameters,
                            const CollectiveRequest& request, Router* shared_router = nullptr) {
  return runCollectives(cluster, parameters, {request}, shared_router);
}

CollectiveRequest forcedRingSimple(CollectiveOp op, std::vector<int64_t> ranks, double bytes) {
  return CollectiveRequest{op, std::move(ranks), bytes, CollectiveAlgorithm::kRing, Protocol::kSimple};
}

// The effective NVLink bandwidth of the one-node cluster (raw x efficiency).
double oneNodeEffectiveBandwidth(const CommunicationParameters& parameters) {
  return 100e9 * parameters.nvlink_efficiency_default;
}

// launch + base[ring][Simple] + 2(n-1) NVLink Simple steps + fill + 2(n-1)/n S / B_eff,
// each term rounded to the picosecond as the engine does (compute task, flow latency,
// transfer rounded up).
sim::SimTime expectedRingAllReduce(const CommunicationParameters& p, int n, double size) {
  const double steps = 2.0 * (n - 1.0);
  const double fixed_us = p.launch_overhead_us + p.base_latency_us[kRingIndex][kSimple];
  const double chunk = std::min(p.chunk_bytes[kSimple], size / n / p.pipeline_channels);
  const double fill_s = (steps - 1.0) * chunk / (p.channel_bandwidth_GBps * 1e9);
  const double step_s = steps * p.ring_step_latency_us[kNvLinkIndex][kSimple] * 1e-6;
  const double payload = 2.0 * (n - 1.0) / n * size;
  return sim::secondsToSimTime(fixed_us * 1e-6) + sim::secondsToSimTime(step_s + fill_s) +
         sim::transferDuration(payload, oneNodeEffectiveBandwidth(p));
}

// ---------------------------------------------------------------------------------------
// Closed forms on one NVSwitch node.

TEST(CollectiveTest, RingAllReduceOnOneNodeMatchesClosedFormWithChunkLimitedFill) {
  const CommunicationParameters parameters = shippedCommunication();
  for (int n : {2, 4, 8}) {
    const double size = 1.0 * kGiB;
    // The fill is chunk-limited: the per-step data over the channels exceeds the slot.
    ASSERT_GT(size / n / parameters.pipeline_channels, parameters.chunk_bytes[kSimple]);
    const CollectiveRun run =
        runCollective(oneNode(), parameters, forcedRingSimple(CollectiveOp::kAllReduce, firstRanks(n), size));
    EXPECT_EQ(run.choice.algorithm, CollectiveAlgorithm::kRing);
    EXPECT_EQ(run.choice.protocol, Protocol::kSimple);
    EXPECT_EQ(run.choice.channels, 1);
    EXPECT_EQ(run.makespan, expectedRingAllReduce(parameters, n, size)) << "n = " << n;
  }
}

TEST(CollectiveTest, RingAllReduceOnOneNodeMatchesClosedFormWithSizeLimitedFill) {
  const CommunicationParameters parameters = shippedCommunication();
  for (int n : {2, 4, 8}) {
    for (double size : {1.0 * kMiB, 4096.0}) {
      // The fill is size-limited: S / (n x channels) is below the Simple slot.
      ASSERT_LT(size / n / parameters.pipeline_channels, parameters.chunk_bytes[kSimple]);
      const CollectiveRun run =
          runCollective(oneNode(), parameters, forcedRingSimple(CollectiveOp::kAllReduce, firstRanks(n), size));
      EXPECT_EQ(run.makespan, expectedRingAllReduce(parameters, n, size)) << "n = " << n << ", S = " << size;
    }
  }
}

TEST(CollectiveTest, RingAllReduceWithoutLatenciesIsBytesOverBandwidth) {
  const CommunicationParameters parameters = zeroLatencyParameters();
  const double bandwidth = oneNodeEffectiveBandwidth(parameters);
  for (int n : {2, 4, 8}) {
    for (double size : {1.0 * kMiB, 1.0 * kGiB}) {
      const CollectiveRun run =
          runCollective(oneNode(), parameters, forcedRingSimple(CollectiveOp::kAllReduce, firstRanks(n), size));
      EXPECT_EQ(run.makespan, sim::transferDuration(2.0 * (n - 1.0) / n * size, bandwidth)) << "n = " << n;
      // Also as seconds: 2(n-1)/n S / B_eff.
      EXPECT_NEAR(sim::simTimeToSeconds(run.makespan), 2.0 * (n - 1.0) / n * size / bandwidth, 1e-12);
    }
  }
}

TEST(CollectiveTest, RingAllGatherAndReduceScatterMatchClosedFormWithLatencies) {
  const CommunicationParameters p = shippedCommunication();
  for (CollectiveOp op : {CollectiveOp::kAllGather, CollectiveOp::kReduceScatter}) {
    for (int n : {2, 4, 8}) {
      for (double size : {1.0 * kMiB, 1.0 * kGiB}) {
        const CollectiveRun run = runCollective(oneNode(), p, forcedRingSimple(op, firstRanks(n), size));
        const double steps = n - 1.0;
        const double chunk = std::min(p.chunk_bytes[kSimple], size / n / p.pipeline_channels);
        const double latency_s = steps * p.ring_step_latency_us[kNvLinkIndex][kSimple] * 1e-6 +
                                 (steps - 1.0) * chunk / (p.channel_bandwidth_GBps * 1e9);
        const sim::SimTime expected =
            sim::secondsToSimTime((p.launch_overhead_us + p.base_latency_us[kRingIndex][kSimple]) * 1e-6) +
            sim::secondsToSimTime(latency_s) +
            sim::transferDuration((n - 1.0) / n * size, oneNodeEffectiveBandwidth(p));
        EXPECT_EQ(run.makespan, expected) << collectiveOpName(op) << " n = " << n << ", S = " << size;
      }
    }
  }
}

TEST(CollectiveTest, OneNodeClosedFormsWithoutLatencies) {
  const CommunicationParameters parameters = zeroLatencyParameters();
  const double bandwidth = oneNodeEffectiveBandwidth(parameters);
  const double size = 256.0 * kMiB;
  for (int n : {2, 4, 8}) {
    const auto ranks = firstRanks(n);
    const auto time = [&](CollectiveOp op, std::optional<CollectiveAlgorithm> algorithm) {
      return runCollective(oneNode(), parameters, CollectiveRequest{op, ranks, size, algorithm, Protocol::kSimple})
          .makespan;
    };
    // all_gather / reduce_scatter: (n-1)/n S / B.
    EXPECT_EQ(time(CollectiveOp::kAllGather, CollectiveAlgorithm::kRing),
              sim::transferDuration((n - 1.0) / n * size, bandwidth))
        << n;
    EXPECT_EQ(time(CollectiveOp::kReduceScatter, CollectiveAlgorithm::kRing),
              sim::transferDuration((n - 1.0) / n * size, bandwidth))
        << n;
    // broadcast: a chain from the root, every edge carries S: S / B.
    EXPECT_EQ(time(CollectiveOp::kBroadcast, CollectiveAlgorithm::kRing), sim::transferDuration(size, bandwidth)) << n;
    // send_recv: every rank sends S to the next: S / B.
    EXPECT_EQ(time(CollectiveOp::kSendRecv, std::nullopt), sim::transferDuration(size, bandwidth)) << n;
    // all_to_all: n-1 flows of S/n share each GPU's link: (n-1)/n S / B (the fair share
    // B/(n-1) may differ from the exact quotient by a rounding of the last bit).
    EXPECT_NEAR(static_cast<double>(time(CollectiveOp::kAllToAll, std::nullopt)),
                static_cast<double>(sim::transferDuration((n - 1.0) / n * size, bandwidth)), 2.0)
        << n;
  }
}

TEST(CollectiveTest, PointToPointOpsUseTheDirectAlgorithmAndRingOpsTheRing) {
  CollectiveSimulator simulator(oneNode(), shippedCommunication());
  for (CollectiveOp op : {CollectiveOp::kAllToAll, CollectiveOp::kSendRecv}) {
    auto result = simulator.simulate(CollectiveRequest{op, firstRanks(4), 1.0 * kMiB, {}, {}});
    ASSERT_TRUE(result.ok()) << result.error().toString();
    EXPECT_EQ(result->choice.algorithm, CollectiveAlgorithm::kDirect) << collectiveOpName(op);
  }
  for (CollectiveOp op : {CollectiveOp::kAllGather, CollectiveOp::kReduceScatter, CollectiveOp::kBroadcast}) {
    auto result = simulator.simulate(CollectiveRequest{op, firstRanks(4), 1.0 * kMiB, {}, {}});
    ASSERT_TRUE(result.ok()) << result.error().toString();
    EXPECT_EQ(result->choice.algorithm, CollectiveAlgorithm::kRing) << collectiveOpName(op);
  }
}

TEST(CollectiveTest, SimulatorReportsAlgorithmAndBusBandwidth) {
  const CommunicationParameters parameters = zeroLatencyParameters();
  CollectiveSimulator simulator(oneNode(), parameters);
  const double size = 1.0 * kGiB;
  auto result = simulator.simulate(forcedRingSimple(CollectiveOp::kAllReduce, firstRanks(8), size));
  ASSERT_TRUE(result.ok()) << result.error().toString();
  EXPECT_DOUBLE_EQ(result->algbw_Bps, size / result->time_s);
  EXPECT_DOUBLE_EQ(result->busbw_Bps, result->algbw_Bps * 2.0 * 7.0 / 8.0);
  // Without latencies the bus bandwidth is the effective link bandwidth.
  EXPECT_NEAR(result->busbw_Bps / oneNodeEffectiveBandwidth(parameters), 1.0, 1e-9);
}

TEST(CollectiveTest, SimulatorCountsTheCollectivesFlows) {
  CollectiveSimulator simulator(oneNode(), shippedCommunication());
  // A single-node ring has one flow per rank (one channel); all_to_all's n(n-1) pairs run as
  // one bundle per ordered pair of nodes: one inside a node.
  auto ring = simulator.simulate(forcedRingSimple(CollectiveOp::kAllReduce, firstRanks(8), 1.0 * kMiB));
  ASSERT_TRUE(ring.ok());
  // Regression test for a bug found in review (fixed).
  EXPECT_EQ(ring->flows, 8u);
  auto all_to_all = simulator.simulate(CollectiveRequest{CollectiveOp::kAllToAll, firstRanks(4), 1.0 * kMiB, {}, {}});
  ASSERT_TRUE(all_to_all.ok());
  EXPECT_EQ(all_to_all->flows, 1u);
}

// ---------------------------------------------------------------------------------------
// Conservation: every byte of every flow crosses every link of its route once.

void expectBytesConserved(const CollectiveRun& run) {
  double carried = 0.0;
  for (const auto& link : run.summary.links) carried += link.bytes_carried;
  double expected = 0.0;
  std::size_t flows = 0;
  for (sim::TaskId task = 0; task < run.graph.taskCount(); ++task) {
    if (run.graph.kind(task) != sim::TaskKind::kFlow) continue;
    ++flows;
    // A bundle carries its bytes once per member on each link.
    const auto multiplicity = run.graph.routeMultiplicity(run.graph.route(task));
    double crossings = static_cast<double>(run.graph.routeLinks(run.graph.route(task)).size());
    if (!multiplicity.empty()) crossings = std::accumulate(multiplicity.begin(), multiplicity.end(), 0.0);
    expected += run.graph.flowBytes(task) * crossings;
  }
  ASSERT_GT(flows, 0u);
  EXPECT_NEAR(carried / expected, 1.0, 1e-9);
}

double totalFlowBytes(const CollectiveRun& run) {
  double total = 0.0;
  for (sim::TaskId task = 0; task < run.graph.taskCount(); ++task) {
    if (run.graph.kind(task) == sim::TaskKind::kFlow) total += run.graph.flowBytes(task);
  }
  return total;
}

TEST(CollectiveTest, MultiNodeRingConservesBytes) {
  const Cluster cluster = clusterFromYaml(multiNodeYaml(8));
  const CommunicationParameters parameters = shippedCommunication();
  const double size = 64.0 * kMiB;
  const CollectiveRun run =
      runCollective(cluster, parameters, forcedRingSimple(CollectiveOp::kAllReduce, firstRanks(32), size));
  EXPECT_EQ(run.choice.channels, 8);
  expectBytesConserved(run);
  // 8 channels x 32 edges x 2(n-1)/n S / 8 = 2(n-1) S in all (Simple: no protocol overhead).
  EXPECT_NEAR(totalFlowBytes(run) / (2.0 * 31.0 * size), 1.0, 1e-12);
  // Every byte leaves a GPU: the network carries something.
  EXPECT_EQ(run.summary.tasks_finished, run.summary.tasks);
}

TEST(CollectiveTest, MultiNodeTreeConservesBytes) {
  const Cluster cluster = clusterFromYaml(multiNodeYaml(8));
  const CommunicationParameters parameters = shippedCommunication();
  const CollectiveRun run = runCollective(
      cluster, parameters,
      CollectiveRequest{CollectiveOp::kAllReduce, firstRanks(32), 64.0 * kMiB, CollectiveAlgorithm::kTree, {}});
  EXPECT_EQ(run.choice.algorithm, CollectiveAlgorithm::kTree);
  expectBytesConserved(run);
}

// An all-to-all runs one bundle per ordered pair of nodes (4 nodes: 12 between nodes and 4
// inside them), whose links carry every member pair's path; calling it again on the same
// group reuses its routes.
TEST(CollectiveTest, AllToAllRunsABundlePerNodePairAndReusesItsRoutes) {
  const Cluster cluster = clusterFromYaml(multiNodeYaml(8));
  const CommunicationParameters parameters = shippedCommunication();
  Router router(cluster);
  sim::TaskGraph graph;
  CollectiveBuilder builder(cluster, router, graph, parameters);
  const CollectiveRequest request{CollectiveOp::kAllToAll, firstRanks(32), 64.0 * kMiB, {}, {}};
  const CollectiveChoice choice = builder.choose(request).value();
  builder.add(request, choice);
  std::size_t flows = 0;
  double crossings = 0.0;
  for (sim::TaskId task = 0; task < graph.taskCount(); ++task) {
    if (graph.kind(task) != sim::TaskKind::kFlow) continue;
    ++flows;
    const auto multiplicity = graph.routeMultiplicity(graph.route(task));
    ASSERT_FALSE(multiplicity.empty());
    crossings += std::accumulate(multiplicity.begin(), multiplicity.end(), 0.0);
  }
  EXPECT_EQ(flows, 16u);
  // Every ordered pair's path, link by link.
  double expected = 0.0;
  for (int64_t from = 0; from < 32; ++from) {
    for (int64_t to = 0; to < 32; ++to) {
      if (from != to) {
        expected += static_cast<double>(router.route(cluster.accelerator(from), cluster.accelerator(to)).links.size());
      }
    }
  }
  EXPECT_DOUBLE_EQ(crossings, expected);
  const std::size_t routes = graph.routeCount();
  builder.add(request, choice);
  EXPECT_EQ(graph.routeCount(), routes);
}

TEST(CollectiveTest, MultiNodeAllToAllAndLlRingConserveBytes) {
  const Cluster cluster = clusterFromYaml(multiNodeYaml(2));
  const CommunicationParameters parameters = shippedCommunication();
  expectBytesConserved(runCollective(
      cluster, parameters, CollectiveRequest{CollectiveOp::kAllToAll, firstRanks(16, 8), 16.0 * kMiB, {}, {}}));
  const CollectiveRun ll = runCollective(cluster, parameters,
                                         CollectiveRequest{CollectiveOp::kAllReduce, firstRanks(32), 1.0 * kMiB,
                                                           CollectiveAlgorithm::kRing, Protocol::kLL});
  expectBytesConserved(ll);
  // LL puts 1 / protocol_bandwidth_factor[LL] times the payload on the wire.
  const double factor = parameters.protocol_bandwidth_factor[static_cast<std::size_t>(Protocol::kLL)];
  EXPECT_NEAR(totalFlowBytes(ll) / (2.0 * 31.0 * kMiB / factor), 1.0, 1e-12);
}

// ---------------------------------------------------------------------------------------
// Determinism.

TEST(CollectiveTest, SameRequestGivesIdenticalTimes) {
  const Cluster cluster = clusterFromYaml(multiNodeYaml(8));
  const CommunicationParameters parameters = shippedCommunication();
  for (double size : {8.0, 1.0 * kMiB, 256.0 * kMiB}) {
    const CollectiveRequest request{CollectiveOp::kAllReduce, firstRanks(32), size, {}, {}};
    CollectiveSimulator first(cluster, parameters);
    CollectiveSimulator second(cluster, parameters);
    auto a = first.simulate(request);
    auto b = second.simulate(request);
    auto c = first.simulate(request);  // Router cache warm
    ASSERT_TRUE(a.ok() && b.ok() && c.ok());
    EXPECT_EQ(sim::secondsToSimTime(a->time_s), sim::secondsToSimTime(b->time_s)) << size;
    EXPECT_EQ(sim::secondsToSimTime(a->time_s), sim::secondsToSimTime(c->time_s)) << size;
    EXPECT_EQ(a->time_s, c->time_s);
    EXPECT_EQ(a->choice.algorithm, c->choice.algorithm);
    EXPECT_EQ(a->choice.protocol, c->choice.protocol);
    EXPECT_EQ(a->flows, c->flows);
  }
}

TEST(CollectiveTest, ResultDoesNotDependOnRouterCacheState) {
  const Cluster cluster = clusterFromYaml(multiNodeYaml(2));
  const CommunicationParameters parameters = shippedCommunication();
  const std::vector<CollectiveRequest> requests = {
      forcedRingSimple(CollectiveOp::kAllReduce, firstRanks(32), 64.0 * kMiB),
      CollectiveRequest{CollectiveOp::kAllReduce, firstRanks(32), 64.0 * kMiB, CollectiveAlgorithm::kTree, {}},
      CollectiveRequest{CollectiveOp::kAllToAll, firstRanks(16, 4), 8.0 * kMiB, {}, {}},
  };
  for (const auto& request : requests) {
    const CollectiveRun cold = runCollective(cluster, parameters, request);
    // A router that has already answered every pair, in reverse order.
    Router warm(cluster);
    for (int64_t a = cluster.acceleratorCount() - 1; a >= 0; --a) {
      for (int64_t b = cluster.acceleratorCount() - 1; b >= 0; --b) {
        if (a != b) (void)warm.route(cluster.accelerator(a), cluster.accelerator(b));
      }
    }
    const CollectiveRun hot = runCollective(cluster, parameters, request, &warm);
    EXPECT_EQ(cold.makespan, hot.makespan) << collectiveOpName(request.op);
    ASSERT_EQ(cold.graph.taskCount(), hot.graph.taskCount());
    for (sim::TaskId task = 0; task < cold.graph.taskCount(); ++task) {
      if (cold.graph.kind(task) != sim::TaskKind::kFlow) continue;
      const auto cold_links = cold.graph.routeLinks(cold.graph.route(task));
      const auto hot_links = hot.graph.routeLinks(hot.graph.route(task));
      EXPECT_TRUE(std::equal(cold_links.begin(), cold_links.end(), hot_links.begin(), hot_links.end()));
    }
  }
}

// ---------------------------------------------------------------------------------------
// Contention: 8 concurrent data-parallel all-reduces, group g = GPU g of each of 4 nodes.

std::vector<CollectiveRequest> dataParallelGroups(int groups, double size) {
  std::vector<CollectiveRequest> requests;
  for (int g = 0; g < groups; ++g) {
    std::vector<int64_t> ranks;
    for (int node = 0; node < 4; ++node) ranks.push_back(node * 8 + g);
    requests.push_back(forcedRingSimple(CollectiveOp::kAllReduce, ranks, size));
  }
  return requests;
}

TEST(CollectiveTest, ConcurrentAllReducesContendForSharedNics) {
  const Cluster cluster = clusterFromYaml(multiNodeYaml(2));
  const CommunicationParameters parameters = shippedCommunication();
  const double size = 256.0 * kMiB;
  const sim::SimTime alone = runCollectives(cluster, parameters, dataParallelGroups(1, size)).makespan;
  const sim::SimTime together = runCollectives(cluster, parameters, dataParallelGroups(8, size)).makespan;
  // Four groups share each NIC: about four times as long for large messages.
  const double ratio = static_cast<double>(together) / static_cast<double>(alone);
  EXPECT_GT(ratio, 3.5);
  EXPECT_LT(ratio, 4.1);
}

TEST(CollectiveTest, ConcurrentAllReducesWithOwnNicsDoNotSlowDown) {
  const Cluster cluster = clusterFromYaml(multiNodeYaml(8));
  const CommunicationParameters parameters = shippedCommunication();
  const double size = 256.0 * kMiB;
  const sim::SimTime alone = runCollectives(cluster, parameters, dataParallelGroups(1, size)).makespan;
  const sim::SimTime together = runCollectives(cluster, parameters, dataParallelGroups(8, size)).makespan;
  EXPECT_GE(together, alone);
  EXPECT_NEAR(static_cast<double>(together) / static_cast<double>(alone), 1.0, 0.01);
}

// With a NIC per two GPUs, the channels enter each node at GPUs 0, 2, 4, 6, one per NIC, as
// NCCL's ring search gives each channel its own NET: 4 NICs of 400 Gb/s carry a whole-node ring
// as fast as 8 of 200 Gb/s (not half as fast, on two of the four NICs).
TEST(CollectiveTest, RingChannelsSpreadOverEveryNicWhenNicsAreFewerThanGpus) {
  const CommunicationParameters parameters = zeroLatencyParameters();
  const CollectiveRequest request = forcedRingSimple(CollectiveOp::kAllGather, firstRanks(32), 1024.0 * kMiB);
  const CollectiveRun eight = runCollective(clusterFromYaml(multiNodeYaml(8, 4, 200)), parameters, request);
  const CollectiveRun four = runCollective(clusterFromYaml(multiNodeYaml(4, 4, 400)), parameters, request);
  EXPECT_EQ(four.choice.channels, 4);
  EXPECT_NEAR(static_cast<double>(four.makespan) / static_cast<double>(eight.makespan), 1.0, 0.01);
}

TEST(CollectiveTest, ChannelEntryGpusSpreadOverTheNodeWhenChannelsAreFewer) {
  auto entries = [](int channels, std::size_t gpus) {
    std::vector<std::size_t> result;
    for (int c = 0; c < channels; ++c) result.push_back(detail::channelEntryIndex(c, channels, gpus));
    return result;
  };
  EXPECT_EQ(entries(4, 8), (std::vector<std::size_t>{0, 2, 4, 6}));
  EXPECT_EQ(entries(3, 8), (std::vector<std::size_t>{0, 2, 5}));
  EXPECT_EQ(entries(1, 8), (std::vector<std::size_t>{0}));
  EXPECT_EQ(entries(8, 8), (std::vector<std::size_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(entries(2, 2), (std::vector<std::size_t>{0, 1}));
  EXPECT_EQ(entries(12, 8), (std::vector<std::size_t>{0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3}));
}

// The same for the double binary tree's head GPUs: on slow NICs (network-bound, below the
// tree's bus-bandwidth cap) 4 NICs of 50 Gb/s carry the tree as fast as 8 of 25 Gb/s.
TEST(CollectiveTest, TreeHeadsSpreadOverEveryNicWhenNicsAreFewerThanGpus) {
  const CommunicationParameters parameters = zeroLatencyParameters();
  const CollectiveRequest request{CollectiveOp::kAllReduce, firstRanks(32), 1024.0 * kMiB, CollectiveAlgorithm::kTree,
                                  Protocol::kSimple};
  const CollectiveRun eight = runCollective(clusterFromYaml(multiNodeYaml(8, 4, 25)), parameters, request);
  const CollectiveRun four = runCollective(clusterFromYaml(multiNodeYaml(4, 4, 50)), parameters, request);
  EXPECT_EQ(four.choice.channels, 4);
  EXPECT_NEAR(static_cast<double>(four.makespan) / static_cast<double>(eight.makespan), 1.0, 0.01);
}

// The tuner's choice on `per_node` GPUs of each of `nodes` nodes of a preset.
Expected<CollectiveChoice> chooseOnPreset(const std::string& preset, int nodes, int per_node,
                                          const CommunicationParameters& parameters, double bytes,
                                          std::optional<CollectiveAlgorithm> algorithm,
                                          std::optional<Protocol> protocol = std::nullopt) {
  const Cluster cluster = presetCluster(preset, {parseOverride("nodes=" + std::to_string(nodes))});
  std::vector<int64_t> ranks;
  for (int node = 0; node < nodes; ++node) {
    for (int g = 0; g < per_node; ++g) ranks.push_back(int64_t{node} * cluster.spec().gpus_per_node + g);
  }
  Router router(cluster);
  const NcclTuner tuner(cluster, router, parameters);
  return tuner.choose(CollectiveRequest{CollectiveOp::kAllReduce, ranks, bytes, algorithm, protocol});
}

// A tree's bus bandwidth is capped at NCCL's channels x its per-channel cap for the GPU's
// generation and node count (perChMaxTreeBws, tuning.cc at 5067397c), not at the fixed
// 110 / 80 GB/s of NCCL 2.7 and earlier: a channel per NIC (8 on a DGX, 4 on a p4de), no more than it
// takes to fill the GPUs' NVLink at a NIC's rate (15 of a GB200 rack's 72 NICs: 684 GB/s of
// NVLink over 47 GB/s), doubled where a channel carries >= 25 GB/s and, after Ampere, there
// are at most 4 of them (2 GPUs per H100 node; not on A100's 23.5 GB/s HDR channels).
TEST(CollectiveTest, TreeCapIsNcclsChannelsTimesItsPerChannelCap) {
  const CommunicationParameters parameters = shippedCommunication();
  const auto cap_GBps = [&](const std::string& preset, int nodes, int per_node) {
    const auto choice = chooseOnPreset(preset, nodes, per_node, parameters, 1.0 * kGiB, CollectiveAlgorithm::kTree);
    EXPECT_TRUE(choice.ok()) << choice.error().toString();
    return choice.ok() ? choice->tree_max_bus_Bps / 1e9 : 0.0;
  };
  EXPECT_NEAR(cap_GBps("dgx-a100", 2, 8), 8 * 23.6, 1e-9);
  EXPECT_NEAR(cap_GBps("dgx-a100", 4, 8), 8 * 17.8, 1e-9);
  EXPECT_NEAR(cap_GBps("dgx-a100", 4, 2), 2 * 17.8, 1e-9);
  EXPECT_NEAR(cap_GBps("aws-p4de", 2, 8), 4 * 23.6, 1e-9);
  EXPECT_NEAR(cap_GBps("dgx-h100", 2, 8), 8 * 41.4, 1e-9);
  EXPECT_NEAR(cap_GBps("dgx-h100", 4, 8), 8 * 36.0, 1e-9);
  EXPECT_NEAR(cap_GBps("dgx-h100", 4, 2), 4 * 36.0, 1e-9);
  EXPECT_NEAR(cap_GBps("coreweave-gb200", 20, 72), 15 * 24.0, 1e-9);
  // A whole-tree cap given (as a calibration or --set may) still caps it, below the channels'.
  CommunicationParameters whole = parameters;
  whole.tree_max_bus_GBps_more_nodes = 80.0;
  const auto capped = chooseOnPreset("dgx-h100", 4, 8, whole, 1.0 * kGiB, CollectiveAlgorithm::kTree);
  ASSERT_TRUE(capped.ok());
  EXPECT_NEAR(capped->tree_max_bus_Bps / 1e9, 80.0, 1e-9);
  const auto two_nodes = chooseOnPreset("dgx-h100", 2, 8, whole, 1.0 * kGiB, CollectiveAlgorithm::kTree);
  ASSERT_TRUE(two_nodes.ok());
  EXPECT_NEAR(two_nodes->tree_max_bus_Bps / 1e9, 8 * 41.4, 1e-9);  // the two-node one unset
  // Only trees carry a cap.
  const auto ring = chooseOnPreset("dgx-h100", 2, 8, parameters, 1.0 * kGiB, CollectiveAlgorithm::kRing);
  ASSERT_TRUE(ring.ok());
  EXPECT_EQ(ring->tree_max_bus_Bps, 0.0);
}

// NCCL's caps on the LL and LL128 protocols (tuning.cc at 5067397c): LL at llMaxBws (by GPU
// class inside one node; across nodes 39.0 on 2 nodes and 20.4 on more on Intel hosts, 22.5
// and 19.0 on AMD hosts), LL128 across nodes at its channels x perChMaxRingLL128Bws /
// perChMaxTreeLL128Bws. Simple and NVLS have none.
TEST(CollectiveTest, ProtocolCapsAreNcclsLlMaxAndLl128PerChannelCaps) {
  const CommunicationParameters parameters = shippedCommunication();
  const auto cap_GBps = [&](const std::string& preset, int nodes, int per_node, CollectiveAlgorithm algorithm,
                            Protocol protocol) {
    const auto choice = chooseOnPreset(preset, nodes, per_node, parameters, 1.0 * kMiB, algorithm, protocol);
    EXPECT_TRUE(choice.ok()) << choice.error().toString();
    return choice.ok() ? choice->protocol_max_bus_Bps / 1e9 : -1.0;
  };
  using A = CollectiveAlgorithm;
  using P = Protocol;
  EXPECT_NEAR(cap_GBps("dgx-a100", 1, 8, A::kRing, P::kLL), 87.7, 1e-9);
  EXPECT_NEAR(cap_GBps("dgx-h100", 1, 8, A::kRing, P::kLL), 141.0, 1e-9);
  EXPECT_NEAR(cap_GBps("dgx-b200", 1, 8, A::kRing, P::kLL), 282.0, 1e-9);
  EXPECT_NEAR(cap_GBps("dgx-h100", 2, 8, A::kRing, P::kLL), 39.0, 1e-9);  // Intel hosts
  EXPECT_NEAR(cap_GBps("dgx-h100", 4, 8, A::kTree, P::kLL), 20.4, 1e-9);
  EXPECT_NEAR(cap_GBps("dgx-a100", 2, 8, A::kRing, P::kLL), 22.5, 1e-9);  // AMD hosts
  EXPECT_NEAR(cap_GBps("dgx-a100", 4, 8, A::kTree, P::kLL), 19.0, 1e-9);
  EXPECT_NEAR(cap_GBps("oci-gb200", 2, 4, A::kRing, P::kLL), 39.0, 1e-9);  // Grace: NCCL's other hosts
  // A DGX H100 takes 8 channels across nodes (the tree cap test above).
  EXPECT_NEAR(cap_GBps("dgx-h100", 2, 8, A::kRing, P::kLL128), 8 * 36.7, 1e-9);
  EXPECT_NEAR(cap_GBps("dgx-h100", 2, 8, A::kTree, P::kLL128), 8 * 36.7, 1e-9);
  EXPECT_NEAR(cap_GBps("dgx-h100", 4, 8, A::kTree, P::kLL128), 8 * 29.0, 1e-9);
  EXPECT_EQ(cap_GBps("dgx-h100", 1, 8, A::kRing, P::kLL128), 0.0);  // NCCL's channels inside a node: not modelled
  EXPECT_EQ(cap_GBps("dgx-h100", 2, 8, A::kRing, P::kSimple), 0.0);
  EXPECT_EQ(cap_GBps("dgx-h100", 1, 8, A::kNvls, P::kSimple), 0.0);
}

// Simulated, a ring of LL across two DGX A100 moves its payload at the LL cap of AMD hosts,
// 22.5 GB/s of bus bandwidth, where half the NICs' 8 x 25 GB/s x 0.94 would allow 94; and the
// tree's LL runs
// at 1/3.8 of Simple's, its wire bytes 3.8 times Simple's (above 512 MiB, where NCCL's size
// correction is 1 for both).
TEST(CollectiveTest, LlRunsAtItsCapAcrossNodesAndTheTreesLlAtItsOwnFactor) {
  CommunicationParameters parameters = zeroLatencyParameters();
  const Cluster cluster = presetCluster("dgx-a100", {parseOverride("nodes=2")});
  CollectiveSimulator simulator(cluster, parameters);
  const double size = 256.0 * kMiB;
  auto ring = simulator.simulate(
      CollectiveRequest{CollectiveOp::kAllReduce, firstRanks(16), size, CollectiveAlgorithm::kRing, Protocol::kLL});
  ASSERT_TRUE(ring.ok()) << ring.error().toString();
  EXPECT_NEAR(ring->busbw_Bps / 22.5e9, 1.0, 0.005);  // the links' own latencies aside
  // Without the cap: half the NICs' rate (LL's factor .5).
  parameters.ll_max_bus_GBps_amd_host_two_nodes = 1000.0;
  CollectiveSimulator uncapped(cluster, parameters);
  auto free_ring = uncapped.simulate(
      CollectiveRequest{CollectiveOp::kAllReduce, firstRanks(16), size, CollectiveAlgorithm::kRing, Protocol::kLL});
  ASSERT_TRUE(free_ring.ok());
  EXPECT_NEAR(free_ring->busbw_Bps / (8 * 25e9 * 0.94 * 0.5), 1.0, 0.02);
  const CollectiveRun tree = runCollective(cluster, parameters,
                                           CollectiveRequest{CollectiveOp::kAllReduce, firstRanks(16), 1.0 * kGiB,
                                                             CollectiveAlgorithm::kTree, Protocol::kLL});
  const CollectiveRun simple_tree =
      runCollective(cluster, parameters,
                    CollectiveRequest{CollectiveOp::kAllReduce, firstRanks(16), 1.0 * kGiB, CollectiveAlgorithm::kTree,
                                      Protocol::kSimple});
  EXPECT_NEAR(totalFlowBytes(tree) / totalFlowBytes(simple_tree), 3.8, 1e-9);
}

// NCCL before 2.21.5 priced a ring's LL at a quarter of Simple's (tuning.cc at v2.20.5-1): with
// nccl_version 22005 the ring puts four times the payload on the wire, from 22105 twice; the
// tree's LL is 1/3.8 in either.
TEST(CollectiveTest, ARingsLlFactorFollowsTheNcclRelease) {
  CommunicationParameters parameters = shippedCommunication();
  EXPECT_EQ(parameters.protocolBandwidthFactor(CollectiveAlgorithm::kRing, Protocol::kLL), 0.5);
  parameters.nccl_version = 22105;
  EXPECT_EQ(parameters.protocolBandwidthFactor(CollectiveAlgorithm::kRing, Protocol::kLL), 0.5);
  parameters.nccl_version = 22005;
  EXPECT_EQ(parameters.protocolBandwidthFactor(CollectiveAlgorithm::kRing, Protocol::kLL), 0.25);
  EXPECT_EQ(parameters.protocolBandwidthFactor(CollectiveAlgorithm::kDirect, Protocol::kLL), 0.25);
  EXPECT_EQ(parameters.protocolBandwidthFactor(CollectiveAlgorithm::kRing, Protocol::kLL128), 0.92);
  EXPECT_DOUBLE_EQ(parameters.protocolBandwidthFactor(CollectiveAlgorithm::kTree, Protocol::kLL), 1.0 / 3.8);
  const Cluster cluster = clusterFromYaml(multiNodeYaml(2));
  const CollectiveRequest request{CollectiveOp::kAllReduce, firstRanks(32), 1.0 * kMiB, CollectiveAlgorithm::kRing,
                                  Protocol::kLL};
  const CollectiveRun old_ll = runCollective(cluster, parameters, request);
  EXPECT_NEAR(totalFlowBytes(old_ll) / (2.0 * 31.0 * kMiB / 0.25), 1.0, 1e-12);
}

// Up to 2 nodes NCCL prices the tree at its graph's NVLink channel rate (at most the
// per-channel cap) against the ring's NIC rate (tuning.cc: bw = nNodes <= 2 ? bwIntra :
// bwInter): with 100 Gb/s NICs (p4de: 12.5 GB/s a channel against A100's 23.6 cap) the tree
// wins large all-reduces, as the 2-node p4de log's 78 GB/s bus bandwidth (above a ring's 50
// GB/s through 4 NICs) shows; with 200 Gb/s NICs (a DGX A100's 25 GB/s) the ring still does,
// and from 3 nodes on, where NCCL prices both at the NIC's rate, the ring on the p4de too.
TEST(CollectiveTest, UpToTwoNodesTheTreeIsPricedAtItsNvlinkChannelRate) {
  const CommunicationParameters parameters = shippedCommunication();
  const auto algorithm = [&](const std::string& preset, int nodes) {
    const auto choice = chooseOnPreset(preset, nodes, 8, parameters, 1.0 * kGiB, std::nullopt, Protocol::kSimple);
    EXPECT_TRUE(choice.ok()) << choice.error().toString();
    return choice.ok() ? choice->algorithm : CollectiveAlgorithm::kDirect;
  };
  EXPECT_EQ(algorithm("aws-p4de", 2), CollectiveAlgorithm::kTree);
  EXPECT_EQ(algorithm("dgx-a100", 2), CollectiveAlgorithm::kRing);
  EXPECT_EQ(algorithm("aws-p4de", 4), CollectiveAlgorithm::kRing);
  // NCCL's search sees nominal rates: a measured network efficiency does not move the choice.
  for (const char* efficiency : {"0.5", "0.999"}) {
    const Cluster cluster = presetCluster(
        "aws-p4de", {parseOverride("nodes=2"), parseOverride(std::string("inter_node.efficiency=") + efficiency)});
    std::vector<int64_t> ranks(16);
    for (int64_t r = 0; r < 16; ++r) ranks[static_cast<std::size_t>(r)] = r;
    Router router(cluster);
    const NcclTuner tuner(cluster, router, parameters);
    const auto choice =
        tuner.choose(CollectiveRequest{CollectiveOp::kAllReduce, ranks, 1.0 * kGiB, std::nullopt, Protocol::kSimple});
    ASSERT_TRUE(choice.ok()) << choice.error().toString();
    EXPECT_EQ(choice->algorithm, CollectiveAlgorithm::kTree) << efficiency;
  }
  // One GPU a node has no NVLink path for the tree's search to raise: the ring, as before.
  const auto one_per_node = chooseOnPreset("aws-p4de", 2, 1, parameters, 1.0 * kGiB, std::nullopt, Protocol::kSimple);
  ASSERT_TRUE(one_per_node.ok()) << one_per_node.error().toString();
  EXPECT_EQ(one_per_node->algorithm, CollectiveAlgorithm::kRing);
}

// A cluster's inter_node.nccl_protocols (NCCL_PROTO as the network's plugin sets it) leaves
// the others out of the choice at every size; a forced --proto still runs, and forcing NVLS
// where Simple is left out is refused.
TEST(CollectiveTest, TheClustersNcclProtocolsBoundTheChoice) {
  const CommunicationParameters parameters = shippedCommunication();
  for (double bytes : {8.0, 64.0 * 1024.0, 4.0 * 1024.0 * 1024.0, 1.0 * kGiB}) {
    const auto choice = chooseOnPreset("aws-p4de", 2, 8, parameters, bytes, std::nullopt);
    ASSERT_TRUE(choice.ok()) << choice.error().toString();
    EXPECT_EQ(choice->protocol, Protocol::kSimple) << bytes;
  }
  const auto forced = chooseOnPreset("aws-p4de", 2, 8, parameters, 8.0, std::nullopt, Protocol::kLL);
  ASSERT_TRUE(forced.ok()) << forced.error().toString();
  EXPECT_EQ(forced->protocol, Protocol::kLL);
  const Cluster cluster =
      presetCluster("dgx-h100", {parseOverride("nodes=2"), parseOverride("inter_node.nccl_protocols=[LL]")});
  std::vector<int64_t> ranks(16);
  for (int64_t r = 0; r < 16; ++r) ranks[static_cast<std::size_t>(r)] = r;
  Router router(cluster);
  const NcclTuner tuner(cluster, router, parameters);
  const auto nvls = tuner.choose(
      CollectiveRequest{CollectiveOp::kAllReduce, ranks, 1.0 * kGiB, CollectiveAlgorithm::kNvlsTree, std::nullopt});
  ASSERT_FALSE(nvls.ok());
  EXPECT_NE(nvls.error().toString().find("nccl_protocols"), std::string::npos) << nvls.error().toString();
  const auto any =
      tuner.choose(CollectiveRequest{CollectiveOp::kAllReduce, ranks, 1.0 * kGiB, std::nullopt, std::nullopt});
  ASSERT_TRUE(any.ok()) << any.error().toString();
  EXPECT_EQ(any->protocol, Protocol::kLL);
}

// The simulated tree runs at most at that cap: 20 GB200 racks reach 286 GB/s of tree bus
// bandwidth at 2 GiB in CoreWeave's nccl-tests log (configs/validation/collectives.yaml);
// under the old 80 GB/s cap the tree stayed below 80, under 15 x 24 GB/s it passes 200.
TEST(CollectiveTest, TwentyGb200RacksRunTheirTreeAboveTheOldFixedCap) {
  const Cluster cluster = presetCluster("coreweave-gb200", {parseOverride("intra_node.nvls=false")});
  CollectiveSimulator simulator(cluster, shippedCommunication());
  std::vector<int64_t> ranks(static_cast<std::size_t>(cluster.acceleratorCount()));
  std::iota(ranks.begin(), ranks.end(), int64_t{0});
  const auto result = simulator.simulate(
      CollectiveRequest{CollectiveOp::kAllReduce, ranks, 2.0 * kGiB, CollectiveAlgorithm::kTree, Protocol::kSimple});
  ASSERT_TRUE(result.ok()) << result.error().toString();
  EXPECT_GT(result->busbw_Bps, 200e9);
  EXPECT_LT(result->busbw_Bps, 15 * 24.0e9);
}

// The cap changes the choice where it binds in the tuner's estimate: with one GPU on each of
// 64 DGX A100 nodes the tree runs one channel of 23.5 GB/s, capped at Ampere's 17.8 GB/s on
// more than 2 nodes, and the ring runs over each GPU's own NIC (23.5 GB/s); a Simple
// all-reduce of 24 MiB then goes to the ring, where the old 80 GB/s cap (the tree then at 0.9
// of the NIC's 23.5 GB/s) kept the tree, which it still takes at 16 MiB.
TEST(CollectiveTest, NcclsPerChannelTreeCapMovesOneGpuPerNodeGroupsToTheRingSooner) {
  const CommunicationParameters shipped = shippedCommunication();
  CommunicationParameters fixed_cap = shipped;  // one channel at the old 80 GB/s total
  fixed_cap.tree_max_bus_GBps_per_channel[static_cast<std::size_t>(NcclGpuClass::kAmpere)][1] = 80.0;
  const auto choose = [](const CommunicationParameters& parameters, double bytes) {
    const auto choice = chooseOnPreset("dgx-a100", 64, 1, parameters, bytes, std::nullopt, Protocol::kSimple);
    EXPECT_TRUE(choice.ok()) << choice.error().toString();
    return choice.ok() ? choice->algorithm : CollectiveAlgorithm::kDirect;
  };
  const auto tree = chooseOnPreset("dgx-a100", 64, 1, shipped, 8.0 * kMiB, CollectiveAlgorithm::kTree);
  ASSERT_TRUE(tree.ok());
  EXPECT_NEAR(tree->tree_max_bus_Bps, 17.8e9, 1.0);
  EXPECT_EQ(choose(shipped, 24.0 * kMiB), CollectiveAlgorithm::kRing);
  EXPECT_EQ(choose(fixed_cap, 24.0 * kMiB), CollectiveAlgorithm::kTree);
  EXPECT_EQ(choose(shipped, 16.0 * kMiB), CollectiveAlgorithm::kTree);
}

// NCCL 2.18+: an intra-node step of a ring that spans nodes costs at least the proxy's network
// overhead, 1 us (3 us for Simple): an LL ring over 2 DGX H100 nodes pays its 28 NVLink steps
// at 1.0 us instead of 0.6; Simple's 3.4 us steps are above 3 us and do not move.
TEST(CollectiveTest, MultiNodeRingIntraNodeStepsCostAtLeastTheNetOverhead) {
  const CommunicationParameters shipped = shippedCommunication();
  CommunicationParameters without = shipped;
  without.ring_net_overhead_us = 0.0;
  const auto estimate = [](const CommunicationParameters& parameters, Protocol protocol, int nodes) {
    const auto choice = chooseOnPreset("dgx-h100", nodes, 8, parameters, 4096.0, CollectiveAlgorithm::kRing, protocol);
    EXPECT_TRUE(choice.ok()) << choice.error().toString();
    return choice.ok() ? choice->estimated_time_s : 0.0;
  };
  EXPECT_NEAR(estimate(shipped, Protocol::kLL, 2) - estimate(without, Protocol::kLL, 2), 28.0 * 0.4e-6, 1e-12);
  EXPECT_EQ(estimate(shipped, Protocol::kSimple, 2), estimate(without, Protocol::kSimple, 2));
  EXPECT_EQ(estimate(shipped, Protocol::kLL, 1), estimate(without, Protocol::kLL, 1));
  // On AMD hosts (a DGX A100's pcie.host_cpu: amd) NCCL's overhead is 2 us: 1.4 us above the
  // LL NVLink step on each of the 28 intra-node steps.
  without.ring_net_overhead_amd_host_us = 0.0;
  const auto on_amd = [](const CommunicationParameters& parameters) {
    const auto choice = chooseOnPreset("dgx-a100", 2, 8, parameters, 4096.0, CollectiveAlgorithm::kRing, Protocol::kLL);
    EXPECT_TRUE(choice.ok()) << choice.error().toString();
    return choice.ok() ? choice->estimated_time_s : 0.0;
  };
  EXPECT_NEAR(on_amd(shipped) - on_amd(without), 28.0 * 1.4e-6, 1e-12);
}

// A cluster's measured network efficiency (inter_node.efficiency) replaces the protocol's: at
// half of InfiniBand's default a network-bound ring takes twice as long.
TEST(CollectiveTest, AClustersMeasuredNetworkEfficiencyReplacesTheProtocolDefault) {
  CommunicationParameters parameters = zeroLatencyParameters();
  const CollectiveRequest request = forcedRingSimple(CollectiveOp::kAllGather, firstRanks(32), 1024.0 * kMiB);
  const std::string half = "  efficiency: " + std::to_string(parameters.infiniband_efficiency / 2.0) + "\n";
  const CollectiveRun shipped = runCollective(clusterFromYaml(multiNodeYaml(8)), parameters, request);
  const CollectiveRun measured = runCollective(clusterFromYaml(multiNodeYaml(8, 4, 200, half)), parameters, request);
  EXPECT_NEAR(static_cast<double>(measured.makespan) / static_cast<double>(shipped.makespan), 2.0, 0.02);
}

// Rail-optimized fabric: a ring leaves each node through the NIC it entered by (NCCL's
// ring search keeps inter-node hops on one rail), so a group with 2 GPUs per node runs 2
// channels on 2 rails and reaches about twice the bus bandwidth of 1 GPU per node; no
// flow crosses the spine.
TEST(CollectiveTest, MultiNodeRingStaysOnRailsOfARailOptimizedFabric) {
  const Cluster cluster = presetCluster("h100-superpod-16k", {parseOverride("nodes=8")});
  const CommunicationParameters parameters = shippedCommunication();
  const auto ranks = [](int per_node) {
    std::vector<int64_t> result;
    for (int node = 0; node < 8; ++node) {
      for (int g = 0; g < per_node; ++g) result.push_back(node * 8 + g);
    }
    return result;
  };
  CollectiveSimulator simulator(cluster, parameters);
  auto one = simulator.simulate(forcedRingSimple(CollectiveOp::kReduceScatter, ranks(1), 1.0 * kGiB));
  auto two = simulator.simulate(forcedRingSimple(CollectiveOp::kReduceScatter, ranks(2), 1.0 * kGiB));
  ASSERT_TRUE(one.ok()) << one.error().toString();
  ASSERT_TRUE(two.ok()) << two.error().toString();
  EXPECT_GT(two->busbw_Bps / one->busbw_Bps, 1.8);

  Router router(cluster);
  const CollectiveRun run =
      runCollective(cluster, parameters, forcedRingSimple(CollectiveOp::kReduceScatter, ranks(2), 1.0 * kGiB), &router);
  for (std::size_t r = 0; r < run.graph.routeCount(); ++r) {
    for (auto link : run.graph.routeLinks(static_cast<sim::RouteId>(r))) {
      const auto& to = cluster.device(cluster.link(link).to);
      EXPECT_NE(to.kind, topology::DeviceKind::kSpineSwitch) << "route " << r << " crosses rails";
    }
  }
}

// ---------------------------------------------------------------------------------------
// NVLS.

TEST(CollectiveTest, NvlsOnDgxH100ReachesNvlsEfficiencyOfNvLink) {
  const Cluster cluster = presetCluster("dgx-h100");
  const CommunicationParameters parameters = shippedCommunication();
  CollectiveSimulator simulator(cluster, parameters);
  auto result = simulator.simulate(CollectiveRequest{CollectiveOp::kAllReduce, firstRanks(8), 8.0 * kGiB, {}, {}});
  ASSERT_TRUE(result.ok()) << result.error().toString();
  EXPECT_EQ(result->choice.algorithm, CollectiveAlgorithm::kNvls);
  EXPECT_EQ(result->choice.protocol, Protocol::kSimple);
  const double expected_busbw = parameters.nvls_efficiency * 450e9 * 2.0 * 7.0 / 8.0;
  EXPECT_NEAR(result->busbw_Bps / expected_busbw, 1.0, 0.01);
}

TEST(CollectiveTest, NvlsChunksFollowNcclsRuleBySize) {
  const CommunicationParameters parameters = shippedCommunication();
  const auto hopper = NcclGpuClass::kHopper;
  // 8 H100: 16 channels x 8 heads = 128 concurrent chunks; 128 KiB from 64 x 128 x 128 KiB
  // = 1 GiB, 64 KiB from 8 x 128 x 64 KiB = 64 MiB, 32 KiB from 2 x 128 x 32 KiB = 8 MiB.
  EXPECT_EQ(parameters.nvlsChunkBytes(false, 1.0 * kGiB, hopper, 8.0, 1), 131072.0);
  EXPECT_EQ(parameters.nvlsChunkBytes(false, 1.0 * kGiB - 1.0, hopper, 8.0, 1), 65536.0);
  EXPECT_EQ(parameters.nvlsChunkBytes(false, 64.0 * kMiB, hopper, 8.0, 1), 65536.0);
  EXPECT_EQ(parameters.nvlsChunkBytes(false, 64.0 * kMiB - 1.0, hopper, 8.0, 1), 32768.0);
  EXPECT_EQ(parameters.nvlsChunkBytes(false, 8.0 * kMiB, hopper, 8.0, 1), 32768.0);
  EXPECT_EQ(parameters.nvlsChunkBytes(false, 8.0 * kMiB - 1.0, hopper, 8.0, 1), 16384.0);
  EXPECT_EQ(parameters.nvlsChunkBytes(false, 1024.0, hopper, 8.0, 1), 16384.0);
  // NVLS_TREE: 128 KiB down to 64 KiB below 4 x 128 x 128 KiB = 64 MiB and 32 KiB below
  // 1 x 128 x 64 KiB = 8 MiB; from 4 nodes on it starts at 64 KiB.
  EXPECT_EQ(parameters.nvlsChunkBytes(true, 64.0 * kMiB, hopper, 8.0, 2), 131072.0);
  EXPECT_EQ(parameters.nvlsChunkBytes(true, 64.0 * kMiB - 1.0, hopper, 8.0, 2), 65536.0);
  EXPECT_EQ(parameters.nvlsChunkBytes(true, 8.0 * kMiB - 1.0, hopper, 8.0, 2), 32768.0);
  EXPECT_EQ(parameters.nvlsChunkBytes(true, 1.0 * kGiB, hopper, 8.0, 4), 65536.0);
  // Blackwell runs 24 NVLS channels in one node: 64 KiB below 64 x 192 x 128 KiB = 1.5 GiB.
  EXPECT_EQ(parameters.nvlsChunkBytes(false, 1.5 * kGiB - 1.0, NcclGpuClass::kBlackwell, 8.0, 1), 65536.0);
  EXPECT_EQ(parameters.nvlsChunkBytes(false, 1.5 * kGiB, NcclGpuClass::kBlackwell, 8.0, 1), 131072.0);
  // An NVL72 rack of 72 GPUs has at most 32 heads (NCCL_MAX_NVLS_ARITY from 2.21.5; 8 before):
  // 128 KiB from 64 x 24 x 32 x 128 KiB = 6 GiB, and before 2.21.5 from 64 x 24 x 8 x 128 KiB.
  EXPECT_EQ(parameters.nvlsChunkBytes(false, 6.0 * kGiB, NcclGpuClass::kBlackwell, 72.0, 1), 131072.0);
  EXPECT_EQ(parameters.nvlsChunkBytes(false, 6.0 * kGiB - 1.0, NcclGpuClass::kBlackwell, 72.0, 1), 65536.0);
  CommunicationParameters older = parameters;
  older.nccl_version = 22005;
  EXPECT_EQ(older.nvlsChunkBytes(false, 1.5 * kGiB, NcclGpuClass::kBlackwell, 72.0, 1), 131072.0);
  EXPECT_EQ(older.nvlsChunkBytes(false, 1.5 * kGiB - 1.0, NcclGpuClass::kBlackwell, 72.0, 1), 65536.0);
}

// NCCL 2.30 sets NVLS's channels and chunks on multi-node Blackwell by node count, GPUs a
// node and NIC rate (ncclNvlsTreeSm100Tuning, src/transport/nvls.cc at 5067397c); earlier
// releases and other GPUs keep the defaults.
TEST(CollectiveTest, NvlsSetupFollowsNccl230sBlackwellTuning) {
  const CommunicationParameters parameters = shippedCommunication();
  ASSERT_GE(parameters.nccl_version, kNcclNvlsSm100TuningVersion);
  const auto blackwell = NcclGpuClass::kBlackwell;
  const NvlsNetworkPath dgx_b200{50.0, true};  // 400 Gb/s NIC under the GPU's PCIe switch
  const NvlsNetworkPath grace_400g{50.0, false};
  const NvlsNetworkPath x86_800g{100.0, true};
  // Two 8-GPU nodes, 400 Gb/s NICs under the GPUs' switches: 32 channels, the tree's largest
  // chunk 64 KiB (it was 128 KiB, NVLS's).
  NvlsSetup setup = parameters.nvlsSetup(blackwell, 2, 8.0, dgx_b200);
  EXPECT_EQ(setup.channels, 32.0);
  EXPECT_EQ(setup.chunk_bytes, 131072.0);
  EXPECT_EQ(setup.tree_max_chunk_bytes, 65536.0);
  EXPECT_EQ(parameters.nvlsChunkBytes(true, 1.0 * kGiB, blackwell, 8.0, 2, dgx_b200), 65536.0);
  // 4 GPUs a node (GB200 trays): 256 KiB chunks, for NVLS_TREE too.
  setup = parameters.nvlsSetup(blackwell, 2, 4.0, grace_400g);
  EXPECT_EQ(setup.chunk_bytes, 262144.0);
  EXPECT_EQ(setup.tree_max_chunk_bytes, 262144.0);
  EXPECT_EQ(parameters.nvlsChunkBytes(true, 1.0 * kGiB, blackwell, 4.0, 2, grace_400g), 262144.0);
  // Four 8-GPU nodes on 800 Gb/s NICs: 24 channels and 256 KiB chunks.
  setup = parameters.nvlsSetup(blackwell, 4, 8.0, x86_800g);
  EXPECT_EQ(setup.channels, 24.0);
  EXPECT_EQ(setup.tree_max_chunk_bytes, 262144.0);
  // NVL72 racks on 400 Gb/s NICs behind Grace: 24 channels, the tree's largest chunk 128 KiB
  // where four or more nodes took 64 KiB.
  setup = parameters.nvlsSetup(blackwell, 4, 72.0, grace_400g);
  EXPECT_EQ(setup.channels, 24.0);
  EXPECT_EQ(setup.tree_max_chunk_bytes, 131072.0);
  // No network path known (0 GB/s): NCCL's fallbacks.
  setup = parameters.nvlsSetup(blackwell, 4, 8.0);
  EXPECT_EQ(setup.channels, parameters.nvls_channels[static_cast<std::size_t>(blackwell)][1]);
  EXPECT_EQ(setup.tree_max_chunk_bytes, parameters.nvls_tree_max_chunk_bytes_four_nodes);
  // NCCL 2.29 and Hopper: the defaults.
  CommunicationParameters older = parameters;
  older.nccl_version = 22907;
  EXPECT_EQ(older.nvlsSetup(blackwell, 2, 8.0, dgx_b200).tree_max_chunk_bytes, 131072.0);
  EXPECT_EQ(older.nvlsChunkBytes(true, 1.0 * kGiB, blackwell, 8.0, 2, dgx_b200), 131072.0);
  setup = parameters.nvlsSetup(NcclGpuClass::kHopper, 2, 8.0, dgx_b200);
  EXPECT_EQ(setup.channels, parameters.nvls_channels[static_cast<std::size_t>(NcclGpuClass::kHopper)][1]);
  EXPECT_EQ(setup.tree_max_chunk_bytes, 131072.0);
}

TEST(CollectiveTest, SmallNvlsChunksReachLessOfTheNvlsBandwidth) {
  CommunicationParameters parameters = shippedCommunication();
  parameters.nvls_chunk_overhead_us = 1.0;
  // 1 us a chunk at 32 GB/s a channel is 32,000 bytes: (1 + 32000 / 131072) / (1 + 32000 / c).
  EXPECT_DOUBLE_EQ(parameters.nvlsChunkEfficiency(131072.0, 32e9), 1.0);
  EXPECT_DOUBLE_EQ(parameters.nvlsChunkEfficiency(16384.0, 32e9),
                   (1.0 + 32000.0 / 131072.0) / (1.0 + 32000.0 / 16384.0));
  parameters.nvls_chunk_overhead_us = 0.0;
  EXPECT_DOUBLE_EQ(parameters.nvlsChunkEfficiency(16384.0, 32e9), 1.0);

  // On 8 H100 a 16 MiB all-reduce (32 KiB chunks) moves its bytes at that share of the NVLS
  // rate, a 1 GiB one (128 KiB) at the whole of it.
  const Cluster cluster = presetCluster("dgx-h100");
  CommunicationParameters without = zeroLatencyParameters();
  without.nvls_chunk_overhead_us = 0.0;
  CommunicationParameters with = without;
  with.nvls_chunk_overhead_us = 0.66;
  const double channel_Bps = 450e9 * with.nvlsEfficiency("h100-sxm") / 16.0;
  for (const auto& [bytes, chunk] : {std::pair{16.0 * kMiB, 32768.0}, std::pair{1.0 * kGiB, 131072.0}}) {
    const CollectiveRequest request{CollectiveOp::kAllReduce, firstRanks(8), bytes, CollectiveAlgorithm::kNvls, {}};
    const CollectiveRun slow = runCollective(cluster, with, request);
    const CollectiveRun fast = runCollective(cluster, without, request);
    EXPECT_NEAR(static_cast<double>(fast.makespan) / static_cast<double>(slow.makespan),
                with.nvlsChunkEfficiency(chunk, channel_Bps), 1e-3)
        << bytes;
  }
}

// NCCL prices an NVLS call at one step: 25 us from 2.21.5, 23 us before (tuning.cc at
// v2.20.5-1 and 5067397c), with no base latency beside it.
TEST(CollectiveTest, NvlsLatencyIsOneStepOfTheNcclRelease) {
  const Cluster cluster = presetCluster("dgx-h100");
  CommunicationParameters parameters = shippedCommunication();
  parameters.launch_overhead_us = 0.0;
  const CollectiveRequest request{CollectiveOp::kAllReduce, firstRanks(8), 8.0, CollectiveAlgorithm::kNvls, {}};
  const double now_us = sim::simTimeToSeconds(runCollective(cluster, parameters, request).makespan) * 1e6;
  parameters.nccl_version = 22105;
  const double at_2_21_5_us = sim::simTimeToSeconds(runCollective(cluster, parameters, request).makespan) * 1e6;
  parameters.nccl_version = 22104;
  const double before_us = sim::simTimeToSeconds(runCollective(cluster, parameters, request).makespan) * 1e6;
  EXPECT_NEAR(now_us, 25.0, 0.1);
  EXPECT_NEAR(at_2_21_5_us, 25.0, 0.1);
  EXPECT_NEAR(before_us, 23.0, 0.1);
}

TEST(CollectiveTest, NvlsIsNotOfferedOnDgxA100) {
  const Cluster cluster = presetCluster("dgx-a100", {});
  CollectiveSimulator simulator(cluster, shippedCommunication());
  auto result = simulator.simulate(
      CollectiveRequest{CollectiveOp::kAllReduce, firstRanks(8), 1.0 * kGiB, CollectiveAlgorithm::kNvls, {}});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, ExitCode::kInvalidInput);
  EXPECT_EQ(result.error().toString(), "--algo: nvls is not available for all_reduce on this group; available: ring");
  // Two nodes: the tree joins the list.
  auto two_nodes = simulator.simulate(
      CollectiveRequest{CollectiveOp::kAllReduce, firstRanks(16), 1.0 * kGiB, CollectiveAlgorithm::kNvls, {}});
  ASSERT_FALSE(two_nodes.ok());
  EXPECT_EQ(two_nodes.error().toString(),
            "--algo: nvls is not available for all_reduce on this group; available: ring, tree");
}

TEST(CollectiveTest, TreeIsNotOfferedInsideOneNode) {
  const Cluster cluster = presetCluster("dgx-h100");
  CollectiveSimulator simulator(cluster, shippedCommunication());
  auto result = simulator.simulate(
      CollectiveRequest{CollectiveOp::kAllReduce, firstRanks(8), 1.0 * kGiB, CollectiveAlgorithm::kTree, {}});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().toString(),
            "--algo: tree is not available for all_reduce on this group; available: ring, nvls");
  // NVLS is not offered across nodes either: NVLS_TREE is.
  auto across = simulator.simulate(
      CollectiveRequest{CollectiveOp::kAllReduce, firstRanks(16), 1.0 * kGiB, CollectiveAlgorithm::kNvls, {}});
  ASSERT_FALSE(across.ok());
  EXPECT_EQ(across.error().toString(),
            "--algo: nvls is not available for all_reduce on this group; available: ring, tree, nvls_tree");
}

// ---------------------------------------------------------------------------------------
// NVLS_TREE.

TEST(CollectiveTest, NvlsTreeOnTwoH100NodesMovesTheBufferOnceEachWayOverTheNics) {
  const Cluster cluster = presetCluster("dgx-h100");
  const CommunicationParameters parameters = shippedCommunication();
  CollectiveSimulator simulator(cluster, parameters);
  auto result = simulator.simulate(CollectiveRequest{CollectiveOp::kAllReduce, firstRanks(16), 8.0 * kGiB, {}, {}});
  ASSERT_TRUE(result.ok()) << result.error().toString();
  // Large messages across two NVLS nodes: NVLS_TREE, as NCCL's tuner picks it.
  EXPECT_EQ(result->choice.algorithm, CollectiveAlgorithm::kNvlsTree);
  EXPECT_EQ(result->choice.protocol, Protocol::kSimple);
  // Bound by NVLS inside the node (450 GB/s x NVLS efficiency of algorithm bandwidth) or by
  // the node's NICs carrying the buffer once each way (8 x 400 Gb/s x InfiniBand efficiency).
  const double nvls_Bps = 450e9 * parameters.nvlsEfficiency("h100-sxm");
  const double nics_Bps = 8.0 * 50e9 * parameters.infiniband_efficiency;
  const double bound_Bps = std::min(nvls_Bps, nics_Bps);
  EXPECT_NEAR(result->algbw_Bps / bound_Bps, 1.0, 0.03);
  // A ring is bound by the NICs carrying the buffer about twice: it is slower.
  auto ring = simulator.simulate(
      CollectiveRequest{CollectiveOp::kAllReduce, firstRanks(16), 8.0 * kGiB, CollectiveAlgorithm::kRing, {}});
  ASSERT_TRUE(ring.ok());
  EXPECT_LT(ring->busbw_Bps, 0.8 * result->busbw_Bps);
}

TEST(CollectiveTest, NvlsTreeNeedsTheSameGpusOnEveryNodeAndTwoAtLeast) {
  const Cluster cluster = presetCluster("dgx-h100");
  CollectiveSimulator simulator(cluster, shippedCommunication());
  // One GPU per node (a data-parallel group across tensor-parallel nodes): no NVLS to do.
  auto strided = simulator.simulate(
      CollectiveRequest{CollectiveOp::kAllReduce, {0, 8, 16, 24}, 1.0 * kGiB, CollectiveAlgorithm::kNvlsTree, {}});
  ASSERT_FALSE(strided.ok());
  EXPECT_EQ(strided.error().toString(),
            "--algo: nvls_tree is not available for all_reduce on this group; available: ring, tree");
  // 8 GPUs on one node and 2 on another.
  auto uneven = simulator.simulate(
      CollectiveRequest{CollectiveOp::kAllReduce, firstRanks(10), 1.0 * kGiB, CollectiveAlgorithm::kNvlsTree, {}});
  ASSERT_FALSE(uneven.ok());
}

TEST(CollectiveTest, TreesReachNcclsCorrectionOfTheirBandwidthAtMediumSizes) {
  const CommunicationParameters parameters = shippedCommunication();
  // NCCL's table for Simple: 0.5 at 1 MiB (64 B x 2^14), 0.7 at 4 MiB, 0.9 at 512 MiB, 1 beyond.
  EXPECT_EQ(detail::treeSizeCorrection(parameters, CollectiveAlgorithm::kNvlsTree, Protocol::kSimple, 1 << 20), 0.5);
  EXPECT_EQ(detail::treeSizeCorrection(parameters, CollectiveAlgorithm::kTree, Protocol::kSimple, 4 << 20), 0.7);
  EXPECT_EQ(detail::treeSizeCorrection(parameters, CollectiveAlgorithm::kTree, Protocol::kSimple, 512.0 * (1 << 20)),
            0.9);
  EXPECT_EQ(detail::treeSizeCorrection(parameters, CollectiveAlgorithm::kTree, Protocol::kSimple, 1.0 * kGiB), 1.0);
  EXPECT_EQ(detail::treeSizeCorrection(parameters, CollectiveAlgorithm::kRing, Protocol::kSimple, 1 << 20), 1.0);
  EXPECT_EQ(detail::treeSizeCorrection(parameters, CollectiveAlgorithm::kTree, Protocol::kLL, 32), 1.0);

  // The flows follow it: NVLS_TREE at 4 MiB takes about 1 / 0.7 of its uncorrected time.
  const Cluster cluster = presetCluster("dgx-h100");
  CommunicationParameters uncorrected = parameters;
  for (auto& row : uncorrected.tree_size_correction) row.fill(1.0);
  auto corrected_run =
      CollectiveSimulator(cluster, parameters)
          .simulate(CollectiveRequest{
              CollectiveOp::kAllReduce, firstRanks(16), 64.0 * (1 << 20), CollectiveAlgorithm::kNvlsTree, {}});
  auto plain_run =
      CollectiveSimulator(cluster, uncorrected)
          .simulate(CollectiveRequest{
              CollectiveOp::kAllReduce, firstRanks(16), 64.0 * (1 << 20), CollectiveAlgorithm::kNvlsTree, {}});
  ASSERT_TRUE(corrected_run.ok() && plain_run.ok());
  EXPECT_GT(corrected_run->time_s, plain_run->time_s * 1.1);
}

TEST(CollectiveTest, BlackwellNvlsRunsAtItsOwnEfficiency) {
  const CommunicationParameters parameters = shippedCommunication();
  EXPECT_EQ(parameters.nvlsEfficiency("h100-sxm"), parameters.nvls_efficiency);
  EXPECT_NEAR(parameters.nvlsEfficiency("b200"), 0.60 * 0.74 / 0.85, 0.005);
  const Cluster cluster = presetCluster("dgx-b200");
  CollectiveSimulator simulator(cluster, parameters);
  auto result = simulator.simulate(CollectiveRequest{CollectiveOp::kAllReduce, firstRanks(8), 8.0 * kGiB, {}, {}});
  ASSERT_TRUE(result.ok()) << result.error().toString();
  EXPECT_EQ(result->choice.algorithm, CollectiveAlgorithm::kNvls);
  EXPECT_NEAR(result->algbw_Bps / (900e9 * parameters.nvlsEfficiency("b200")), 1.0, 0.02);
}

TEST(CollectiveTest, NvlsWithANonSimpleProtocolIsAnError) {
  const Cluster cluster = presetCluster("dgx-h100");
  CollectiveSimulator simulator(cluster, shippedCommunication());
  auto result = simulator.simulate(CollectiveRequest{CollectiveOp::kAllReduce, firstRanks(8), 1.0 * kGiB,
                                                     CollectiveAlgorithm::kNvls, Protocol::kLL});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().toString(), "--proto: nvls, nvls_tree and pat run only with the Simple protocol");
}

// ---------------------------------------------------------------------------------------
// Tuner.

TEST(CollectiveTest, TunerPicksLlForTinyMessagesAndSimpleForLargeOnTwoDgxA100) {
  const Cluster cluster = presetCluster("dgx-a100");
  CollectiveSimulator simulator(cluster, shippedCommunication());
  auto tiny = simulator.simulate(CollectiveRequest{CollectiveOp::kAllReduce, firstRanks(16), 8.0, {}, {}});
  ASSERT_TRUE(tiny.ok()) << tiny.error().toString();
  EXPECT_EQ(tiny->choice.protocol, Protocol::kLL);
  auto large = simulator.simulate(CollectiveRequest{CollectiveOp::kAllReduce, firstRanks(16), 1.0 * kGiB, {}, {}});
  ASSERT_TRUE(large.ok()) << large.error().toString();
  EXPECT_EQ(large->choice.protocol, Protocol::kSimple);
  EXPECT_EQ(large->choice.algorithm, CollectiveAlgorithm::kRing);
  // One channel per NIC across nodes.
  EXPECT_EQ(large->choice.channels, 8);
}

TEST(CollectiveTest, ForcedProtocolAndAlgorithmAreHonoured) {
  const Cluster cluster = presetCluster("dgx-a100");
  CollectiveSimulator simulator(cluster, shippedCommunication());
  for (Protocol protocol : kAllProtocols) {
    for (CollectiveAlgorithm algorithm : {CollectiveAlgorithm::kRing, CollectiveAlgorithm::kTree}) {
      for (double size : {8.0, 1.0 * kGiB}) {
        auto result =
            simulator.simulate(CollectiveRequest{CollectiveOp::kAllReduce, firstRanks(16), size, algorithm, protocol});
        ASSERT_TRUE(result.ok()) << result.error().toString();
        EXPECT_EQ(result->choice.protocol, protocol);
        EXPECT_EQ(result->choice.algorithm, algorithm);
      }
    }
  }
  // A forced protocol alone leaves the algorithm to the tuner.
  auto ll =
      simulator.simulate(CollectiveRequest{CollectiveOp::kAllReduce, firstRanks(16), 1.0 * kGiB, {}, Protocol::kLL});
  ASSERT_TRUE(ll.ok());
  EXPECT_EQ(ll->choice.protocol, Protocol::kLL);
  auto simple =
      simulator.simulate(CollectiveRequest{CollectiveOp::kAllReduce, firstRanks(16), 8.0, {}, Protocol::kSimple});
  ASSERT_TRUE(simple.ok());
  EXPECT_EQ(simple->choice.protocol, Protocol::kSimple);
  // Forcing the slow protocol for a large message costs time.
  auto tuned = simulator.simulate(CollectiveRequest{CollectiveOp::kAllReduce, firstRanks(16), 1.0 * kGiB, {}, {}});
  ASSERT_TRUE(tuned.ok());
  EXPECT_GT(ll->time_s, tuned->time_s);
}

// ---------------------------------------------------------------------------------------
// Invalid requests.

std::string requestError(std::vector<int64_t> ranks, double bytes = 1024.0) {
  CollectiveSimulator simulator(oneNode(), shippedCommunication());
  auto result = simulator.simulate(CollectiveRequest{CollectiveOp::kAllReduce, std::move(ranks), bytes, {}, {}});
  if (result.ok()) return "(no error)";
  EXPECT_EQ(result.error().code, ExitCode::kInvalidInput);
  return result.error().toString();
}

TEST(CollectiveTest, InvalidRequestsAreErrors) {
  EXPECT_EQ(requestError({}), "gpus: a collective needs at least 2 GPUs");
  EXPECT_EQ(requestError({3}), "gpus: a collective needs at least 2 GPUs");
  EXPECT_EQ(requestError({0, 8}), "gpus: GPU rank 8 is not in the cluster (it has 8 GPUs)");
  EXPECT_EQ(requestError({-1, 0}), "gpus: GPU rank -1 is not in the cluster (it has 8 GPUs)");
  EXPECT_EQ(requestError({0, 1, 2, 1}), "gpus: GPU rank 1 appears twice");
  EXPECT_EQ(requestError({0, 1}, -1.0), "bytes: expected a size >= 0 and at most 2^53 bytes");
}

TEST(CollectiveTest, NonFiniteSizeIsAnErrorAboutTheSize) {
  CollectiveSimulator simulator(oneNode(), shippedCommunication());
  for (double bytes : {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    auto result = simulator.simulate(CollectiveRequest{CollectiveOp::kAllReduce, firstRanks(4), bytes, {}, {}});
    ASSERT_FALSE(result.ok()) << bytes;
    EXPECT_EQ(result.error().code, ExitCode::kInvalidInput);
    // Regression test for a bug found in review (fixed).
    EXPECT_EQ(result.error().key_path, "bytes") << bytes << ": " << result.error().toString();
  }
}

TEST(CollectiveTest, ForcedAlgorithmMustExistForTheOp) {
  CollectiveSimulator simulator(oneNode(), shippedCommunication());
  auto result = simulator.simulate(
      CollectiveRequest{CollectiveOp::kAllGather, firstRanks(4), 1024.0, CollectiveAlgorithm::kDirect, {}});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().toString(), "--algo: direct is not available for all_gather on this group; available: ring");
}

}  // namespace
}  // namespace trainsim::perf
