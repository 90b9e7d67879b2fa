#include "parallelism/pipeline_schedule.h"

#include <gtest/gtest.h>

#include <map>

#include "tests/parallelism/pipeline_timing.h"

namespace trainsim::parallelism {
namespace {

// The schedule with compute-only tasks (forward tf, backward tb per chunk, free communication).
sim::SimTime pipelineTime(PipelineSchedule schedule, int64_t stages, int64_t chunks, int64_t microbatches,
                          sim::SimTime tf, sim::SimTime tb) {
  return testing::computeOnlyPipelineTime(testing::pipelinePlan(schedule, stages, chunks), microbatches, tf, tb);
}

TEST(PipelineScheduleTest, OneFOneBBubbleFractionIsPMinusOneOverMPlusPMinusOne) {
  const sim::SimTime tf = 1000, tb = 2000;
  for (int64_t p : {2, 4, 8}) {
    for (int64_t m : {1, 4, 8, 16}) {
      const sim::SimTime time = pipelineTime(PipelineSchedule::kOneFOneB, p, 1, m, tf, tb);
      EXPECT_EQ(time, (m + p - 1) * (tf + tb)) << "p=" << p << " m=" << m;
      const double bubble = 1.0 - static_cast<double>(m * (tf + tb)) / static_cast<double>(time);
      EXPECT_NEAR(bubble, static_cast<double>(p - 1) / static_cast<double>(m + p - 1), 1e-12);
    }
  }
}

TEST(PipelineScheduleTest, GpipeHasTheSameBubbleButHoldsEveryMicrobatch) {
  const int64_t p = 4, m = 8;
  EXPECT_EQ(pipelineTime(PipelineSchedule::kGpipe, p, 1, m, 1000, 2000), (m + p - 1) * 3000);
  EXPECT_EQ(peakInFlight(stageOrder(PipelineSchedule::kGpipe, p, 1, m, 0)), m);
  for (int64_t s = 0; s < p; ++s) {
    EXPECT_EQ(peakInFlight(stageOrder(PipelineSchedule::kOneFOneB, p, 1, m, s)), p - s);
  }
}

TEST(PipelineScheduleTest, InterleavingDividesTheBubbleByTheNumberOfChunks) {
  // Each chunk holds 1/v of the stage's layers: tf and tb per chunk are 1/v of the stage's.
  const int64_t p = 4, m = 8;
  const sim::SimTime tf = 1200, tb = 2400;
  const sim::SimTime plain = pipelineTime(PipelineSchedule::kOneFOneB, p, 1, m, tf, tb);
  const sim::SimTime ideal = m * (tf + tb);
  for (int64_t v : {2, 3, 4}) {
    const sim::SimTime interleaved = pipelineTime(PipelineSchedule::kOneFOneB, p, v, m, tf / v, tb / v);
    EXPECT_EQ(interleaved - ideal, (plain - ideal) / v) << "v=" << v;
  }
}

TEST(PipelineScheduleTest, EveryPassAppearsOnce) {
  for (auto schedule : {PipelineSchedule::kGpipe, PipelineSchedule::kOneFOneB}) {
    const int64_t chunks = schedule == PipelineSchedule::kGpipe ? 1 : 2;
    const auto order = stageOrder(schedule, 4, chunks, 8, 1);
    EXPECT_EQ(order.size(), static_cast<std::size_t>(2 * 8 * chunks));
    for (std::size_t i = 0; i < order.size(); ++i) {
      for (std::size_t j = i + 1; j < order.size(); ++j) EXPECT_FALSE(order[i] == order[j]);
    }
  }
}

}  // namespace
}  // namespace trainsim::parallelism
