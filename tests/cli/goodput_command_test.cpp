// `simulate` and `sweep` with the goodput model (goodput/, docs/goodput.md): the text lines,
// the JSON keys beside the failure-free ones, seeded Monte Carlo draws, slow GPUs, and the
// input errors of its keys.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/cli/trainsim_run.h"

namespace trainsim::cli_testing {
namespace {

nlohmann::json jsonOf(const TrainsimRun& run) {
  EXPECT_EQ(run.exit_code, 0) << run.err;
  try {
    return nlohmann::json::parse(run.out);
  } catch (const std::exception& error) {
    ADD_FAILURE() << "not JSON (" << error.what() << "):\n" << run.out;
    return nlohmann::json();
  }
}

TEST(GoodputCommandTest, SimulateStatesTheTimeWithFailuresBesideTheIdealOne) {
  const TrainsimRun text = runTrainsim({"simulate", "gpt3-175b-selene", "--symmetric"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("\ngoodput             "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("\ncheckpoints         every "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("\nwith failures       "), std::string::npos) << text.out;
  const auto json = jsonOf(runTrainsim({"simulate", "gpt3-175b-selene", "--symmetric", "--json", "-"}));
  const auto& goodput = json["goodput"];
  ASSERT_TRUE(goodput.is_object()) << json.dump();
  EXPECT_DOUBLE_EQ(goodput["failure_free_time_s"].get<double>(), json["time_to_train_s"].get<double>());
  EXPECT_GT(goodput["time_to_train_s"].get<double>(), json["time_to_train_s"].get<double>());
  EXPECT_GT(goodput["goodput"].get<double>(), 0.0);
  EXPECT_LT(goodput["goodput"].get<double>(), 1.0);
  const double lost = goodput["lost_s"]["checkpoints"].get<double>() + goodput["lost_s"]["restarts"].get<double>() +
                      goodput["lost_s"]["rework"].get<double>();
  EXPECT_NEAR(goodput["failure_free_time_s"].get<double>() + lost, goodput["time_to_train_s"].get<double>(),
              1e-6 * goodput["time_to_train_s"].get<double>());
  EXPECT_EQ(goodput["checkpoint"]["interval_choice"], "young-daly");
  EXPECT_TRUE(goodput["stragglers"].is_null());
  EXPECT_TRUE(goodput["monte_carlo"].is_null());
  // Without training tokens there is no run to speak of.
  const auto no_tokens = jsonOf(runTrainsim({"simulate", "mixtral-8x7b-h100", "--json", "-"}));
  EXPECT_TRUE(no_tokens["goodput"].is_null());
}

TEST(GoodputCommandTest, MonteCarloDrawsAreSeeded) {
  const std::vector<std::string> args = {
      "simulate", "gpt3-175b-selene", "--symmetric", "--goodput-draws", "500", "--json", "-"};
  const auto a = jsonOf(runTrainsim(args));
  auto seeded = args;
  seeded.insert(seeded.end(), {"--seed", "1"});
  const auto b = jsonOf(runTrainsim(seeded));
  seeded.back() = "2";
  const auto c = jsonOf(runTrainsim(seeded));
  const auto& mc = a["goodput"]["monte_carlo"];
  ASSERT_TRUE(mc.is_object());
  EXPECT_EQ(mc["draws"], 500);
  EXPECT_EQ(a["goodput"].dump(), b["goodput"].dump());  // the default seed is 1
  EXPECT_NE(a["goodput"]["monte_carlo"].dump(), c["goodput"]["monte_carlo"].dump());
  EXPECT_LE(mc["time_to_train_p50_s"].get<double>(), mc["time_to_train_p90_s"].get<double>());
  EXPECT_NEAR(mc["time_to_train_mean_s"].get<double>() / a["goodput"]["time_to_train_s"].get<double>(), 1.0, 0.02);
}

TEST(GoodputCommandTest, SlowGpusAreSimulatedRankByRank) {
  const auto json =
      jsonOf(runTrainsim({"simulate", "llama3-8b-dgx-h100", "--set", "cluster.reliability.stragglers.fraction=0.5",
                          "--set", "cluster.reliability.stragglers.slowdown=1.5", "--json", "-"}));
  const auto& stragglers = json["goodput"]["stragglers"];
  ASSERT_TRUE(stragglers.is_object()) << json.dump();
  EXPECT_GT(stragglers["slow_gpus"].get<int>(), 0);
  EXPECT_GT(stragglers["iteration_time_s"].get<double>(), 1.2 * json["iteration_time_s"].get<double>());
  EXPECT_DOUBLE_EQ(json["goodput"]["iteration_time_s"].get<double>(), stragglers["iteration_time_s"].get<double>());
}

TEST(GoodputCommandTest, CheckpointAndReliabilityKeysAreChecked) {
  const TrainsimRun both = runTrainsim(
      {"simulate", "llama3-8b-dgx-h100", "--set", "training.checkpoint={interval_s: 600, interval_iterations: 10}"});
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("not both"), std::string::npos) << both.err;
  const TrainsimRun unknown =
      runTrainsim({"simulate", "llama3-8b-dgx-h100", "--set", "cluster.reliability.failures.gpus=1"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("gpus: unknown key"), std::string::npos) << unknown.err;
  const TrainsimRun given = runTrainsim(
      {"simulate", "llama3-8b-dgx-h100", "--set", "training.checkpoint.interval_iterations=100", "--json", "-"});
  const auto json = jsonOf(given);
  EXPECT_EQ(json["goodput"]["checkpoint"]["interval_iterations"], 100);
  EXPECT_EQ(json["goodput"]["checkpoint"]["interval_choice"], "given");
}

TEST(GoodputCommandTest, SweepRanksByTheTimeWithFailures) {
  const std::vector<std::string> args = {
      "sweep", "llama3-8b-dgx-h100", "--gpus", "8,16", "--top", "3", "--fix", "cp=1", "--fix", "ep=1", "--json", "-"};
  const auto plain = jsonOf(runTrainsim(args));
  auto with = args;
  with.push_back("--goodput");
  const auto goodput = jsonOf(runTrainsim(with));
  ASSERT_TRUE(goodput["plans"].is_array());
  const auto& first = goodput["plans"][0];
  ASSERT_TRUE(first.contains("goodput")) << first.dump();
  EXPECT_GT(first["goodput"]["time_to_train_s"].get<double>(), first["time_to_train_s"].get<double>());
  EXPECT_FALSE(plain["plans"][0].contains("goodput"));
  const TrainsimRun no_tokens =
      runTrainsim({"sweep", "mixtral-8x7b-h100", "--goodput", "--fix", "tp=2", "--fix", "pp=1"});
  EXPECT_EQ(no_tokens.exit_code, 2);
  EXPECT_NE(no_tokens.err.find("training.tokens"), std::string::npos) << no_tokens.err;
}

}  // namespace
}  // namespace trainsim::cli_testing

namespace trainsim::cli_testing {
namespace {

// The memory budget (--max-memory-gib) covers what the goodput model and a sweep simulate:
// with slow GPUs every rank is simulated again, and each plan a sweep simulates is checked.
TEST(GoodputCommandTest, TheMemoryBudgetCoversTheSlowGpuRunAndEverySweptPlan) {
  // gpt3-175b-selene: about 38 MB estimated for one replica, 136 MB for every rank.
  const std::vector<std::string> args = {"simulate", "gpt3-175b-selene", "--symmetric", "--max-memory-gib", "0.08"};
  EXPECT_EQ(runTrainsim(args).exit_code, 0);
  auto slow = args;
  slow.insert(slow.end(), {"--set", "cluster.reliability.stragglers.fraction=0.01"});
  const TrainsimRun refused = runTrainsim(slow);
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("stragglers.fraction=0"), std::string::npos) << refused.err;
  const auto sweep = jsonOf(runTrainsim(
      {"sweep", "llama3-8b-dgx-h100", "--fix", "cp=1", "--fix", "ep=1", "--max-memory-gib", "0.001", "--json", "-"}));
  ASSERT_TRUE(sweep["plans"].is_array());
  int over_budget = 0;
  for (const auto& plan : sweep["plans"]) {
    if (plan.value("reason", "").find("over --max-memory-gib 0.001") != std::string::npos) ++over_budget;
    EXPECT_FALSE(plan.contains("iteration_time_s")) << plan.dump();
  }
  EXPECT_GT(over_budget, 0);
}

}  // namespace
}  // namespace trainsim::cli_testing
