// Calibration harness: message sizes (nccl-tests' -b/-e/-f walk) and each op's buffer rounding.
#include <gtest/gtest.h>

#include "calibrate/harness/collective_buffers.h"
#include "calibrate/harness/size_sweep.h"

namespace trainsim::harness {
namespace {

using perf::CollectiveOp;

TEST(HarnessSizeSweepTest, ParsesSizesWithBinarySuffixes) {
  EXPECT_EQ(*parseByteSize("8", "-b"), 8);
  EXPECT_EQ(*parseByteSize("64K", "-b"), 64 * 1024);
  EXPECT_EQ(*parseByteSize("32m", "-b"), int64_t{32} << 20);
  EXPECT_EQ(*parseByteSize("4G", "-e"), int64_t{4} << 30);
}

TEST(HarnessSizeSweepTest, RejectsMalformedSizesNamingTheOption) {
  for (const char* text : {"", "0", "-8", "1.5M", "12T", "M", "8 K", "99999999999999999999"}) {
    const auto parsed = parseByteSize(text, "-e/--max-bytes");
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_EQ(parsed.error().code, ExitCode::kInvalidInput);
    EXPECT_EQ(parsed.error().where, "-e/--max-bytes") << text;
  }
}

TEST(HarnessSizeSweepTest, DoublingSweepMatchesNcclTests) {
  // nccl-tests -b 8 -e 1G -f 2: 8, 16, ..., 2^30 = 28 sizes.
  const auto sizes = sizeSweep(8, int64_t{1} << 30, 2.0);
  ASSERT_TRUE(sizes.ok());
  ASSERT_EQ(sizes->size(), 28U);
  EXPECT_EQ(sizes->front(), 8);
  EXPECT_EQ(sizes->back(), int64_t{1} << 30);
  for (std::size_t i = 1; i < sizes->size(); ++i) EXPECT_EQ((*sizes)[i], 2 * (*sizes)[i - 1]);
}

TEST(HarnessSizeSweepTest, StopsAtTheLastSizeNotAboveTheMaximum) {
  const auto sizes = sizeSweep(1000, 5000, 4.0);
  ASSERT_TRUE(sizes.ok());
  EXPECT_EQ(*sizes, (std::vector<int64_t>{1000, 4000}));
  EXPECT_EQ(*sizeSweep(64, 64, 2.0), std::vector<int64_t>{64});
}

TEST(HarnessSizeSweepTest, FractionalFactorsRoundDownAndAlwaysAdvance) {
  const auto sizes = sizeSweep(1, 10, 1.5);
  ASSERT_TRUE(sizes.ok());
  // 1 -> floor(1.5) = 1 would not advance, so 2; 2 -> 3; 3 -> 4; 4 -> 6; 6 -> 9; 9 -> 13 > 10.
  EXPECT_EQ(*sizes, (std::vector<int64_t>{1, 2, 3, 4, 6, 9}));
}

TEST(HarnessSizeSweepTest, RejectsImpossibleSweeps) {
  EXPECT_FALSE(sizeSweep(0, 8, 2.0).ok());
  EXPECT_FALSE(sizeSweep(16, 8, 2.0).ok());
  EXPECT_FALSE(sizeSweep(8, 16, 1.0).ok());
  EXPECT_FALSE(sizeSweep(8, 16, 0.5).ok());
}

TEST(HarnessCollectiveBuffersTest, AllReduceAndSendRecvUseWholeElements) {
  for (const CollectiveOp op : {CollectiveOp::kAllReduce, CollectiveOp::kSendRecv}) {
    const auto buffers = collectiveBuffers(op, 1001, 8, 2);
    ASSERT_TRUE(buffers);
    EXPECT_EQ(buffers->bytes, 1000);
    EXPECT_EQ(buffers->send_count, 500);
    EXPECT_EQ(buffers->recv_count, 500);
    EXPECT_EQ(buffers->call_count, 500);
  }
  EXPECT_FALSE(collectiveBuffers(CollectiveOp::kAllReduce, 1, 8, 2));
}

TEST(HarnessCollectiveBuffersTest, SplitOpsRoundToAMultipleOfTheGroup) {
  // 1 MiB of bf16 = 524288 elements; over 6 ranks: 87381 each, 524286 in all.
  const int64_t bytes = int64_t{1} << 20;
  const auto gather = collectiveBuffers(CollectiveOp::kAllGather, bytes, 6, 2);
  ASSERT_TRUE(gather);
  EXPECT_EQ(gather->send_count, 87381);
  EXPECT_EQ(gather->recv_count, 524286);
  EXPECT_EQ(gather->call_count, 87381);
  EXPECT_EQ(gather->bytes, 524286 * 2);

  const auto scatter = collectiveBuffers(CollectiveOp::kReduceScatter, bytes, 6, 2);
  ASSERT_TRUE(scatter);
  EXPECT_EQ(scatter->send_count, 524286);
  EXPECT_EQ(scatter->recv_count, 87381);
  EXPECT_EQ(scatter->call_count, 87381);
  EXPECT_EQ(scatter->bytes, 524286 * 2);

  const auto all_to_all = collectiveBuffers(CollectiveOp::kAllToAll, bytes, 6, 2);
  ASSERT_TRUE(all_to_all);
  EXPECT_EQ(all_to_all->send_count, 524286);
  EXPECT_EQ(all_to_all->recv_count, 524286);
  EXPECT_EQ(all_to_all->call_count, 87381);  // per peer
  EXPECT_EQ(all_to_all->bytes, 524286 * 2);
}

TEST(HarnessCollectiveBuffersTest, SplitOpsSkipSizesBelowOneElementPerRank) {
  EXPECT_FALSE(collectiveBuffers(CollectiveOp::kAllGather, 8, 8, 2));  // 4 elements over 8 ranks
  const auto smallest = collectiveBuffers(CollectiveOp::kAllGather, 16, 8, 2);
  ASSERT_TRUE(smallest);
  EXPECT_EQ(smallest->bytes, 16);
}

TEST(HarnessCollectiveBuffersTest, BroadcastIsNotMeasured) {
  EXPECT_FALSE(harnessMeasures(CollectiveOp::kBroadcast));
  for (const CollectiveOp op : {CollectiveOp::kAllReduce, CollectiveOp::kAllGather, CollectiveOp::kReduceScatter,
                                CollectiveOp::kAllToAll, CollectiveOp::kSendRecv}) {
    EXPECT_TRUE(harnessMeasures(op));
  }
}

}  // namespace
}  // namespace trainsim::harness
