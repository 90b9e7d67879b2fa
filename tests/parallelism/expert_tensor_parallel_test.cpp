// Expert tensor parallelism apart from tp (parallelism.etp, Megatron-Core's "parallel
// folding"): the expert groups a stage's ranks fold into, the expert GEMMs and collectives,
// expert weights and their data-parallel replicas, the plan rules, and the simulation.
#include <gtest/gtest.h>

#include <string>

#include "parallelism/experiment_loader.h"
#include "parallelism/iteration_simulation.h"
#include "parallelism/memory_model.h"
#include "parallelism/optimizer_step.h"
#include "parallelism/rank_layout.h"
#include "parallelism/transformer_workload.h"
#include "tests/parallelism/model_builders.h"
#include "tests/parallelism/test_support.h"
#include "tests/shipped_simulation_options.h"

namespace trainsim::parallelism {
namespace {

using testing::errorText;
using testing::mixtralModel;
using testing::shard;
using testing::testPaths;

ParallelPlan plan(int64_t tp, int64_t dp, int64_t ep, int64_t etp) {
  ParallelPlan p;
  p.tp = tp;
  p.dp = dp;
  p.ep = ep;
  p.etp = etp;
  p.gpus = tp * dp;
  return p;
}

TEST(ExpertTensorParallel, DefaultsToTp) {
  ParallelPlan p = plan(2, 8, 4, ParallelPlan::kAuto);
  EXPECT_EQ(p.expertTensorParallel(), 2);
  EXPECT_EQ(p.expertDataParallel(), 2);  // 16 ranks / (2 x 4)
  p.etp = 1;
  EXPECT_EQ(p.expertDataParallel(), 4);
  EXPECT_TRUE(p.separateExpertGroups());
  EXPECT_FALSE(plan(2, 8, 1, ParallelPlan::kAuto).separateExpertGroups());
  EXPECT_TRUE(plan(2, 8, 1, 1).separateExpertGroups());
}

TEST(ExpertTensorParallel, StageRanksFoldIntoEtpEpAndExpertDp) {
  // tp 2 x dp 8 = 16 ranks a stage. etp 1, ep 4: expert groups of 4 consecutive ranks (both
  // tp ranks of two replicas), the same experts every 4th rank.
  const RankLayout folded(plan(2, 8, 4, 1));
  EXPECT_EQ(folded.expertGroup({1, 0, 2, 0}), (std::vector<int64_t>{4, 5, 6, 7}));
  EXPECT_EQ(folded.expertTensorGroup({1, 0, 2, 0}), (std::vector<int64_t>{5}));
  EXPECT_EQ(folded.expertDataGroup({1, 0, 2, 0}), (std::vector<int64_t>{1, 5, 9, 13}));
  EXPECT_EQ(folded.symmetricReplicas(), 2);  // replicas 0 and 1 hold ranks 0-3
  // etp = tp = 2, ep 4: the old layout, ep ranks tp apart.
  const RankLayout same(plan(2, 8, 4, ParallelPlan::kAuto));
  EXPECT_EQ(same.expertGroup({1, 0, 2, 0}), (std::vector<int64_t>{1, 3, 5, 7}));
  EXPECT_EQ(same.expertTensorGroup({1, 0, 2, 0}), (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(same.expertDataGroup({1, 0, 2, 0}), (std::vector<int64_t>{5, 13}));
  EXPECT_EQ(same.dataGroup({1, 0, 0, 0}).size(), 8U);
  EXPECT_EQ(same.symmetricReplicas(), 4);
}

TEST(ExpertTensorParallel, WholeExpertsOnEveryRankWithoutTheTokenGather) {
  // Mixtral (8 experts, top-2, width 14336), tp 2 with SP, ep 4 (2 local experts).
  MicroBatchShard split = shard(1, 4096, 2, true, 1, 4);
  split.etp = 1;
  const Workload layer = transformerLayer(mixtralModel(), split);
  // 2048 routed tokens x top-2 over 2 local experts: 2048 slots each, the whole width.
  EXPECT_EQ(layer.find("moe_expert_fc2")->forward_gemms.front(), (GemmShape{2048, 4096, 14336, 2}));
  for (const auto& comm : layer.communications) {
    EXPECT_NE(comm.group, ParallelGroup::kExpertTensor) << comm.name;
    EXPECT_NE(comm.name, "moe_tokens_all_gather");
  }
  // At etp 2 the slots are all-gathered over the expert tensor-parallel group.
  split.etp = 2;
  const Workload gathered = transformerLayer(mixtralModel(), split);
  int gathers = 0;
  for (const auto& comm : gathered.communications) gathers += comm.group == ParallelGroup::kExpertTensor ? 1 : 0;
  EXPECT_EQ(gathers, 4);
  // The same model FLOPs either way.
  EXPECT_NEAR(layer.forwardFlops(true) / gathered.forwardFlops(true), 1.0, 1e-12);
}

TEST(ExpertTensorParallel, ExpertWeightsSplitByEtpAndReplicatedOverExpertDp) {
  const ModelSpec model = mixtralModel();
  TrainingSpec training;
  training.seq_len = 4096;
  training.global_batch_size = 64;
  ParallelPlan whole = plan(2, 8, 4, 1);
  ParallelPlan split = plan(2, 8, 4, ParallelPlan::kAuto);
  const StageParameters a = stageParameters(model, training, whole, 0, model.layers);
  const StageParameters b = stageParameters(model, training, split, 0, model.layers);
  EXPECT_NEAR(a.expert / b.expert, 2.0, 1e-12);
  EXPECT_DOUBLE_EQ(a.dense, b.dense);
  // The distributed optimizer updates 1/4 of the expert weights at etp 1 (expert dp 4), 1/2
  // at etp 2, and 1/8 of the dense ones either way.
  whole.zero = 1;
  const double traffic = optimizerStepTraffic(training, whole, a.dense, a.expert, {});
  const double dense_only = optimizerStepTraffic(training, whole, a.dense, 0.0, {});
  const OptimizerStepBytes bytes = optimizerStepBytes(training, {});
  EXPECT_NEAR(traffic - dense_only,
              a.expert / 4.0 * bytes.per_updated_parameter + a.expert * bytes.per_gradient_element, 1e-3);
}

Expected<Experiment> loadPlan(const std::string& model, const std::string& plan_lines) {
  const std::string text = "model: " + model + "\ncluster: dgx-a100\nparallelism:\n" + plan_lines +
                           "training: {seq_len: 4096, global_batch_size: 64}\n";
  return loadExperimentNode(parseConfigText(text, "plan.yaml"), testPaths());
}

TEST(ExpertTensorParallel, PlanRules) {
  EXPECT_EQ(errorText(loadPlan("llama3-8b", "  tp: 8\n  etp: 1\n")),
            "plan.yaml:5:8: parallelism.etp: etp = 1 needs a mixture-of-experts model; llama3-8b is dense (it has no "
            "moe section)");
  EXPECT_EQ(errorText(loadPlan("mixtral-8x7b", "  tp: 4\n  etp: 3\n")),
            "plan.yaml:5:8: parallelism.etp: etp = 3 does not divide moe.ffn_hidden_size = 14336; etp values that "
            "fit: 1, 2, 4, 7, 8, 14, 16, 28 or 32");
  // 32 GPUs at tp 8: 32 ranks a stage fold into etp x ep = 8 x 8 = 64, too many.
  EXPECT_EQ(errorText(loadPlan("mixtral-8x7b", "  tp: 8\n  ep: 8\n  etp: 8\n")),
            "plan.yaml:5:7: parallelism.ep: etp x ep = 8 x 8 = 64 does not divide tp x dp x cp = 8 x 4 x 1 = 32 "
            "(the expert layers fold the ranks of a pipeline stage into etp x ep x expert-dp, as Megatron-Core "
            "does); ep values that fit: 1, 2 or 4");
  // ep 8 at tp 8 is refused with the default etp and fits with etp 1.
  EXPECT_TRUE(loadPlan("mixtral-8x7b", "  tp: 8\n  ep: 8\n  etp: 1\n").ok());
  EXPECT_FALSE(loadPlan("mixtral-8x7b", "  tp: 8\n  ep: 8\n").ok());
}

TEST(ExpertTensorParallel, SymmetricModeMatchesTheFullSimulation) {
  // Mixtral on 64 H100 at tp 2, ep 8, etp 1: expert groups span 4 data-parallel replicas.
  const std::vector<Override> overrides = {parseOverride("parallelism.tp=2"), parseOverride("parallelism.dp=8"),
                                           parseOverride("parallelism.sequence_parallel=true"),
                                           parseOverride("parallelism.etp=1")};
  auto experiment = loadExperiment("mixtral-8x7b-h100", ConfigPaths{TRAINSIM_CONFIG_DIR_FOR_TESTS}, overrides);
  ASSERT_TRUE(experiment.ok()) << experiment.error().toString();
  SimulationOptions options = shippedSimulationOptions();
  options.iteration.symmetric = true;
  const auto symmetric = simulateIteration(*experiment, options);
  ASSERT_TRUE(symmetric.ok()) << symmetric.error().toString();
  const auto full = simulateIteration(*experiment, shippedSimulationOptions());
  ASSERT_TRUE(full.ok()) << full.error().toString();
  EXPECT_NEAR(symmetric->iteration_time_s / full->iteration_time_s, 1.0, 1e-9);
  // The experts whole on each rank move no expert-tensor-parallel gathers: faster than etp 2.
  auto same = loadExperiment("mixtral-8x7b-h100", ConfigPaths{TRAINSIM_CONFIG_DIR_FOR_TESTS},
                             {overrides[0], overrides[1], overrides[2]});
  ASSERT_TRUE(same.ok()) << same.error().toString();
  const auto gathered = simulateIteration(*same, options);
  ASSERT_TRUE(gathered.ok()) << gathered.error().toString();
  EXPECT_LT(symmetric->iteration_time_s, gathered->iteration_time_s);
}

}  // namespace
}  // namespace trainsim::parallelism
