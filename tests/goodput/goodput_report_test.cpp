#include "goodput/goodput_report.h"

#include <gtest/gtest.h>

#include "goodput/stragglers.h"
#include "parallelism/experiment_loader.h"
#include "tests/shipped_defaults.h"
#include "topology/reliability_spec.h"

namespace trainsim::goodput {
namespace {

parallelism::Experiment shippedExperiment(const std::string& name, const std::vector<std::string>& sets = {}) {
  std::vector<Override> overrides;
  for (const auto& text : sets) overrides.push_back(parseOverride(text));
  return valueOrThrow(parallelism::loadExperiment(name, shippedConfigPaths(), overrides));
}

TEST(GoodputReportTest, TheShippedRatesGiveLlama3sInterruptionsPerDay) {
  // The defaults are Llama 3's Table 5 counts over its 54 days on 2,048 nodes: the same job
  // must come back at 419 unexpected and 47 planned interruptions per 54 days.
  const auto experiment = shippedExperiment("llama3-405b-16k-h100");
  const auto reliability = valueOrThrow(topology::clusterReliability(experiment.cluster, shippedConfigPaths()));
  const JobDevices devices = jobDevices(experiment);
  EXPECT_EQ(devices.gpus, 16384);
  EXPECT_EQ(devices.nodes, 2048);
  EXPECT_EQ(devices.nics, 16384);
  const JobFailureRates rates = jobFailureRates(reliability.failures, devices);
  EXPECT_NEAR(rates.unplanned() * 54.0 * 86400.0, 419.0, 0.5);
  EXPECT_NEAR(rates.planned * 54.0 * 86400.0, 47.0, 0.1);
  EXPECT_NEAR(rates.hardwareShare(), 356.0 / 419.0, 1e-3);
}

TEST(GoodputReportTest, CheckpointsHoldWeightsAndOptimizerStates) {
  const auto experiment = shippedExperiment("llama3-405b-16k-h100");
  const auto reliability = valueOrThrow(topology::clusterReliability(experiment.cluster, shippedConfigPaths()));
  const JobDevices devices = jobDevices(experiment);
  const CheckpointCost cost = checkpointCost(experiment, devices, reliability.storage);
  // bf16 with Adam: 2 bytes of weights, 4 of fp32 master weights, 8 of moments.
  EXPECT_NEAR(cost.bytes / experiment.model.parameterCount(), 14.0, 1e-9);
  const double write_GBps = std::min(reliability.storage.write_GBps, 2048.0 * reliability.storage.node_write_GBps);
  EXPECT_NEAR(cost.write_s, reliability.storage.latency_s + cost.bytes / (write_GBps * 1e9), 1e-9);
  EXPECT_DOUBLE_EQ(cost.stall_s, cost.write_s);  // synchronous by default
  const auto async = shippedExperiment("llama3-405b-16k-h100", {"training.checkpoint.async=true"});
  const CheckpointCost async_cost = checkpointCost(async, devices, reliability.storage);
  EXPECT_TRUE(async_cost.async);
  EXPECT_NEAR(async_cost.stall_s, cost.bytes / 16384.0 / (async.cluster.gpu.pcie_bandwidth_GBps * 1e9), 1e-9);
}

TEST(GoodputReportTest, GivenIntervalsAreKeptAndNoTokensMeansNoReport) {
  const auto experiment = shippedExperiment("llama3-405b-16k-h100", {"training.checkpoint.interval_iterations=250"});
  const auto reliability = valueOrThrow(topology::clusterReliability(experiment.cluster, shippedConfigPaths()));
  const auto report = goodputAt(experiment, reliability, 6.0, {});
  ASSERT_TRUE(report && report->estimate);
  EXPECT_EQ(report->estimate->interval_iterations, 250);
  EXPECT_FALSE(report->estimate->interval_chosen);
  EXPECT_GT(*report->time_to_train_s, report->useful_s);
  auto no_tokens = experiment;
  no_tokens.training.tokens.reset();
  EXPECT_FALSE(goodputAt(no_tokens, reliability, 6.0, {}));
}

TEST(StragglersTest, DrawsAreSeededAndFollowTheFraction) {
  const topology::Stragglers none{0.0, 1.5};
  EXPECT_EQ(drawStragglers(1000, none, 1).slow_gpus, 0);
  const topology::Stragglers all{1.0, 1.5};
  const StragglerDraw every = drawStragglers(1000, all, 1);
  EXPECT_EQ(every.slow_gpus, 1000);
  EXPECT_DOUBLE_EQ(every.rank_compute_scale[17], 1.5);
  const topology::Stragglers some{0.1, 1.5};
  const StragglerDraw a = drawStragglers(10000, some, 3);
  EXPECT_EQ(a.rank_compute_scale, drawStragglers(10000, some, 3).rank_compute_scale);
  EXPECT_NE(a.rank_compute_scale, drawStragglers(10000, some, 4).rank_compute_scale);
  EXPECT_NEAR(static_cast<double>(a.slow_gpus), 1000.0, 100.0);  // 3.3 standard deviations
}

}  // namespace
}  // namespace trainsim::goodput
