// NCCL's PAT and the release that brought it (NCCL 2.23.4): which groups and sizes it
// carries, its closed-form price (NCCL's tuning.cc) and the flows that run it, and the tree's
// network latency for rings of one GPU per node.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "../topology/test_clusters.h"
#include "perf/collective.h"
#include "perf/collective_simulation.h"
#include "perf/communication_parameters.h"
#include "perf/nccl_tuner.h"
#include "tests/shipped_defaults.h"
#include "topology/router.h"

namespace trainsim::perf {
namespace {

using topology::Cluster;
using topology::Router;
using topology::testing::presetCluster;

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kGiB = 1024.0 * kMiB;
constexpr auto kSimple = static_cast<std::size_t>(Protocol::kSimple);
constexpr auto kLL = static_cast<std::size_t>(Protocol::kLL);
constexpr auto kNetwork = static_cast<std::size_t>(HopClass::kNetwork);

// `per_node` GPUs on each of `nodes` DGX H100 nodes (8 x 400 Gb/s InfiniBand NICs each).
std::vector<int64_t> groupRanks(int nodes, int per_node) {
  std::vector<int64_t> ranks;
  for (int node = 0; node < nodes; ++node) {
    for (int g = 0; g < per_node; ++g) ranks.push_back(int64_t{node} * 8 + g);
  }
  return ranks;
}

const Cluster& dgxH100() {
  static const Cluster cluster = presetCluster("dgx-h100");
  return cluster;
}

Expected<CollectiveChoice> choose(const CommunicationParameters& parameters, CollectiveOp op, int nodes, int per_node,
                                  double bytes, std::optional<CollectiveAlgorithm> algorithm = std::nullopt,
                                  std::optional<Protocol> protocol = std::nullopt) {
  Router router(dgxH100());
  const NcclTuner tuner(dgxH100(), router, parameters);
  return tuner.choose(CollectiveRequest{op, groupRanks(nodes, per_node), bytes, algorithm, protocol});
}

CollectiveAlgorithm chosen(const CommunicationParameters& parameters, CollectiveOp op, int nodes, int per_node,
                           double bytes) {
  const auto choice = choose(parameters, op, nodes, per_node, bytes);
  EXPECT_TRUE(choice.ok()) << choice.error().toString();
  return choice.ok() ? choice->algorithm : CollectiveAlgorithm::kDirect;
}

CommunicationParameters atRelease(double version_code) {
  CommunicationParameters parameters = shippedCommunication();
  parameters.nccl_version = version_code;
  return parameters;
}

// One GPU on each of 32 nodes, as a data-parallel group under tensor parallelism 8: PAT's
// log-depth latency wins the all-gathers and reduce-scatters up to tens of MiB, where its
// 0.75 of the ring's bandwidth starts to cost more than the ring's 31 network steps.
TEST(CollectivePatTest, CarriesOneGpuPerNodeAllGathersUpToTheRingsBandwidthCrossover) {
  const CommunicationParameters shipped = shippedCommunication();
  for (CollectiveOp op : {CollectiveOp::kAllGather, CollectiveOp::kReduceScatter}) {
    EXPECT_EQ(chosen(shipped, op, 32, 1, 1.0 * kMiB), CollectiveAlgorithm::kPat) << collectiveOpName(op);
    EXPECT_EQ(chosen(shipped, op, 32, 1, 8.0 * kMiB), CollectiveAlgorithm::kPat) << collectiveOpName(op);
    EXPECT_EQ(chosen(shipped, op, 32, 1, 1.0 * kGiB), CollectiveAlgorithm::kRing) << collectiveOpName(op);
  }
  const auto pat = choose(shipped, CollectiveOp::kAllGather, 32, 1, 1.0 * kMiB);
  ASSERT_TRUE(pat.ok());
  EXPECT_EQ(pat->protocol, Protocol::kSimple);
}

// ncclPatEnable: one GPU per node only, all-gather and reduce-scatter only, NCCL 2.23.4 on.
TEST(CollectivePatTest, OnlyOneGpuPerNodeAllGathersAndReduceScattersFromNccl2234) {
  const CommunicationParameters shipped = shippedCommunication();
  EXPECT_EQ(chosen(shipped, CollectiveOp::kAllGather, 32, 2, 1.0 * kMiB), CollectiveAlgorithm::kRing);
  const auto all_reduce = choose(shipped, CollectiveOp::kAllReduce, 32, 1, kMiB, CollectiveAlgorithm::kPat);
  ASSERT_FALSE(all_reduce.ok());
  EXPECT_EQ(all_reduce.error().toString(),
            "--algo: pat is not available for all_reduce on this group; available: ring, tree");
  EXPECT_EQ(chosen(atRelease(22105), CollectiveOp::kAllGather, 32, 1, 1.0 * kMiB), CollectiveAlgorithm::kRing);
  EXPECT_EQ(chosen(atRelease(22304), CollectiveOp::kAllGather, 32, 1, 1.0 * kMiB), CollectiveAlgorithm::kPat);

  const auto two_per_node = choose(shipped, CollectiveOp::kAllGather, 4, 2, kMiB, CollectiveAlgorithm::kPat);
  ASSERT_FALSE(two_per_node.ok());
  EXPECT_EQ(two_per_node.error().toString(),
            "--algo: pat is not available for all_gather on this group; available: ring");
  const auto ll = choose(shipped, CollectiveOp::kAllGather, 4, 1, kMiB, CollectiveAlgorithm::kPat, Protocol::kLL);
  ASSERT_FALSE(ll.ok());
  EXPECT_EQ(ll.error().toString(), "--proto: nvls, nvls_tree and pat run only with the Simple protocol");
}

// NCCL's price: launch + base 8 us + log2(nodes) x the tree's network step / 3.5 + 2.8 us per
// rank, and the ring's bytes at 0.75 of the bus bandwidth of one GPU's own NIC. The tree's
// network step is set apart from the ring's (both 14 us shipped) to tell which one PAT reads.
TEST(CollectivePatTest, EstimateIsNcclsFormulaOverOneGpusOwnNic) {
  CommunicationParameters p = shippedCommunication();
  p.tree_step_latency_us[kNetwork][kSimple] = 21.0;
  const double bytes = 16.0 * kMiB;
  const auto choice = choose(p, CollectiveOp::kAllGather, 32, 1, bytes, CollectiveAlgorithm::kPat);
  ASSERT_TRUE(choice.ok()) << choice.error().toString();
  const double nic_Bps = 400e9 / 8.0 * p.infiniband_efficiency;
  const double latency_us = p.launch_overhead_us +
                            p.base_latency_us[static_cast<std::size_t>(CollectiveAlgorithm::kPat)][kSimple] +
                            5.0 * p.tree_step_latency_us[kNetwork][kSimple] / 3.5 + 32.0 * 2.8;
  EXPECT_NEAR(choice->estimated_time_s, latency_us * 1e-6 + bytes * 31.0 / 32.0 / (nic_Bps * 0.75), 1e-9);
}

// Alone on the network, the simulated PAT takes what the tuner priced: its latency, then the
// ring's bytes over each GPU's NIC at the PAT factor.
TEST(CollectivePatTest, SimulatedAloneItTakesItsEstimate) {
  CollectiveSimulator simulator(dgxH100(), shippedCommunication());
  for (double bytes : {1.0 * kMiB, 64.0 * kMiB, 1.0 * kGiB}) {
    const auto result = simulator.simulate(CollectiveRequest{CollectiveOp::kReduceScatter, groupRanks(16, 1), bytes,
                                                             CollectiveAlgorithm::kPat, std::nullopt});
    ASSERT_TRUE(result.ok()) << result.error().toString();
    EXPECT_EQ(result->choice.algorithm, CollectiveAlgorithm::kPat);
    EXPECT_NEAR(result->time_s / result->choice.estimated_time_s, 1.0, 1e-3) << bytes;
  }
}

// From NCCL 2.23.4 every network step of a collective with one GPU per node costs the tree's
// network latency (LL: 5.0 us where the ring's is 2.7): a forced LL ring all-reduce over 16
// nodes pays 30 network steps x the difference more than under 2.21.
TEST(CollectivePatTest, RingsOfOneGpuPerNodePayTheTreesNetworkLatencyFromNccl2234) {
  const CommunicationParameters now = shippedCommunication();
  const auto at = [&](const CommunicationParameters& parameters) {
    const auto choice =
        choose(parameters, CollectiveOp::kAllReduce, 16, 1, 4096.0, CollectiveAlgorithm::kRing, Protocol::kLL);
    EXPECT_TRUE(choice.ok()) << choice.error().toString();
    return choice.ok() ? choice->estimated_time_s : 0.0;
  };
  const double difference_us = now.tree_step_latency_us[kNetwork][kLL] - now.ring_step_latency_us[kNetwork][kLL];
  EXPECT_NEAR(at(now) - at(atRelease(22105)), 30.0 * difference_us * 1e-6, 1e-12);
  // Two GPUs per node keep the ring's own network latency.
  const auto two = [&](const CommunicationParameters& parameters) {
    const auto choice =
        choose(parameters, CollectiveOp::kAllReduce, 8, 2, 4096.0, CollectiveAlgorithm::kRing, Protocol::kLL);
    EXPECT_TRUE(choice.ok()) << choice.error().toString();
    return choice.ok() ? choice->estimated_time_s : 0.0;
  };
  EXPECT_GT(two(now), 0.0);
  EXPECT_EQ(two(now), two(atRelease(22105)));
}

// The simulated ring's flows carry the same latency as the estimate: the forced LL ring over
// 16 nodes of one GPU takes 30 network steps x 2.3 us longer from NCCL 2.23.4 on.
TEST(CollectivePatTest, SimulatedRingsOfOneGpuPerNodePayTheTreesNetworkLatency) {
  const auto simulated = [](const CommunicationParameters& parameters) {
    CollectiveSimulator simulator(dgxH100(), parameters);
    const auto result = simulator.simulate(CollectiveRequest{CollectiveOp::kAllReduce, groupRanks(16, 1), 4096.0,
                                                             CollectiveAlgorithm::kRing, Protocol::kLL});
    EXPECT_TRUE(result.ok()) << result.error().toString();
    return result.ok() ? result->time_s : 0.0;
  };
  const CommunicationParameters now = shippedCommunication();
  const double difference_us = now.tree_step_latency_us[kNetwork][kLL] - now.ring_step_latency_us[kNetwork][kLL];
  EXPECT_NEAR(simulated(now) - simulated(atRelease(22105)), 30.0 * difference_us * 1e-6, 1e-9);
}

}  // namespace
}  // namespace trainsim::perf
