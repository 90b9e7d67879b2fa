// Rank placement (parallelism/rank_layout.h): Megatron's tp-cp-dp-pp order, and the group
// gradients are reduced over, which spans the context-parallel ranks too.
#include "parallelism/rank_layout.h"

#include <gtest/gtest.h>

#include <string>

#include "parallelism/experiment_loader.h"
#include "parallelism/iteration_simulation.h"
#include "tests/shipped_simulation_options.h"

namespace trainsim::parallelism {
namespace {

ParallelPlan plan(int64_t tp, int64_t cp, int64_t dp, int64_t pp) {
  ParallelPlan p;
  p.tp = tp;
  p.cp = cp;
  p.dp = dp;
  p.pp = pp;
  p.gpus = tp * cp * dp * pp;
  return p;
}

TEST(RankLayoutTest, TensorInnermostPipelineOutermost) {
  const RankLayout layout(plan(2, 2, 2, 2));
  EXPECT_EQ(layout.rank({1, 0, 0, 0}), 1);
  EXPECT_EQ(layout.rank({0, 1, 0, 0}), 2);
  EXPECT_EQ(layout.rank({0, 0, 1, 0}), 4);
  EXPECT_EQ(layout.rank({0, 0, 0, 1}), 8);
  EXPECT_EQ(layout.tensorGroup({0, 1, 1, 1}), (std::vector<int64_t>{14, 15}));
  EXPECT_EQ(layout.contextGroup({1, 0, 1, 0}), (std::vector<int64_t>{5, 7}));
}

TEST(RankLayoutTest, DataGroupSpansDataAndContextParallelRanks) {
  const RankLayout layout(plan(2, 2, 2, 2));
  // tp 1 of stage 1: dp x cp = 4 ranks hold the same parameters.
  EXPECT_EQ(layout.dataGroup({1, 1, 0, 1}), (std::vector<int64_t>{9, 11, 13, 15}));
  // Without context parallelism it is the plain data-parallel group.
  const RankLayout no_cp(plan(2, 1, 4, 1));
  EXPECT_EQ(no_cp.dataGroup({0, 0, 2, 0}), (std::vector<int64_t>{0, 2, 4, 6}));
}

TEST(RankLayoutTest, ExpertGroupsTakeDataAndContextParallelRanksTogether) {
  // tp 1, cp 2, dp 4: ep 4 groups two data-parallel replicas with both their context ranks.
  ParallelPlan moe = plan(1, 2, 4, 1);
  moe.ep = 4;
  const RankLayout layout(moe);
  EXPECT_EQ(layout.expertGroup({0, 1, 0, 0}), (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(layout.expertGroup({0, 0, 3, 0}), (std::vector<int64_t>{4, 5, 6, 7}));
  EXPECT_EQ(layout.symmetricReplicas(), 2);  // replicas 0 and 1 make the first expert group
  // ep 8 > dp 4: one group of every rank (ranks past the cluster were built here before).
  moe.ep = 8;
  EXPECT_EQ(RankLayout(moe).expertGroup({0, 1, 3, 0}), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(RankLayout(moe).symmetricReplicas(), 4);
  // Without context parallelism: ep consecutive data-parallel ranks, ep replicas in symmetric mode.
  ParallelPlan no_cp = plan(2, 1, 4, 1);
  no_cp.ep = 2;
  EXPECT_EQ(RankLayout(no_cp).expertGroup({1, 0, 3, 0}), (std::vector<int64_t>{5, 7}));
  EXPECT_EQ(RankLayout(no_cp).symmetricReplicas(), 2);
  EXPECT_EQ(RankLayout(plan(2, 2, 4, 1)).symmetricReplicas(), 1);
}

TEST(RankLayoutTest, SymmetricModeSimulatesWholeExpertGroups) {
  // The shipped Mixtral experiment (ep 8 over 8 data-parallel replicas) crashed in symmetric
  // mode, which simulated replica 0 alone while its expert all-to-alls span 8 replicas.
  auto experiment = loadExperiment("mixtral-8x7b-h100", ConfigPaths{TRAINSIM_CONFIG_DIR_FOR_TESTS});
  ASSERT_TRUE(experiment.ok()) << experiment.error().toString();
  SimulationOptions options = shippedSimulationOptions();
  options.iteration.symmetric = true;
  const auto symmetric = simulateIteration(*experiment, options);
  ASSERT_TRUE(symmetric.ok()) << symmetric.error().toString();
  const auto full = simulateIteration(*experiment, shippedSimulationOptions());
  ASSERT_TRUE(full.ok()) << full.error().toString();
  EXPECT_NEAR(symmetric->iteration_time_s / full->iteration_time_s, 1.0, 1e-9);
}

TEST(RankLayoutTest, ContextParallelRanksReduceGradientsEvenAtDpOne) {
  // Llama 3 8B, cp 8 and dp 1 on one DGX H100 node: the 8 context-parallel ranks hold the same
  // weights, so their gradients are reduced (and ZeRO-1 shards the optimizer over them).
  const std::string yaml =
      "model: llama3-8b\ncluster: dgx-h100\ntraining: {seq_len: 16384, global_batch_size: 2, micro_batch_size: "
      "1}\nparallelism: {gpus: 8, tp: 1, pp: 1, cp: 8, dp: 1, zero: 1, overlap_grad_reduce: false}\n";
  auto experiment = loadExperimentNode(parseConfigText(yaml, "test.yaml"), ConfigPaths{TRAINSIM_CONFIG_DIR_FOR_TESTS});
  ASSERT_TRUE(experiment.ok()) << experiment.error().toString();
  const auto result = simulateIteration(experiment.value(), shippedSimulationOptions());
  ASSERT_TRUE(result.ok()) << result.error().toString();
  // Without overlap the reduce-scatter and the parameter all-gather of 8B parameters over
  // NVLink are exposed: tens of milliseconds.
  EXPECT_GT(result->breakdown.dp_comm_exposed, 0.01);
}

}  // namespace
}  // namespace trainsim::parallelism
