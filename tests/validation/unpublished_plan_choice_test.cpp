// The plan settings a source leaves out (validation/unpublished_plan_choice.h): which candidates
// a row gets, and that the chosen one is the fastest of those that fit, as simulated.
#include "validation/unpublished_plan_choice.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "parallelism/memory_model.h"
#include "tests/shipped_simulation_options.h"
#include "validation/training_suite.h"

namespace trainsim::validation {
namespace {

const ConfigPaths kPaths{TRAINSIM_CONFIG_DIR_FOR_TESTS};

const TrainingRow& row(const std::string& id) {
  static const TrainingRows rows = [] {
    auto loaded = loadTrainingRows(kPaths);
    if (!loaded.ok()) throw std::runtime_error(loaded.error().toString());
    return std::move(loaded).value();
  }();
  const TrainingRow* found = rows.find(id);
  if (found == nullptr) throw std::out_of_range(id);
  return *found;
}

// The row's experiment as its file gives it, or at `setting`.
parallelism::Experiment experimentOf(const TrainingRow& row, const std::vector<Override>& overrides = {}) {
  auto experiment = trainingExperiment(row, kPaths, overrides);
  if (!experiment.ok()) throw std::runtime_error(experiment.error().toString());
  return std::move(experiment).value();
}

TEST(UnpublishedPlanChoiceTest, CandidatesArePowersOfTwoOfTheReplicaBatchTimesChunkCountsOfAStage) {
  TrainingRow unpublished = row("mcore-h100-weak-005");  // gbs 384, dp 48, 84 layers, pp 2
  ASSERT_TRUE(hasUnpublishedPlanSettings(unpublished));
  parallelism::Experiment experiment = experimentOf(unpublished);
  std::vector<PlanSetting> expected;
  for (const int64_t size : {1, 2, 4, 8}) {
    for (const int64_t chunks : {1, 2, 3, 6, 7, 14, 21, 42}) expected.push_back({size, chunks});
  }
  EXPECT_EQ(planCandidates(unpublished, experiment), expected);

  // A published setting stays as published; the other is still searched.
  unpublished.virtual_stages_published = true;
  experiment.plan.virtual_stages = 3;
  EXPECT_EQ(planCandidates(unpublished, experiment), (std::vector<PlanSetting>{{1, 3}, {2, 3}, {4, 3}, {8, 3}}));
  // Without pipelining there is one chunk; a per-replica batch of 24 gives 1, 2, 4, 8.
  TrainingRow flat = unpublished;
  parallelism::Experiment flat_experiment = experiment;
  flat_experiment.plan.pp = 1;
  flat.virtual_stages_published = false;
  flat_experiment.training.global_batch_size = 24 * flat_experiment.plan.dp;
  EXPECT_EQ(planCandidates(flat, flat_experiment), (std::vector<PlanSetting>{{1, 1}, {2, 1}, {4, 1}, {8, 1}}));

  // Every other source publishes both: its row is its own one candidate.
  const TrainingRow& published = row("megatron-sc21-t1-006");
  EXPECT_FALSE(hasUnpublishedPlanSettings(published));
  const parallelism::Experiment published_experiment = experimentOf(published);
  EXPECT_EQ(planCandidates(published, published_experiment),
            (std::vector<PlanSetting>{
                {published_experiment.training.micro_batch_size, published_experiment.plan.virtual_stages}}));
  EXPECT_EQ(describePlanSetting({4, 1}), "micro-batch 4, 1 chunk");
  EXPECT_EQ(describePlanSetting({1, 7}), "micro-batch 1, 7 chunks");
}

// Megatron-Core's 119B row (tp 8, pp 4, dp 48; 16 sequences per replica, 23 layers per
// stage): micro-batch 4 and up do not fit in 80 GB, so only 1 and 2 with 1 or 23 chunks are
// simulated, and the chosen one is the fastest of those, each simulated on its own.
TEST(UnpublishedPlanChoiceTest, ChoosesTheFastestOfTheSettingsThatFit) {
  const TrainingRow& unpublished = row("mcore-h100-weak-006");
  parallelism::SimulationOptions options = shippedSimulationOptions();
  options.iteration.symmetric = true;  // one data-parallel replica: the same figures, faster
  const auto choice = chooseUnpublishedPlan(unpublished, kPaths, options);
  ASSERT_TRUE(choice.ok()) << choice.error().toString();
  EXPECT_EQ(choice->fitting, (std::vector<PlanSetting>{{1, 1}, {1, 23}, {2, 1}, {2, 23}}));
  double fastest = 0.0;
  PlanSetting fastest_setting;
  for (const PlanSetting& setting : planCandidates(unpublished, experimentOf(unpublished))) {
    const auto experiment = trainingExperiment(unpublished, kPaths, planSettingOverrides(setting));
    // 23 chunks need the micro-batches (16 / size) to be a multiple of pp 4: not at 8.
    const bool fits = experiment.ok() && parallelism::estimateMemory(*experiment).fits();
    const bool listed = std::find(choice->fitting.begin(), choice->fitting.end(), setting) != choice->fitting.end();
    EXPECT_EQ(fits, listed) << describePlanSetting(setting);
    if (!fits) continue;
    const auto result = parallelism::simulateIteration(*experiment, options);
    ASSERT_TRUE(result.ok());
    if (result->tokens_per_s > fastest) {
      fastest = result->tokens_per_s;
      fastest_setting = setting;
    }
  }
  EXPECT_EQ(choice->chosen, fastest_setting);
  // The returned result is the chosen plan's own simulation (full mode, as `options` ask).
  EXPECT_DOUBLE_EQ(choice->result.tokens_per_s, fastest);
  EXPECT_TRUE(choice->result.memory.fits());
}

// The suite runs such a row at the chosen setting and says so; a row whose source publishes
// its plan runs as published.
TEST(UnpublishedPlanChoiceTest, TheSuiteRunsTheChosenSetting) {
  TrainingSuiteOptions options;
  options.simulation = shippedSimulationOptions();
  options.only = {"mcore-h100-weak-004", "megatron-sc21-t1-001"};
  const auto suite = runTrainingSuite(kPaths, options);
  ASSERT_TRUE(suite.ok()) << suite.error().toString();
  ASSERT_EQ(suite->rows.size(), 2u);  // in the suite's order: SC21 first
  const auto& chosen = suite->rows[1];
  ASSERT_TRUE(chosen.ran) << chosen.failure;
  EXPECT_TRUE(chosen.plan_chosen);
  const auto direct = chooseUnpublishedPlan(chosen.row, kPaths, options.simulation);
  ASSERT_TRUE(direct.ok());
  EXPECT_EQ(chosen.plan, direct->chosen);
  ASSERT_TRUE(chosen.experiment.has_value());
  EXPECT_EQ(chosen.result.microbatches * chosen.plan.micro_batch_size * chosen.experiment->plan.dp,
            chosen.experiment->training.global_batch_size);
  const auto& published = suite->rows[0];
  ASSERT_TRUE(published.ran) << published.failure;
  EXPECT_FALSE(published.plan_chosen);
  ASSERT_TRUE(published.experiment.has_value());
  EXPECT_EQ(published.plan,
            (PlanSetting{published.experiment->training.micro_batch_size, published.experiment->plan.virtual_stages}));
}

// Row 004 (32B at tp 8: 4B parameters per GPU, dp 48 over one rail per GPU) at micro-batch 1
// leaves four micro-batches, and the last one's backward is too short to hide the fp32
// gradients' reduce-scatter: the exposed data-parallel time is what the larger micro-batch
// the suite chooses hides.
TEST(UnpublishedPlanChoiceTest, LargerMicroBatchesHideTheDataParallelReductions) {
  const TrainingRow& unpublished = row("mcore-h100-weak-004");
  const auto one = parallelism::simulateIteration(experimentOf(unpublished, planSettingOverrides({1, 1})),
                                                  shippedSimulationOptions());
  const auto four = parallelism::simulateIteration(experimentOf(unpublished, planSettingOverrides({4, 1})),
                                                   shippedSimulationOptions());
  ASSERT_TRUE(one.ok() && four.ok());
  EXPECT_GT(one->breakdown.dp_comm_exposed, 0.2 * one->iteration_time_s);
  EXPECT_LT(four->breakdown.dp_comm_exposed, 0.5 * one->breakdown.dp_comm_exposed);
  EXPECT_GT(four->tokens_per_s, 1.3 * one->tokens_per_s);
}

}  // namespace
}  // namespace trainsim::validation
