// The sweep engine on a small case: memory pruning agrees with the memory model as
// `trainsim memory` runs it, the best plan of the screened search is the optimum over every
// simulated plan, the output does not depend on the thread count, the Pareto front is one.
#include "sweep/sweep.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <map>
#include <stdexcept>

#include "parallelism/experiment_loader.h"
#include "sweep/parallel_for.h"
#include "sweep/pareto_front.h"
#include "sweep/sweep_csv.h"
#include "sweep_test_support.h"
#include "tests/shipped_simulation_options.h"

namespace trainsim::sweep {
namespace {

using testing::ExperimentFile;

std::vector<SweepTarget> targetsOf(const ExperimentFile& file, const std::vector<Override>& overrides = {}) {
  SweepTargetRequest request;
  request.experiment = file.path();
  request.overrides = overrides;
  auto targets = loadSweepTargets(request, testing::testConfigPaths());
  if (!targets) ADD_FAILURE() << targets.error().toString();
  return std::move(targets).value();
}

SweepResult sweepOf(const ExperimentFile& file, SweepSettings settings, const PlanSpace& space = {}) {
  auto group = singleProcess();
  return runSweep(targetsOf(file), space, settings, *group);
}

// The overrides that make `trainsim memory` / `simulate` load this candidate's plan.
std::vector<Override> overridesFor(const PlanCandidate& candidate) {
  const auto& plan = candidate.plan;
  std::vector<Override> overrides;
  auto set = [&](const std::string& key, const std::string& value) {
    overrides.push_back(parseOverride(key + "=" + value));
  };
  set("parallelism.tp", std::to_string(plan.tp));
  set("parallelism.pp", std::to_string(plan.pp));
  set("parallelism.cp", std::to_string(plan.cp));
  set("parallelism.dp", std::to_string(plan.dp));
  set("parallelism.ep", std::to_string(plan.ep));
  set("parallelism.virtual_stages", std::to_string(plan.virtual_stages));
  set("parallelism.sequence_parallel", plan.sequence_parallel ? "true" : "false");
  set("parallelism.zero", std::to_string(plan.zero));
  set("parallelism.recompute", std::string(parallelism::recomputeName(plan.recompute)));
  set("training.micro_batch_size", std::to_string(candidate.micro_batch_size));
  return overrides;
}

SweepSettings fastSettings() {
  SweepSettings settings;
  settings.simulation = shippedSimulationOptions();
  settings.threads = 2;
  settings.top = 5;
  settings.simulation.iteration.symmetric = true;
  return settings;
}

TEST(SweepTest, MemoryPruningAgreesWithTheMemoryCommand) {
  const ExperimentFile file;
  SweepSettings settings = fastSettings();
  settings.max_simulations = 1;  // only the memory phase matters here
  const SweepResult result = sweepOf(file, settings);
  ASSERT_GT(result.counts.pruned_memory, 0u);
  ASSERT_GT(result.counts.fitting, 0u);
  std::size_t checked = 0;
  for (std::size_t i = 0; i < result.candidates.size(); ++i) {
    const PlanOutcome& outcome = result.outcomes[i];
    if (outcome.status == PlanStatus::kInvalid) continue;
    // One plan in 7 keeps the test quick; the stride walks over every kind of plan.
    if (i % 7 != 0) continue;
    const auto experiment =
        parallelism::loadExperiment(file.path(), testing::testConfigPaths(), overridesFor(result.candidates[i]));
    ASSERT_TRUE(experiment.ok()) << experiment.error().toString();
    const parallelism::MemoryReport report = parallelism::estimateMemory(*experiment);
    EXPECT_EQ(report.fits(), outcome.status != PlanStatus::kPrunedMemory);
    EXPECT_DOUBLE_EQ(report.peakBytes(), outcome.memory->peakBytes());
    EXPECT_EQ(report.peak().stage, outcome.memory->peak().stage);
    ++checked;
  }
  EXPECT_GT(checked, 20u);
}

TEST(SweepTest, UnfusedAttentionReachesEverySweptPlan) {
  // training.flash_attention: false is the experiment's, not a plan's: every swept plan keeps
  // it, memory pruning holds the s x s softmax output and the screen times the unfused kernels.
  const ExperimentFile file;
  SweepSettings settings = fastSettings();
  settings.max_simulations = 1;  // memory and screen only
  const std::vector<Override> unfused_override = {parseOverride("training.flash_attention=false")};
  auto group = singleProcess();
  const SweepResult flash = runSweep(targetsOf(file), {}, settings, *group);
  const SweepResult unfused = runSweep(targetsOf(file, unfused_override), {}, settings, *group);
  ASSERT_FALSE(unfused.targets.front().experiment.training.flash_attention);
  ASSERT_EQ(unfused.candidates.size(), flash.candidates.size());
  EXPECT_GT(unfused.counts.pruned_memory, flash.counts.pruned_memory);
  std::size_t screened = 0;
  std::size_t slower = 0;
  for (std::size_t i = 0; i < unfused.candidates.size(); ++i) {
    const PlanOutcome& with = flash.outcomes[i];
    const PlanOutcome& without = unfused.outcomes[i];
    if (without.status == PlanStatus::kInvalid) continue;
    EXPECT_GT(without.memory->peakBytes(), with.memory->peakBytes()) << i;
    if (with.estimated_iteration_time_s && without.estimated_iteration_time_s) {
      // Never faster; equal where the pass is bound by ZeRO-3's prefetched gathers, which
      // hide the extra attention work.
      EXPECT_GE(*without.estimated_iteration_time_s, *with.estimated_iteration_time_s) << i;
      if (*without.estimated_iteration_time_s > *with.estimated_iteration_time_s) ++slower;
      ++screened;
    }
    if (i % 13 != 0) continue;  // as `trainsim memory` sizes it, on a stride of the plans
    std::vector<Override> overrides = overridesFor(unfused.candidates[i]);
    overrides.insert(overrides.end(), unfused_override.begin(), unfused_override.end());
    const auto experiment = parallelism::loadExperiment(file.path(), testing::testConfigPaths(), overrides);
    ASSERT_TRUE(experiment.ok()) << experiment.error().toString();
    EXPECT_DOUBLE_EQ(parallelism::estimateMemory(*experiment).peakBytes(), without.memory->peakBytes()) << i;
  }
  EXPECT_GT(screened, 10u);
  EXPECT_GT(slower, screened / 2);
}

TEST(SweepTest, BestPlanIsTheOptimumOverEverySimulatedPlan) {
  const ExperimentFile file;
  SweepSettings all_settings = fastSettings();
  all_settings.simulate_all = true;
  const SweepResult all = sweepOf(file, all_settings);
  ASSERT_EQ(all.counts.simulated, all.counts.fitting);
  ASSERT_GT(all.counts.simulated, kRoundSize);
  // The first plan of the output has the smallest simulated iteration time of all.
  double best = std::numeric_limits<double>::infinity();
  for (const auto& outcome : all.outcomes) {
    if (outcome.result) best = std::min(best, outcome.result->iteration_time_s);
  }
  const std::size_t first = all.order.front();
  EXPECT_EQ(all.outcomes[first].status, PlanStatus::kSimulated);
  EXPECT_EQ(all.outcomes[first].result->iteration_time_s, best);

  // The screened search finds the same optimum with fewer simulations.
  const SweepResult screened = sweepOf(file, fastSettings());
  EXPECT_LT(screened.counts.simulated, all.counts.simulated);
  EXPECT_GT(screened.counts.screened_out, 0u);
  EXPECT_EQ(screened.order.front(), first);
  EXPECT_EQ(screened.outcomes[screened.order.front()].result->iteration_time_s, best);
  // And its whole top K is the true top K, event-simulated.
  for (std::size_t k = 0; k < fastSettings().top; ++k) {
    EXPECT_EQ(screened.order[k], all.order[k]) << "rank " << k + 1;
    EXPECT_TRUE(screened.outcomes[screened.order[k]].result.has_value());
  }
}

TEST(SweepTest, OutputIsTheSameForAnyThreadCount) {
  const ExperimentFile file;
  SweepSettings one = fastSettings();
  one.threads = 1;
  SweepSettings three = fastSettings();
  three.threads = 3;
  std::ostringstream csv_one;
  std::ostringstream csv_three;
  writeSweepCsv(csv_one, sweepOf(file, one));
  writeSweepCsv(csv_three, sweepOf(file, three));
  EXPECT_EQ(csv_one.str(), csv_three.str());
}

TEST(SweepTest, RankingFollowsTheObjectiveAndStatusesAreOrdered) {
  const ExperimentFile file;
  SweepSettings settings = fastSettings();
  settings.objective = Objective::kMfu;
  const SweepResult result = sweepOf(file, settings);
  double previous_mfu = std::numeric_limits<double>::infinity();
  PlanStatus previous_status = PlanStatus::kSimulated;
  for (std::size_t candidate : result.order) {
    const PlanOutcome& outcome = result.outcomes[candidate];
    EXPECT_GE(outcome.status, previous_status);
    previous_status = outcome.status;
    if (outcome.status == PlanStatus::kSimulated) {
      EXPECT_LE(outcome.result->mfu, previous_mfu);
      previous_mfu = outcome.result->mfu;
    } else {
      EXPECT_FALSE(outcome.reason.empty()) << planStatusName(outcome.status);
    }
  }
}

TEST(SweepTest, ParetoFrontHoldsExactlyTheUndominatedPlans) {
  const ExperimentFile file;
  SweepSettings settings = fastSettings();
  settings.simulate_all = true;
  settings.objective = Objective::kTime;
  const SweepResult result = sweepOf(file, settings);
  const TradeOffAxes axes = tradeOffAxes(result);
  EXPECT_TRUE(axes.time_to_train);
  std::vector<std::size_t> points;
  for (std::size_t i = 0; i < result.outcomes.size(); ++i) {
    if (eventSimulated(result.outcomes[i])) points.push_back(i);
  }
  std::size_t on_front = 0;
  for (std::size_t a : points) {
    bool dominated = false;
    for (std::size_t b : points) {
      const double xa = tradeOffX(result, axes, a), ya = tradeOffY(result, axes, a);
      const double xb = tradeOffX(result, axes, b), yb = tradeOffY(result, axes, b);
      if (b != a && xb <= xa && yb <= ya && (xb < xa || yb < ya)) dominated = true;
    }
    if (result.outcomes[a].pareto) {
      ++on_front;
      EXPECT_FALSE(dominated);
    } else {
      // Off the front: dominated, or a duplicate of a point on it.
      bool duplicate = false;
      for (std::size_t b : points) {
        duplicate = duplicate ||
                    (b != a && result.outcomes[b].pareto && tradeOffX(result, axes, b) == tradeOffX(result, axes, a) &&
                     tradeOffY(result, axes, b) == tradeOffY(result, axes, a));
      }
      EXPECT_TRUE(dominated || duplicate);
    }
  }
  EXPECT_GE(on_front, 1u);
}

TEST(SweepTest, DeadlineDropsSlowPlansWithAReason) {
  const ExperimentFile file;
  SweepSettings reference_settings = fastSettings();
  const SweepResult reference = sweepOf(file, reference_settings);
  const auto& best = *reference.outcomes[reference.order.front()].result;
  SweepSettings settings = fastSettings();
  // Between the best and the second best plan's time-to-train: only the best one meets it.
  const auto& second = *reference.outcomes[reference.order[1]].result;
  settings.constraints.deadline_s = (*best.time_to_train_s + *second.time_to_train_s) / 2.0;
  const SweepResult result = sweepOf(file, settings);
  std::size_t ranked = 0;
  for (const auto& outcome : result.outcomes) {
    if (outcome.status == PlanStatus::kSimulated) {
      ++ranked;
      EXPECT_LE(*outcome.result->time_to_train_s, *settings.constraints.deadline_s);
    }
    if (outcome.status == PlanStatus::kOverDeadline) {
      EXPECT_GT(*outcome.result->time_to_train_s, *settings.constraints.deadline_s);
    }
  }
  EXPECT_EQ(ranked, best.iteration_time_s < second.iteration_time_s ? 1u : 2u);
  EXPECT_GT(result.counts.over_deadline, 0u);
}

// A mixture-of-experts plan at etp 1 and at etp = tp differs in its expert layers: each is
// simulated on its own (they shared one simulation, and so one time, while the timing key
// left etp out).
TEST(SweepTest, ExpertTensorParallelDegreesAreSimulatedApart) {
  const ExperimentFile file(R"(name: moe-etp
model: qwen3-30b-a3b
cluster: {gpu: h100-sxm, nodes: 2, gpus_per_node: 8, inter_node: {nic_bandwidth_Gbps: 400}}
training: {seq_len: 2048, global_batch_size: 16, precision: bf16}
parallelism: {gpus: 16}
)");
  SweepSettings settings = fastSettings();
  settings.simulate_all = true;
  const PlanSpace space = parsePlanSpace(
      {}, {"tp=2", "pp=1", "ep=8", "dp=8", "micro_batch_size=1", "zero=1", "recompute=full", "sequence_parallel=true"});
  const SweepResult sweep = sweepOf(file, settings, space);
  std::map<int64_t, double> seconds;
  for (std::size_t i = 0; i < sweep.candidates.size(); ++i) {
    if (sweep.outcomes[i].result) {
      seconds[sweep.candidates[i].plan.expertTensorParallel()] = sweep.outcomes[i].result->iteration_time_s;
    }
  }
  ASSERT_EQ(seconds.size(), 2u);
  EXPECT_NE(seconds.at(1), seconds.at(2));
}

TEST(SweepTest, CostObjectiveWithoutAPriceIsAnInputError) {
  const ExperimentFile file;  // dgx-h100 has no price
  SweepSettings settings = fastSettings();
  settings.objective = Objective::kCost;
  EXPECT_THROW((void)sweepOf(file, settings), InputError);
}

TEST(SweepTest, AFixedValueNoPlanCanTakeIsAnInputError) {
  const ExperimentFile file;
  try {
    (void)sweepOf(file, fastSettings(), parsePlanSpace({}, {"tp=3"}));
    FAIL() << "expected an InputError";
  } catch (const InputError& error) {
    EXPECT_NE(error.error().message.find("tp"), std::string::npos) << error.error().message;
  }
}

TEST(ParallelForTest, EveryIndexOnceAndExceptionsPropagate) {
  std::vector<std::atomic<int>> seen(1000);
  parallelFor(seen.size(), 4, [&](std::size_t index, int worker) {
    EXPECT_GE(worker, 0);
    EXPECT_LT(worker, 4);
    seen[index].fetch_add(1);
  });
  for (const auto& count : seen) EXPECT_EQ(count.load(), 1);
  EXPECT_THROW(parallelFor(100, 2,
                           [](std::size_t index, int) {
                             if (index == 17) throw std::runtime_error("boom");
                           }),
               std::runtime_error);
}

}  // namespace
}  // namespace trainsim::sweep
