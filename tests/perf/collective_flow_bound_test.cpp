// collectiveFlowBound bounds the flows the collective algorithms expand into, for every op
// and algorithm, inside a node and across nodes: the memory estimate counts on it.
#include "perf/collective_flow_bound.h"

#include <gtest/gtest.h>

#include <optional>
#include <utility>
#include <vector>

#include "perf/collective_simulation.h"
#include "perf/default_parameters.h"
#include "topology/cluster.h"
#include "topology/cluster_loader.h"

namespace trainsim::perf {
namespace {

topology::Cluster dgxH100(int nodes) {
  const ConfigPaths paths{TRAINSIM_CONFIG_DIR_FOR_TESTS};
  auto spec = topology::loadClusterFile("dgx-h100", paths, {}).value();
  spec.nodes = nodes;
  return topology::Cluster::build(spec).value();
}

struct Case {
  CollectiveOp op;
  std::optional<CollectiveAlgorithm> algorithm;
  int64_t gpus;
};

TEST(CollectiveFlowBound, BoundsTheFlowsOfEveryAlgorithm) {
  const topology::Cluster cluster = dgxH100(8);
  CollectiveSimulator simulator(cluster,
                                defaultCommunicationParameters(ConfigPaths{TRAINSIM_CONFIG_DIR_FOR_TESTS}).value());
  const Case cases[] = {
      {CollectiveOp::kAllReduce, std::nullopt, 8},
      {CollectiveOp::kAllReduce, CollectiveAlgorithm::kNvls, 8},
      {CollectiveOp::kAllReduce, CollectiveAlgorithm::kRing, 8},
      {CollectiveOp::kAllReduce, std::nullopt, 64},
      {CollectiveOp::kAllReduce, CollectiveAlgorithm::kRing, 64},
      {CollectiveOp::kAllReduce, CollectiveAlgorithm::kTree, 64},
      {CollectiveOp::kAllReduce, CollectiveAlgorithm::kTree, 24},
      {CollectiveOp::kAllReduce, CollectiveAlgorithm::kNvlsTree, 16},
      {CollectiveOp::kAllReduce, CollectiveAlgorithm::kNvlsTree, 64},
      {CollectiveOp::kAllGather, std::nullopt, 64},
      {CollectiveOp::kReduceScatter, std::nullopt, 16},
      {CollectiveOp::kBroadcast, std::nullopt, 64},
      {CollectiveOp::kAllToAll, std::nullopt, 64},
      {CollectiveOp::kAllToAll, std::nullopt, 4},
      {CollectiveOp::kSendRecv, std::nullopt, 64},
  };
  for (const Case& c : cases) {
    for (double bytes : {1024.0, 1e9}) {
      std::vector<int64_t> ranks;
      for (int64_t r = 0; r < c.gpus; ++r) ranks.push_back(r);
      const auto result = simulator.simulate(CollectiveRequest{c.op, ranks, bytes, c.algorithm, {}});
      ASSERT_TRUE(result.ok()) << result.error().toString();
      CollectiveShape shape;
      shape.op = c.op;
      shape.gpus = c.gpus;
      shape.most_per_node = std::min<int64_t>(c.gpus, 8);
      shape.multi_node = c.gpus > 8;
      shape.algorithm = c.algorithm;
      const double bound = collectiveFlowBound(shape);
      EXPECT_GE(bound, static_cast<double>(result.value().flows))
          << collectiveOpName(c.op) << " on " << c.gpus << " GPUs, " << bytes << " B";
      // The bound of the algorithm that ran is its exact count: it is not loose. An
      // all-to-all's bundles are bounded for a group that may straddle nodes and mix hop
      // classes inside one: within twice the count.
      shape.algorithm = result.value().choice.algorithm;
      if (c.op == CollectiveOp::kAllToAll) {
        EXPECT_LE(collectiveFlowBound(shape), 2.0 * static_cast<double>(result.value().flows));
        continue;
      }
      EXPECT_EQ(collectiveFlowBound(shape), static_cast<double>(result.value().flows))
          << collectiveOpName(c.op) << " on " << c.gpus << " GPUs, " << bytes << " B, "
          << algorithmName(result.value().choice.algorithm);
    }
  }
}

TEST(CollectiveFlowBound, CountsAChannelPerNicAcrossNodes) {
  // 4 NICs to 8 GPUs (4 channels), 32 (as many channels as GPUs, 8), a PCIe node with 4.
  const ConfigPaths paths{TRAINSIM_CONFIG_DIR_FOR_TESTS};
  for (const char* preset : {"aws-p4d", "aws-p5", "l40s-pcie-roce"}) {
    auto spec = topology::loadClusterFile(preset, paths, {}).value();
    spec.nodes = 4;
    const topology::Cluster cluster = topology::Cluster::build(spec).value();
    CollectiveSimulator simulator(cluster, defaultCommunicationParameters(paths).value());
    for (const auto& [op, algorithm] : {std::pair{CollectiveOp::kAllReduce, std::optional<CollectiveAlgorithm>{}},
                                        std::pair{CollectiveOp::kAllReduce, std::optional{CollectiveAlgorithm::kTree}},
                                        std::pair{CollectiveOp::kAllGather, std::optional<CollectiveAlgorithm>{}}}) {
      std::vector<int64_t> ranks;
      for (int64_t r = 0; r < cluster.acceleratorCount(); ++r) ranks.push_back(r);
      const auto result = simulator.simulate(CollectiveRequest{op, ranks, 1e9, algorithm, {}});
      ASSERT_TRUE(result.ok()) << result.error().toString();
      CollectiveShape shape;
      shape.op = op;
      shape.gpus = static_cast<int64_t>(ranks.size());
      shape.most_per_node = spec.gpus_per_node;
      shape.nics_per_node = channelLimit(spec);
      shape.algorithm = algorithm;
      EXPECT_GE(collectiveFlowBound(shape), static_cast<double>(result.value().flows)) << preset;
      shape.algorithm = result.value().choice.algorithm;
      EXPECT_EQ(collectiveFlowBound(shape), static_cast<double>(result.value().flows))
          << preset << ", " << algorithmName(result.value().choice.algorithm);
    }
  }
}

}  // namespace
}  // namespace trainsim::perf
