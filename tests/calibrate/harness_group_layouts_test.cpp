// Calibration harness: communicator groups of each layout, from (node, local rank) per MPI rank.
#include <gtest/gtest.h>

#include <set>

#include "calibrate/harness/group_layouts.h"

namespace trainsim::harness {
namespace {

// `nodes` x `gpus_per_node` ranks filled node by node (mpirun's default by-slot mapping).
std::vector<RankPlace> blockPlacement(int nodes, int gpus_per_node) {
  std::vector<RankPlace> places;
  for (int node = 0; node < nodes; ++node) {
    for (int local = 0; local < gpus_per_node; ++local) places.push_back({node, local});
  }
  return places;
}

// Every rank in at most one group; world rank 0 in one; group sizes equal.
void expectWellFormed(const GroupLayout& layout, int ranks) {
  ASSERT_FALSE(layout.skipped) << *layout.skipped;
  std::set<int> seen;
  for (const auto& group : layout.groups) {
    EXPECT_EQ(static_cast<int>(group.size()), layout.group_size);
    for (const int rank : group) {
      EXPECT_GE(rank, 0);
      EXPECT_LT(rank, ranks);
      EXPECT_TRUE(seen.insert(rank).second) << "rank " << rank << " in two groups";
    }
  }
  EXPECT_GE(layout.groupOf(0), 0);
  EXPECT_EQ(layout.rankInGroup(0), 0);
}

TEST(HarnessGroupLayoutsTest, LayoutNamesRoundTrip) {
  for (const LayoutKind kind : kAllLayouts) EXPECT_EQ(parseLayout(layoutName(kind)), kind);
  EXPECT_FALSE(parseLayout("intra-node"));
}

TEST(HarnessGroupLayoutsTest, JobShapeOfTwoNodesOfEight) {
  const auto shape = jobShape(blockPlacement(2, 8));
  ASSERT_TRUE(shape.ok());
  EXPECT_EQ(shape->ranks, 16);
  EXPECT_EQ(shape->nodes, 2);
  EXPECT_EQ(shape->gpus_per_node, 8);
}

TEST(HarnessGroupLayoutsTest, JobShapeRejectsUnevenOrInconsistentPlacements) {
  std::vector<RankPlace> uneven = blockPlacement(2, 8);
  uneven.pop_back();
  const auto shape = jobShape(uneven);
  ASSERT_FALSE(shape.ok());
  EXPECT_NE(shape.error().message.find("uneven"), std::string::npos) << shape.error().message;
  EXPECT_FALSE(jobShape({{0, 0}, {0, 0}}).ok());  // local rank taken twice
  EXPECT_FALSE(jobShape({{0, 0}, {2, 0}}).ok());  // node 1 missing
  EXPECT_FALSE(jobShape({{0, 0}, {0, 2}}).ok());  // local ranks 0 and 2
  EXPECT_FALSE(jobShape({}).ok());
}

TEST(HarnessGroupLayoutsTest, WorldIsOneGroupOfEveryRank) {
  const GroupLayout layout = buildGroupLayout(LayoutKind::kWorld, blockPlacement(2, 8), 0);
  expectWellFormed(layout, 16);
  ASSERT_EQ(layout.groups.size(), 1U);
  EXPECT_EQ(layout.group_size, 16);
  EXPECT_EQ(layout.nodes, 2);
  EXPECT_EQ(layout.gpus_per_node, 8);
}

TEST(HarnessGroupLayoutsTest, IntraNodeIsOneGroupPerNode) {
  const GroupLayout layout = buildGroupLayout(LayoutKind::kIntraNode, blockPlacement(2, 8), 0);
  expectWellFormed(layout, 16);
  ASSERT_EQ(layout.groups.size(), 2U);
  EXPECT_EQ(layout.groups[1], (std::vector<int>{8, 9, 10, 11, 12, 13, 14, 15}));
  EXPECT_EQ(layout.nodes, 1);
  EXPECT_EQ(layout.gpus_per_node, 8);
  EXPECT_EQ(layout.groupOf(11), 1);
  EXPECT_EQ(layout.rankInGroup(11), 3);
}

TEST(HarnessGroupLayoutsTest, OnePerNodeUsesLocalRankZeroOnly) {
  const GroupLayout layout = buildGroupLayout(LayoutKind::kOnePerNode, blockPlacement(4, 8), 0);
  expectWellFormed(layout, 32);
  ASSERT_EQ(layout.groups.size(), 1U);
  EXPECT_EQ(layout.groups[0], (std::vector<int>{0, 8, 16, 24}));
  EXPECT_EQ(layout.nodes, 4);
  EXPECT_EQ(layout.gpus_per_node, 1);
  EXPECT_EQ(layout.groupOf(1), -1);  // idle
  EXPECT_EQ(layout.rankInGroup(1), -1);
}

TEST(HarnessGroupLayoutsTest, DpLikeHasOneGroupPerLocalRankStridedByNode) {
  const GroupLayout layout = buildGroupLayout(LayoutKind::kDpLike, blockPlacement(4, 8), 0);
  expectWellFormed(layout, 32);
  ASSERT_EQ(layout.groups.size(), 8U);
  EXPECT_EQ(layout.groups[3], (std::vector<int>{3, 11, 19, 27}));
  EXPECT_EQ(layout.group_size, 4);
  EXPECT_EQ(layout.nodes, 4);
  EXPECT_EQ(layout.gpus_per_node, 1);
}

TEST(HarnessGroupLayoutsTest, TpLikeDefaultsToAWholeNode) {
  const GroupLayout layout = buildGroupLayout(LayoutKind::kTpLike, blockPlacement(2, 8), 0);
  expectWellFormed(layout, 16);
  EXPECT_EQ(layout.groups.size(), 2U);
  EXPECT_EQ(layout.group_size, 8);
}

TEST(HarnessGroupLayoutsTest, TpLikeSplitsNodesIntoConsecutiveLocalRanks) {
  const GroupLayout layout = buildGroupLayout(LayoutKind::kTpLike, blockPlacement(2, 8), 4);
  expectWellFormed(layout, 16);
  ASSERT_EQ(layout.groups.size(), 4U);
  EXPECT_EQ(layout.groups[1], (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(layout.groups[2], (std::vector<int>{8, 9, 10, 11}));
  EXPECT_EQ(layout.nodes, 1);
  EXPECT_EQ(layout.gpus_per_node, 4);
}

TEST(HarnessGroupLayoutsTest, TpLikeLargerThanANodeSpansWholeNodes) {
  const GroupLayout layout = buildGroupLayout(LayoutKind::kTpLike, blockPlacement(4, 4), 8);
  expectWellFormed(layout, 16);
  ASSERT_EQ(layout.groups.size(), 2U);
  EXPECT_EQ(layout.groups[1], (std::vector<int>{8, 9, 10, 11, 12, 13, 14, 15}));
  EXPECT_EQ(layout.nodes, 2);
  EXPECT_EQ(layout.gpus_per_node, 4);
}

TEST(HarnessGroupLayoutsTest, LayoutsFollowTheRealPlacementNotTheRankOrder) {
  // Round-robin mapping (mpirun --map-by node): rank r on node r % 2, local rank r / 2.
  std::vector<RankPlace> places;
  for (int rank = 0; rank < 8; ++rank) places.push_back({rank % 2, rank / 2});
  const GroupLayout intra = buildGroupLayout(LayoutKind::kIntraNode, places, 0);
  expectWellFormed(intra, 8);
  EXPECT_EQ(intra.groups[0], (std::vector<int>{0, 2, 4, 6}));
  EXPECT_EQ(intra.groups[1], (std::vector<int>{1, 3, 5, 7}));
  const GroupLayout tp = buildGroupLayout(LayoutKind::kTpLike, places, 2);
  expectWellFormed(tp, 8);
  EXPECT_EQ(tp.groups[0], (std::vector<int>{0, 2}));  // same node, local ranks 0 and 1
  const GroupLayout dp = buildGroupLayout(LayoutKind::kDpLike, places, 0);
  expectWellFormed(dp, 8);
  EXPECT_EQ(dp.groups[1], (std::vector<int>{2, 3}));  // local rank 1 of nodes 0 and 1
}

TEST(HarnessGroupLayoutsTest, LayoutsThatCannotRunHereSaySo) {
  const auto one_node = blockPlacement(1, 8);
  EXPECT_TRUE(buildGroupLayout(LayoutKind::kOnePerNode, one_node, 0).skipped);
  EXPECT_TRUE(buildGroupLayout(LayoutKind::kDpLike, one_node, 0).skipped);
  EXPECT_FALSE(buildGroupLayout(LayoutKind::kIntraNode, one_node, 0).skipped);
  EXPECT_TRUE(buildGroupLayout(LayoutKind::kTpLike, one_node, 3).skipped);   // 3 does not divide 8
  EXPECT_TRUE(buildGroupLayout(LayoutKind::kTpLike, one_node, 16).skipped);  // more than the job
  EXPECT_TRUE(buildGroupLayout(LayoutKind::kTpLike, one_node, 1).skipped);   // groups of one
  const auto one_gpu_per_node = blockPlacement(4, 1);
  EXPECT_TRUE(buildGroupLayout(LayoutKind::kIntraNode, one_gpu_per_node, 0).skipped);
  EXPECT_FALSE(buildGroupLayout(LayoutKind::kDpLike, one_gpu_per_node, 0).skipped);
  const GroupLayout skipped = buildGroupLayout(LayoutKind::kOnePerNode, one_node, 0);
  EXPECT_TRUE(skipped.groups.empty());
  EXPECT_EQ(skipped.groupOf(0), -1);
}

}  // namespace
}  // namespace trainsim::harness
