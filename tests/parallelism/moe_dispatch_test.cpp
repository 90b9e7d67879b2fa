// Token dispatchers (parallelism.moe_dispatcher, moe_dispatch.h): the distinct nodes a
// token's experts lie on, and the all-to-all bytes that give the flex dispatcher's traffic.
#include "parallelism/moe_dispatch.h"

#include <gtest/gtest.h>

#include <cmath>

namespace trainsim::parallelism {
namespace {

MoeSpec routed(int64_t experts, int64_t top_k) {
  MoeSpec moe;
  moe.experts = experts;
  moe.top_k = top_k;
  return moe;
}

TEST(MoeDispatch, DistinctNodesOfATokensExperts) {
  // Top-1 always reaches one node; top-2 of 4 experts on 2 nodes misses one node with
  // chance C(2,2)/C(4,2) = 1/6 per node: 2 x 5/6.
  EXPECT_DOUBLE_EQ(expectedExpertNodes(routed(4, 1), 2), 1.0);
  EXPECT_NEAR(expectedExpertNodes(routed(4, 2), 2), 2.0 * 5.0 / 6.0, 1e-12);
  EXPECT_DOUBLE_EQ(expectedExpertNodes(routed(128, 8), 1), 1.0);
  // DeepSeek-V3 on 8 nodes of ep 64: its 8 router groups are the nodes and a token picks 4
  // of them, so 4 nodes; without group-limited routing top-8 of 256 reaches about 5.3.
  MoeSpec deepseek = routed(256, 8);
  deepseek.router_groups = 8;
  deepseek.router_group_top_k = 4;
  EXPECT_NEAR(expectedExpertNodes(deepseek, 8), 4.0, 1e-12);
  EXPECT_NEAR(expectedExpertNodes(routed(256, 8), 8), 8.0 * (1.0 - std::pow(7.0 / 8.0, 8.0)), 0.1);
}

TEST(MoeDispatch, FlexSendsEachTokenOncePerRemoteNode) {
  ParallelPlan plan;
  plan.tp = 1;
  plan.dp = 16;
  plan.ep = 16;
  // NCCL's all-to-all is the reference, and a group inside one node is the same either way.
  EXPECT_DOUBLE_EQ(dispatchByteScale(routed(128, 8), plan, 8), 1.0);
  plan.moe_dispatcher = MoeDispatcher::kFlex;
  plan.ep = 1;
  EXPECT_DOUBLE_EQ(dispatchByteScale(routed(128, 8), plan, 8), 1.0);
  // ep 16 on two nodes: a top-8 token reaches the other node with chance 1 - C(64,8)/C(128,8),
  // once, where the all-to-all sends 8 x 8/16 = 4 copies off the node.
  plan.ep = 16;
  const double reach = expectedExpertNodes(routed(128, 8), 2) / 2.0;
  EXPECT_NEAR(dispatchByteScale(routed(128, 8), plan, 8), reach / 4.0, 1e-12);
  EXPECT_GT(reach, 0.99);
}

// Inside one node flex sends a token once per other rank holding one of its experts: Mixtral's
// top 2 of 8 experts on 8 ranks are always two ranks (the all-to-all's bytes); DeepSeek-like
// group-limited routing (8 groups, one per rank, 4 chosen) reaches 4 ranks with 8 experts,
// half the all-to-all's copies; Qwen3-like top 8 of 128 on 8 ranks about 5.3 ranks.
TEST(MoeDispatch, FlexInsideANodeSendsEachTokenOncePerRank) {
  ParallelPlan plan;
  plan.tp = 1;
  plan.dp = 8;
  plan.ep = 8;
  plan.moe_dispatcher = MoeDispatcher::kFlex;
  EXPECT_NEAR(dispatchByteScale(routed(8, 2), plan, 8), 1.0, 1e-12);
  MoeSpec deepseek = routed(32, 8);
  deepseek.router_groups = 8;
  deepseek.router_group_top_k = 4;
  EXPECT_NEAR(dispatchByteScale(deepseek, plan, 8), 0.5, 1e-12);
  const double qwen = dispatchByteScale(routed(128, 8), plan, 8);
  EXPECT_NEAR(qwen, expectedExpertNodes(routed(128, 8), 8) / 8.0, 1e-12);
  EXPECT_NEAR(qwen, 0.66, 0.01);
  plan.moe_dispatcher = MoeDispatcher::kAllToAll;
  EXPECT_DOUBLE_EQ(dispatchByteScale(deepseek, plan, 8), 1.0);
}

}  // namespace
}  // namespace trainsim::parallelism
