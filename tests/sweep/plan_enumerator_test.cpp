// The enumeration is complete and only valid: checked against a brute-force filter that
// runs simulate's own validation (checkPlan) over a box of every value of every dimension.
#include "sweep/plan_enumerator.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>

#include "base/error.h"
#include "sweep/plan_space.h"
#include "sweep/sweep_target.h"
#include "sweep_test_support.h"

namespace trainsim::sweep {
namespace {

using parallelism::ParallelPlan;
using parallelism::Recompute;
using testing::ExperimentFile;

// tp, pp, cp, dp, ep, virtual_stages, micro_batch_size, sequence_parallel, zero, recompute
using PlanKey = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, bool, int, int>;

PlanKey keyOf(const ParallelPlan& plan, int64_t micro_batch_size) {
  return {plan.tp,          plan.pp,
          plan.cp,          plan.dp,
          plan.ep,          plan.virtual_stages,
          micro_batch_size, plan.sequence_parallel,
          plan.zero,        static_cast<int>(plan.recompute)};
}

std::vector<SweepTarget> smallTargets(const ExperimentFile& file) {
  SweepTargetRequest request;
  request.experiment = file.path();
  auto targets = loadSweepTargets(request, testing::testConfigPaths());
  if (!targets) ADD_FAILURE() << targets.error().toString();
  return std::move(targets).value();
}

// Every plan simulate accepts, by brute force: every degree from 1 to the GPU count, every
// chunk count up to the layers, every micro-batch size up to the global batch; checkPlan
// decides. Two plans simulate runs identically count once (sequence parallelism at tp = 1,
// which resolvePlan switches off; ZeRO at dp = 1, which has nothing to shard).
std::set<PlanKey> bruteForceValid(const SweepTarget& target) {
  const auto& experiment = target.experiment;
  const int64_t gpus = target.gpus;
  std::set<PlanKey> valid;
  for (int64_t tp = 1; tp <= gpus; ++tp) {
    for (int64_t pp = 1; pp <= gpus; ++pp) {
      for (int64_t cp = 1; cp <= gpus; ++cp) {
        for (int64_t dp = 1; dp <= gpus; ++dp) {
          ParallelPlan degrees = experiment.plan;
          degrees.gpus = gpus;
          degrees.tp = tp;
          degrees.pp = pp;
          degrees.cp = cp;
          degrees.dp = dp;
          parallelism::TrainingSpec training = experiment.training;
          // The GPU-count rule depends on these four degrees only: skip the whole subtree
          // when checkPlan rejects them for it.
          const auto issues = parallelism::checkPlan(experiment.model, experiment.cluster, training, degrees);
          if (!issues.empty() && issues.back().key_path == "parallelism.dp") continue;
          for (int64_t virtual_stages = 1; virtual_stages <= experiment.model.layers; ++virtual_stages) {
            for (int64_t micro_batch = 1; micro_batch <= training.global_batch_size; ++micro_batch) {
              for (bool sp : {false, true}) {
                for (int zero = 0; zero <= 3; ++zero) {
                  for (int recompute = 0; recompute <= 2; ++recompute) {
                    ParallelPlan plan = degrees;
                    plan.virtual_stages = virtual_stages;
                    plan.sequence_parallel = sp;
                    plan.zero = zero;
                    plan.recompute = static_cast<Recompute>(recompute);
                    training.micro_batch_size = micro_batch;
                    if (!parallelism::checkPlan(experiment.model, experiment.cluster, training, plan).empty()) continue;
                    if (plan.tp == 1) plan.sequence_parallel = false;
                    if (plan.dp == 1) plan.zero = 0;
                    valid.insert(keyOf(plan, micro_batch));
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  return valid;
}

TEST(PlanEnumeratorTest, EnumeratesExactlyTheValidPlansOfABruteForceFilter) {
  const ExperimentFile file;
  const auto targets = smallTargets(file);
  ASSERT_EQ(targets.size(), 1u);
  const auto candidates = enumeratePlans(targets, PlanSpace{});
  std::set<PlanKey> enumerated_valid;
  std::set<PlanKey> all;
  for (const auto& candidate : candidates) {
    const PlanKey key = keyOf(candidate.plan, candidate.micro_batch_size);
    EXPECT_TRUE(all.insert(key).second) << "enumerated twice";
    parallelism::TrainingSpec training = targets[0].experiment.training;
    training.micro_batch_size = candidate.micro_batch_size;
    const auto issues =
        parallelism::checkPlan(targets[0].experiment.model, targets[0].experiment.cluster, training, candidate.plan);
    // Invalid means exactly what simulate rejects, with simulate's first reason.
    EXPECT_EQ(candidate.valid(), issues.empty());
    if (!issues.empty()) {
      EXPECT_EQ(*candidate.issue, issues.front());
    } else {
      enumerated_valid.insert(key);
    }
  }
  const std::set<PlanKey> expected = bruteForceValid(targets[0]);
  EXPECT_GT(expected.size(), 100u);
  EXPECT_EQ(enumerated_valid, expected);
}

TEST(PlanEnumeratorTest, VaryAndFixRestrictTheDimensions) {
  const ExperimentFile file;
  const auto targets = smallTargets(file);
  const PlanSpace space = parsePlanSpace({"tp=2,4", "recompute=none,full"}, {"pp=2"});
  const auto candidates = enumeratePlans(targets, space);
  ASSERT_FALSE(candidates.empty());
  for (const auto& candidate : candidates) {
    EXPECT_TRUE(candidate.plan.tp == 2 || candidate.plan.tp == 4);
    EXPECT_EQ(candidate.plan.pp, 2);
    EXPECT_NE(candidate.plan.recompute, Recompute::kSelective);
  }
}

// The experiment's recompute_num_layers goes with the full-recompute candidates (the others
// would be refused with it); where it covers every layer of each chunk (2 or fewer layers per
// chunk here) the plan is the plain full one and shows no count.
TEST(PlanEnumeratorTest, RecomputeNumLayersGoesWithFullRecomputation) {
  const ExperimentFile file(std::string(testing::kSmallExperiment) + "  recompute: full\n  recompute_num_layers: 2\n");
  const auto targets = smallTargets(file);
  ASSERT_EQ(targets.size(), 1u);
  const auto candidates = enumeratePlans(targets, parsePlanSpace({"recompute=none,full"}, {"tp=2"}));
  int full = 0;
  int none = 0;
  for (const auto& candidate : candidates) {
    if (candidate.plan.recompute == Recompute::kFull) {
      ++full;
      const bool partial = 8 / candidate.plan.pp / candidate.plan.virtual_stages > 2;
      EXPECT_EQ(candidate.plan.recompute_num_layers,
                partial || candidate.issue ? std::optional<int64_t>(2) : std::nullopt)
          << candidate.plan.pp << " x " << candidate.plan.virtual_stages;
    } else {
      ++none;
      EXPECT_FALSE(candidate.plan.recompute_num_layers.has_value());
    }
    if (candidate.issue) {
      EXPECT_NE(candidate.issue->key_path, "parallelism.recompute_num_layers");
    }
  }
  EXPECT_GT(full, 0);
  EXPECT_EQ(full, none);
}

// --vary recompute_num_layers: each full-recompute plan once per count that leaves some layer
// of a chunk unrecomputed, once as plain full for the counts that cover them all, and a
// count beyond the model's layers invalid with simulate's reason.
TEST(PlanEnumeratorTest, VaryRecomputeNumLayers) {
  const ExperimentFile file;
  const auto targets = smallTargets(file);
  const auto candidates =
      enumeratePlans(targets, parsePlanSpace({"recompute=full", "recompute_num_layers=1,4,8,9"}, {"tp=8", "pp=1"}));
  std::map<std::optional<int64_t>, int> valid;
  int beyond = 0;
  for (const auto& candidate : candidates) {
    EXPECT_EQ(candidate.plan.recompute, Recompute::kFull);
    if (candidate.valid()) ++valid[candidate.plan.recompute_num_layers];
    if (candidate.issue && candidate.issue->key_path == "parallelism.recompute_num_layers") ++beyond;
  }
  // pp 1, one chunk of 8 layers: 1 and 4 partial, 8 the plain full plan, 9 refused.
  ASSERT_EQ(valid.size(), 3u);
  EXPECT_EQ(valid[1], valid[4]);
  EXPECT_EQ(valid[1], valid[std::nullopt]);
  EXPECT_GT(valid[1], 0);
  EXPECT_GT(beyond, 0);
  // tp 4, pp 1 or 2: at pp 2 the chunks hold 4 layers or fewer, so 4 and 8 both cover them
  // and the plain full plan is listed once; no valid plan appears twice.
  std::set<std::tuple<PlanKey, std::optional<int64_t>>> seen;
  for (const auto& candidate :
       enumeratePlans(targets, parsePlanSpace({"recompute=full", "recompute_num_layers=1,4,8"}, {"tp=4"}))) {
    if (!candidate.valid()) continue;
    EXPECT_TRUE(
        seen.insert({keyOf(candidate.plan, candidate.micro_batch_size), candidate.plan.recompute_num_layers}).second)
        << "pp " << candidate.plan.pp << " x " << candidate.plan.virtual_stages;
  }
  EXPECT_GT(seen.size(), 0u);
}

// Layer counts without full recomputation among the recompute values would do nothing.
TEST(PlanSpaceTest, LayerCountsNeedFullRecomputation) {
  EXPECT_THROW((void)parsePlanSpace({"recompute=none,selective", "recompute_num_layers=4"}, {}), InputError);
  EXPECT_THROW((void)parsePlanSpace({"recompute_num_layers=4"}, {"recompute=selective_op"}), InputError);
  EXPECT_NO_THROW((void)parsePlanSpace({"recompute=none,full", "recompute_num_layers=4"}, {}));
  EXPECT_NO_THROW((void)parsePlanSpace({"recompute_num_layers=4"}, {}));
}

TEST(PlanSpaceTest, BadOptionsAreInputErrors) {
  EXPECT_THROW((void)parsePlanSpace({"tq=1,2"}, {}), InputError);          // unknown dimension
  EXPECT_THROW((void)parsePlanSpace({"tp=1,two"}, {}), InputError);        // not a number
  EXPECT_THROW((void)parsePlanSpace({"tp=0"}, {}), InputError);            // not positive
  EXPECT_THROW((void)parsePlanSpace({"zero=4"}, {}), InputError);          // no such stage
  EXPECT_THROW((void)parsePlanSpace({"recompute=some"}, {}), InputError);  // no such policy
  EXPECT_THROW((void)parsePlanSpace({}, {"pp=2,4"}), InputError);          // --fix takes one value
  EXPECT_THROW((void)parsePlanSpace({"pp=2,4"}, {"pp=2"}), InputError);    // twice
  EXPECT_THROW((void)parsePlanSpace({"pp"}, {}), InputError);              // no values
  try {
    (void)parsePlanSpace({"virtual_stage=2"}, {});
    FAIL() << "expected an InputError";
  } catch (const InputError& error) {
    EXPECT_NE(error.error().toString().find("did you mean 'virtual_stages'"), std::string::npos)
        << error.error().toString();
  }
  const PlanSpace space = parsePlanSpace({"sequence_parallel=true", "recompute=full,none"}, {"zero=0"});
  EXPECT_EQ(*space.allowed(Dimension::kSequenceParallel), std::vector<int64_t>{1});
  EXPECT_EQ(*space.allowed(Dimension::kRecompute), (std::vector<int64_t>{0, 2}));
  EXPECT_FALSE(space.allowed(Dimension::kTp).has_value());
  // selective_op is enumerated only when listed.
  EXPECT_EQ(*parsePlanSpace({"recompute=selective_op"}, {}).allowed(Dimension::kRecompute),
            (std::vector<int64_t>{static_cast<int64_t>(Recompute::kSelectiveOp)}));
}

// --vary schedule: each plan once per schedule listed; at pp = 1 the zero-bubble plan is the
// 1F1B one (nothing to fill) and is listed once; gpipe with interleaving is invalid. Free, the
// experiment's own schedule.
TEST(PlanEnumeratorTest, VarySchedule) {
  const ExperimentFile file;
  const auto targets = smallTargets(file);
  using parallelism::PipelineSchedule;
  std::map<std::tuple<PlanKey, int>, int> seen;
  std::map<int, int> valid_by_schedule;
  for (const auto& candidate :
       enumeratePlans(targets, parsePlanSpace({"schedule=zero_bubble,1f1b,gpipe"}, {"tp=2", "recompute=none"}))) {
    const auto schedule = candidate.plan.schedule;
    if (candidate.plan.pp == 1) {
      EXPECT_NE(schedule, PipelineSchedule::kZeroBubble);
    }
    if (schedule == PipelineSchedule::kGpipe && candidate.plan.virtual_stages > 1) {
      ASSERT_TRUE(candidate.issue.has_value());
      EXPECT_EQ(candidate.issue->key_path, "parallelism.schedule");
    }
    if (!candidate.valid()) continue;
    ++valid_by_schedule[static_cast<int>(schedule)];
    const std::tuple<PlanKey, int> key{keyOf(candidate.plan, candidate.micro_batch_size), static_cast<int>(schedule)};
    EXPECT_EQ(++seen[key], 1);
  }
  EXPECT_GT(valid_by_schedule[static_cast<int>(PipelineSchedule::kZeroBubble)], 0);
  EXPECT_GT(valid_by_schedule[static_cast<int>(PipelineSchedule::kOneFOneB)],
            valid_by_schedule[static_cast<int>(PipelineSchedule::kZeroBubble)]);
  EXPECT_GT(valid_by_schedule[static_cast<int>(PipelineSchedule::kGpipe)], 0);
  // Free: the experiment's (1f1b); listed alone, zero_bubble runs its pp = 1 plans as 1f1b.
  for (const auto& candidate : enumeratePlans(targets, parsePlanSpace({}, {"tp=2"}))) {
    EXPECT_EQ(candidate.plan.schedule, PipelineSchedule::kOneFOneB);
  }
  for (const auto& candidate : enumeratePlans(targets, parsePlanSpace({}, {"tp=2", "schedule=zero_bubble"}))) {
    EXPECT_EQ(candidate.plan.schedule,
              candidate.plan.pp == 1 ? PipelineSchedule::kOneFOneB : PipelineSchedule::kZeroBubble);
  }
  EXPECT_THROW((void)parsePlanSpace({"schedule=interleaved"}, {}), InputError);
  EXPECT_EQ(dimensionValueText(Dimension::kSchedule, static_cast<int64_t>(PipelineSchedule::kZeroBubble)),
            "zero_bubble");
}

// A listed selective_op gives candidates that run it (valid for a llama model; a gpt one's
// biased linears are refused).
TEST(PlanEnumeratorTest, SelectiveOpIsEnumeratedWhenListed) {
  std::string llama = testing::kSmallExperiment;
  llama.replace(llama.find("architecture: gpt"), std::string("architecture: gpt").size(),
                "architecture: llama\n  ffn_hidden_size: 22016");
  const ExperimentFile file(llama);
  const auto targets = smallTargets(file);
  const auto candidates = enumeratePlans(targets, parsePlanSpace({"recompute=selective_op"}, {"tp=2"}));
  ASSERT_FALSE(candidates.empty());
  int valid = 0;
  for (const auto& candidate : candidates) {
    EXPECT_EQ(candidate.plan.recompute, Recompute::kSelectiveOp);
    valid += candidate.valid() ? 1 : 0;
  }
  EXPECT_GT(valid, 0);
}

// 14 layers on 8 GPUs: pp 4 and pp 8 do not divide them and get the uneven split, ceil(14 / pp)
// layers per middle stage and the rest shared by the ends (3 + 4 + 4 + 3, 1 + 6 x 2 + 1),
// with the chunk counts that divide a middle stage and leave every end chunk a layer.
TEST(PlanEnumeratorTest, APipelineDepthThatDoesNotDivideTheLayersGetsAnUnevenSplit) {
  std::string text = testing::kSmallExperiment;
  text.replace(text.find("layers: 8"), 9, "layers: 14");
  const ExperimentFile file(text);
  const auto targets = smallTargets(file);
  const auto candidates = enumeratePlans(targets, PlanSpace{});
  std::set<int64_t> chunks_at_pp4;
  std::set<int64_t> valid_pp;
  for (const auto& candidate : candidates) {
    const auto& plan = candidate.plan;
    if (plan.pp == 2 || plan.pp == 1) {
      EXPECT_FALSE(plan.first_stage_layers.has_value());  // an even split needs none
      EXPECT_FALSE(plan.last_stage_layers.has_value());
    } else {
      ASSERT_TRUE(plan.first_stage_layers && plan.last_stage_layers);
      const int64_t end = plan.pp == 4 ? 3 : 1;
      EXPECT_EQ(*plan.first_stage_layers, end);
      EXPECT_EQ(*plan.last_stage_layers, end);
      const auto stages = plan.layersPerStage(14);
      EXPECT_EQ(stages[1], plan.pp == 4 ? 4 : 2);
      if (plan.pp == 4) chunks_at_pp4.insert(plan.virtual_stages);
      if (plan.pp == 8) {
        EXPECT_EQ(plan.virtual_stages, 1);
      }
    }
    if (candidate.valid()) valid_pp.insert(plan.pp);
  }
  EXPECT_EQ(chunks_at_pp4, (std::set<int64_t>{1, 2}));  // 4 in the middle, 3 at the ends: not 4
  EXPECT_EQ(valid_pp, (std::set<int64_t>{1, 2, 4, 8}));
}

// The V schedules split 14 layers over their 2 pp chunks: ceil(14 / 2 pp) per middle chunk and
// the rest on the first GPU's two end chunks, none at pp 8 (3 + 2 x 4 + 3, 1 + 6 x 2 + 1,
// 0 + 14 x 1 + 0), and they get two chunks per GPU where the layers give none.
TEST(PlanEnumeratorTest, TheVSchedulesGetTheirOwnUnevenSplit) {
  std::string text = testing::kSmallExperiment;
  text.replace(text.find("layers: 8"), 9, "layers: 14");
  const ExperimentFile file(text);
  const auto targets = smallTargets(file);
  std::map<int64_t, std::vector<int64_t>> valid_chunks;  // by pp
  for (const auto& candidate : enumeratePlans(targets, parsePlanSpace({"schedule=zbv"}, {"recompute=none"}))) {
    const auto& plan = candidate.plan;
    if (!candidate.valid()) continue;
    EXPECT_EQ(plan.virtual_stages, 2);
    ASSERT_TRUE(plan.first_stage_layers && plan.last_stage_layers) << plan.pp;
    const int64_t end = plan.pp == 2 ? 3 : plan.pp == 4 ? 1 : 0;
    EXPECT_EQ(*plan.first_stage_layers, end);
    EXPECT_EQ(*plan.last_stage_layers, end);
    valid_chunks[plan.pp] = plan.layersPerVChunk(14);
  }
  EXPECT_EQ(valid_chunks[2], (std::vector<int64_t>{3, 4, 4, 3}));
  EXPECT_EQ(valid_chunks[4], (std::vector<int64_t>{1, 2, 2, 2, 2, 2, 2, 1}));
  EXPECT_EQ(valid_chunks[8], (std::vector<int64_t>{0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0}));
  // DualPipe splits the stages as 1F1B does (3 + 4 + 4 + 3 at pp 4), two chunks per GPU.
  std::set<int64_t> dualpipe_pp;
  for (const auto& candidate : enumeratePlans(targets, parsePlanSpace({"schedule=dualpipe"}, {"recompute=none"}))) {
    if (!candidate.valid()) continue;
    EXPECT_EQ(candidate.plan.virtual_stages, 2);
    dualpipe_pp.insert(candidate.plan.pp);
    if (candidate.plan.pp == 4) {
      EXPECT_EQ(candidate.plan.layersPerStage(14), (std::vector<int64_t>{6, 8, 8, 6}));
    }
  }
  EXPECT_TRUE(dualpipe_pp.count(4) == 1 && dualpipe_pp.count(1) == 0);
}

TEST(PlanEnumeratorTest, DivisorsAreAscendingAndComplete) {
  EXPECT_EQ(divisorsOf(1), std::vector<int64_t>{1});
  EXPECT_EQ(divisorsOf(12), (std::vector<int64_t>{1, 2, 3, 4, 6, 12}));
  EXPECT_EQ(divisorsOf(16), (std::vector<int64_t>{1, 2, 4, 8, 16}));
}

// The experiment's mixture-of-experts switches and recompute modules hold on every
// candidate, as its other switches do.
TEST(PlanEnumeratorTest, CandidatesKeepTheExperimentsMoeSwitches) {
  const ExperimentFile file(
      "name: moe-sweep\nmodel: mixtral-8x7b\ncluster: dgx-h100\ntraining:\n  seq_len: 2048\n"
      "  global_batch_size: 16\nparallelism:\n  gpus: 8\n  ep: 8\n  moe_dispatcher: flex\n  moe_a2a_overlap: true\n"
      "  recompute: selective\n  recompute_modules: [moe_act]\n");
  const auto targets = smallTargets(file);
  ASSERT_EQ(targets.size(), 1u);
  const auto candidates = enumeratePlans(targets, parsePlanSpace({}, {"pp=1"}));
  ASSERT_FALSE(candidates.empty());
  for (const auto& candidate : candidates) {
    EXPECT_EQ(candidate.plan.moe_dispatcher, parallelism::MoeDispatcher::kFlex);
    EXPECT_TRUE(candidate.plan.moe_a2a_overlap);
    EXPECT_EQ(candidate.plan.recompute_modules, parallelism::recompute_module::kMoeActivation);
  }
}

}  // namespace
}  // namespace trainsim::sweep
