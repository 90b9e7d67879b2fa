#include "goodput/goodput_model.h"

#include <gtest/gtest.h>

#include <cmath>

#include "goodput/goodput_monte_carlo.h"

namespace trainsim::goodput {
namespace {

constexpr double kHour = 3600.0;
constexpr double kDay = 86400.0;

// A run shaped like Llama 3 405B on 16,384 H100: 54 days of training at 5 s per iteration,
// 7.8 unplanned interruptions a day (85% needing a node), 0.87 planned ones.
GoodputInputs llamaLikeRun() {
  GoodputInputs inputs;
  inputs.useful_s = 54.0 * kDay;
  inputs.iteration_s = 5.0;
  inputs.rates.hardware = 6.6 / kDay;
  inputs.rates.software = 1.17 / kDay;
  inputs.rates.planned = 0.87 / kDay;
  inputs.checkpoint.bytes = 5.7e12;
  inputs.checkpoint.write_s = 30.0;
  inputs.checkpoint.load_s = 15.0;
  inputs.checkpoint.stall_s = 30.0;
  inputs.restart.detection_s = 600.0;
  inputs.restart.process_start_s = 120.0;
  return inputs;
}

TEST(DalyIntervalTest, ReproducesThePublishedOptima) {
  // Daly (FGCS 2006), figure captions: delta = 5 min, R = 10 min; M = 24 h -> 117 min,
  // M = 6 h -> 57 min, M = 15 min -> 9.1 min.
  EXPECT_NEAR(dalyInterval(5.0 * 60, 24.0 * kHour) / 60.0, 117.0, 0.5);
  EXPECT_NEAR(dalyInterval(5.0 * 60, 6.0 * kHour) / 60.0, 57.0, 0.5);
  EXPECT_NEAR(dalyInterval(5.0 * 60, 15.0 * 60) / 60.0, 9.1, 0.1);
  // Beyond delta >= 2M the optimum is M itself.
  EXPECT_DOUBLE_EQ(dalyInterval(100.0, 40.0), 40.0);
}

TEST(GoodputModelTest, WithoutFailuresOnlyTheCheckpointStallsAreLost) {
  GoodputInputs inputs = llamaLikeRun();
  inputs.rates = {};
  inputs.interval_iterations = 100;  // a checkpoint every 500 s
  const auto estimate = estimateGoodput(inputs);
  ASSERT_TRUE(estimate);
  // One between every two intervals: the run ends with its last iteration, not a checkpoint.
  const double checkpoints = std::ceil(inputs.useful_s / 500.0) - 1.0;
  EXPECT_DOUBLE_EQ(estimate->checkpoints, checkpoints);
  EXPECT_NEAR(estimate->wall_s, inputs.useful_s + checkpoints * 30.0, 1e-6 * inputs.useful_s);
  EXPECT_DOUBLE_EQ(estimate->unplanned, 0.0);
  EXPECT_NEAR(estimate->lost_rework_s, 0.0, 1e-6 * inputs.useful_s);
  EXPECT_FALSE(estimate->interval_chosen);
}

TEST(GoodputModelTest, LossesSumToTheWallTimeAndTheIntervalIsDalys) {
  const GoodputInputs inputs = llamaLikeRun();
  const auto estimate = estimateGoodput(inputs);
  ASSERT_TRUE(estimate);
  EXPECT_TRUE(estimate->interval_chosen);
  const double mtbf = 1.0 / inputs.rates.unplanned();
  EXPECT_NEAR(estimate->interval_s, dalyInterval(30.0, mtbf), inputs.iteration_s / 2.0 + 1e-9);
  EXPECT_NEAR(estimate->lost_checkpoint_s + estimate->lost_restart_s + estimate->lost_rework_s + inputs.useful_s,
              estimate->wall_s, 1e-9 * estimate->wall_s);
  // About 7.8 a day over the wall time.
  EXPECT_NEAR(estimate->unplanned / (estimate->wall_s / kDay), 7.77, 0.05);
  EXPECT_GT(estimate->goodput, 0.5);
  EXPECT_LT(estimate->goodput, 1.0);
}

TEST(GoodputModelTest, HotSparesShortenTheHardwareRestart) {
  GoodputInputs inputs = llamaLikeRun();
  inputs.restart.reschedule_s = 7200.0;  // a node from the provider takes two hours
  const auto without = estimateGoodput(inputs);
  inputs.spares = {64, 0.0, 2.0};
  const auto with = estimateGoodput(inputs);
  ASSERT_TRUE(without && with);
  EXPECT_DOUBLE_EQ(without->restart.spare_available, 0.0);
  EXPECT_GT(with->restart.spare_available, 0.999);
  EXPECT_NEAR(without->restart.hardware - with->restart.hardware, 7200.0, 10.0);
  EXPECT_GT(with->goodput, without->goodput);
}

TEST(GoodputModelTest, FailuresFasterThanRestartsLeaveNoProgress) {
  GoodputInputs inputs = llamaLikeRun();
  inputs.rates.hardware = 1.0;  // one a second
  EXPECT_FALSE(estimateGoodput(inputs));
}

TEST(GoodputMonteCarloTest, AgreesWithTheAnalyticEstimate) {
  for (const bool async : {false, true}) {
    GoodputInputs inputs = llamaLikeRun();
    inputs.restart.reschedule_s = 7200.0;
    inputs.spares = {8, 0.0, 2.0};  // sometimes all under repair
    if (async) {
      inputs.checkpoint.async = true;
      inputs.checkpoint.stall_s = 2.0;
    }
    const auto estimate = estimateGoodput(inputs);
    ASSERT_TRUE(estimate);
    const MonteCarloSummary summary = simulateGoodput(inputs, *estimate, 2000, 42);
    EXPECT_NEAR(summary.wall_mean_s / estimate->wall_s, 1.0, 0.01) << "async " << async;
    EXPECT_NEAR(summary.unplanned_mean / estimate->unplanned, 1.0, 0.02) << "async " << async;
    EXPECT_NEAR(summary.planned_mean / estimate->planned, 1.0, 0.03) << "async " << async;
    EXPECT_LE(summary.wall_p50_s, summary.wall_p90_s);
  }
}

TEST(GoodputMonteCarloTest, TheSameSeedGivesTheSameFigures) {
  const GoodputInputs inputs = llamaLikeRun();
  const auto estimate = estimateGoodput(inputs);
  ASSERT_TRUE(estimate);
  const MonteCarloSummary a = simulateGoodput(inputs, *estimate, 200, 7);
  const MonteCarloSummary b = simulateGoodput(inputs, *estimate, 200, 7);
  const MonteCarloSummary c = simulateGoodput(inputs, *estimate, 200, 8);
  EXPECT_EQ(a.wall_p50_s, b.wall_p50_s);
  EXPECT_EQ(a.wall_p90_s, b.wall_p90_s);
  EXPECT_EQ(a.unplanned_mean, b.unplanned_mean);
  EXPECT_NE(a.wall_mean_s, c.wall_mean_s);
}

TEST(GoodputMonteCarloTest, WithoutFailuresEveryDrawIsTheSame) {
  GoodputInputs inputs = llamaLikeRun();
  inputs.rates = {};
  inputs.interval_iterations = 100;
  const auto estimate = estimateGoodput(inputs);
  ASSERT_TRUE(estimate);
  const MonteCarloSummary summary = simulateGoodput(inputs, *estimate, 10, 1);
  EXPECT_NEAR(summary.wall_p50_s, estimate->wall_s, 1e-6 * estimate->wall_s);
  EXPECT_DOUBLE_EQ(summary.wall_p50_s, summary.wall_p90_s);
  EXPECT_DOUBLE_EQ(summary.unplanned_mean, 0.0);
}

}  // namespace
}  // namespace trainsim::goodput
