// Ring channels on a chip-level torus (TPU slices): boustrophedon orders over the group's
// grid, two per dimension spanned, and ring collectives that use every link direction of a
// chip instead of one.
#include "perf/torus_rings.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <set>
#include <utility>

#include "perf/collective_simulation.h"
#include "perf/default_parameters.h"
#include "topology/cluster.h"
#include "topology/cluster_loader.h"

namespace trainsim::perf {
namespace {

// Positions of two chips of a group differ by one step of one coordinate of the group's grid
// (`step`: the grid's spacing per dimension).
bool gridNeighbours(int64_t a, int64_t b, const std::vector<int>& dims, const std::vector<int>& step) {
  const auto ca = torusCoordinates(a, dims);
  const auto cb = torusCoordinates(b, dims);
  int moved = 0;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    const int delta = std::abs(ca[d] - cb[d]);
    if (delta == 0) continue;
    if (delta != step[d]) return false;
    ++moved;
  }
  return moved == 1;
}

std::vector<int64_t> allChips(int count) {
  std::vector<int64_t> ranks;
  for (int64_t rank = 0; rank < count; ++rank) ranks.push_back(rank);
  return ranks;
}

void expectGridRings(const std::vector<int64_t>& ranks, const std::vector<int>& dims, const std::vector<int>& step) {
  const int channels = torusRingChannels(ranks, dims);
  for (int channel = 0; channel < channels; ++channel) {
    const auto order = torusRingOrder(ranks, dims, channel);
    ASSERT_EQ(order.size(), ranks.size());
    EXPECT_EQ(std::set<int64_t>(order.begin(), order.end()), std::set<int64_t>(ranks.begin(), ranks.end()));
    // Every hop of the cycle but one (from the walk's end back to its start: over the
    // torus's wrap-around links, or routed) is one step on the grid.
    int jumps = 0;
    for (std::size_t i = 0; i < order.size(); ++i) {
      if (!gridNeighbours(order[i], order[(i + 1) % order.size()], dims, step)) ++jumps;
    }
    EXPECT_LE(jumps, 1) << "channel " << channel;
    EXPECT_EQ(order.front(), ranks.front());
  }
}

TEST(TorusRings, EachChannelWalksTheGroupsGridOneStepAtATime) {
  expectGridRings(allChips(256), {16, 16}, {1, 1});
  expectGridRings(allChips(64), {4, 4, 4}, {1, 1, 1});
  expectGridRings(allChips(192), {4, 4, 12}, {1, 1, 1});
  // A strided group (every 4th chip of a 16 x 16 slice: x = 0, 4, 8, 12) walks its 4 x 16 grid.
  std::vector<int64_t> strided;
  for (int64_t rank = 0; rank < 256; rank += 4) strided.push_back(rank);
  expectGridRings(strided, {16, 16}, {4, 1});
}

TEST(TorusRings, TwoChannelsPerDimensionSpanned) {
  EXPECT_EQ(torusRingChannels(allChips(256), {16, 16}), 4);
  EXPECT_EQ(torusRingChannels(allChips(64), {4, 4, 4}), 6);
  EXPECT_EQ(torusRingChannels({0, 1, 2, 3}, {4, 4, 4}), 2);     // one line along x
  EXPECT_EQ(torusRingChannels({0, 16, 32, 48}, {4, 4, 4}), 2);  // one line along z
  EXPECT_EQ(torusRingChannels({5}, {4, 4, 4}), 1);
}

// The channels of a full 16 x 16 slice put every directed link of a chip to work, and no
// link carries more than two of them (the lines' turning points).
TEST(TorusRings, TheChannelsSpreadOverEveryLinkDirection) {
  const std::vector<int> dims{16, 16};
  const auto ranks = allChips(256);
  std::map<std::pair<int64_t, int64_t>, int> load;
  for (int channel = 0; channel < 4; ++channel) {
    const auto order = torusRingOrder(ranks, dims, channel);
    for (std::size_t i = 0; i + 1 < order.size(); ++i) ++load[{order[i], order[i + 1]}];
  }
  int most = 0;
  for (const auto& [link, channels] : load) most = std::max(most, channels);
  EXPECT_LE(most, 2);
  // 4 directed links a chip on the open grid's lines: 2 x 15 x 16 per dimension.
  EXPECT_GE(load.size(), static_cast<std::size_t>(0.95 * 2.0 * 2.0 * 15.0 * 16.0));
}

// An all-gather over a 64-chip TPU v4 cube: six channels over six link directions, against
// one link direction for a ring in rank order (whose bus bandwidth is at most a link's). On
// lines of 4 chips a third of the hops are turns onto links another channel runs along, so
// the busiest links carry three channels: 1.6 links' worth rather than 6.
TEST(TorusRings, AllGatherOnATpuCubeUsesTheTorusLinks) {
  const ConfigPaths paths{TRAINSIM_CONFIG_DIR_FOR_TESTS};
  const auto cluster =
      topology::Cluster::build(topology::loadClusterFile("tpu-v4-pod-slice", paths, {}).value()).value();
  const CommunicationParameters parameters = defaultCommunicationParameters(paths).value();
  CollectiveSimulator simulator(cluster, parameters);
  const auto result = simulator.simulate(
      CollectiveRequest{CollectiveOp::kAllGather, allChips(64), 1.0 * (1 << 30), CollectiveAlgorithm::kRing, {}});
  ASSERT_TRUE(result.ok()) << result.error().toString();
  EXPECT_EQ(result.value().choice.channels, 6);
  const double link_GBps = cluster.spec().inter_node->link_bandwidth_GBps;
  EXPECT_GT(result.value().busbw_Bps / 1e9, 1.5 * link_GBps);
  EXPECT_LT(result.value().busbw_Bps / 1e9, 6.0 * link_GBps);
}

}  // namespace
}  // namespace trainsim::perf
