#include "parallelism/gradient_buckets.h"

#include <gtest/gtest.h>

namespace trainsim::parallelism {
namespace {

ParallelPlan dataParallel(int64_t dp, int64_t cp = 1, bool overlap = true) {
  ParallelPlan plan;
  plan.dp = dp;
  plan.cp = cp;
  plan.overlap_grad_reduce = overlap;
  return plan;
}

TEST(GradientBucketsTest, FortyMillionParametersUpToFortyDataParallelRanks) {
  const GradientBuckets buckets;
  EXPECT_DOUBLE_EQ(buckets.bucketParameters(dataParallel(8)), 40e6);
  EXPECT_DOUBLE_EQ(buckets.bucketParameters(dataParallel(40)), 40e6);
  // 100M parameters: 2.5 buckets of 40M -> 3.
  EXPECT_EQ(buckets.count(dataParallel(8), 100e6), 3);
}

TEST(GradientBucketsTest, OneMillionParametersPerDataParallelRankBeyondThat) {
  const GradientBuckets buckets;
  // Llama 3 405B's dp 128: 128M-parameter buckets; a 3.16B-parameter chunk is 25 of them.
  EXPECT_DOUBLE_EQ(buckets.bucketParameters(dataParallel(128)), 128e6);
  EXPECT_EQ(buckets.count(dataParallel(128), 3.16e9), 25);
  // Context-parallel ranks count as data-parallel ranks (the gradients are reduced over both).
  EXPECT_DOUBLE_EQ(buckets.bucketParameters(dataParallel(32, 2)), 64e6);
}

TEST(GradientBucketsTest, ThePlansBucketSizeReplacesTheDefault) {
  const GradientBuckets buckets;
  ParallelPlan plan = dataParallel(128);
  plan.ddp_bucket_size = 4e9;  // the GKE Llama 2 70B sample's --ddp-bucket-size
  EXPECT_DOUBLE_EQ(buckets.bucketParameters(plan), 4e9);
  EXPECT_EQ(buckets.count(plan, 3.16e9), 1);
  plan.ddp_bucket_size = 1e9;
  EXPECT_EQ(buckets.count(plan, 3.16e9), 4);
}

TEST(GradientBucketsTest, OneBucketPerChunkWithoutOverlappedReduction) {
  const GradientBuckets buckets;
  EXPECT_EQ(buckets.count(dataParallel(8, 1, false), 3e9), 1);
  EXPECT_EQ(buckets.count(dataParallel(8), 1.0), 1);
}

}  // namespace
}  // namespace trainsim::parallelism
