// The expert-parallel all-to-all overlapped with the partner pass of 1F1B's steady state
// (parallelism.moe_a2a_overlap, Megatron-Core's combined 1F1B): which steps are paired, and
// what the overlap hides in the simulation.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "parallelism/experiment_loader.h"
#include "parallelism/iteration_simulation.h"
#include "parallelism/pipeline_schedule.h"
#include "tests/parallelism/test_support.h"
#include "tests/shipped_simulation_options.h"

namespace trainsim::parallelism {
namespace {

using testing::errorText;
using testing::testPaths;

TEST(MoeA2aOverlap, SteadyStateForwardsPairWithTheBackwardAfterThem) {
  // Stage 0 of 4, 6 micro-batches: 3 warm-up forwards, 3 forward-backward pairs, 3 cool-down backwards.
  const std::vector<PipelineStep> order = stageOrder(PipelineSchedule::kOneFOneB, 4, 1, 6, 0);
  const std::vector<bool> paired = pairedSteps(order);
  const std::vector<bool> expected = {false, false, false, true, true, true, true, true, true, false, false, false};
  EXPECT_EQ(paired, expected);
  // The last stage has no warm-up: every pass is paired.
  const std::vector<bool> last = pairedSteps(stageOrder(PipelineSchedule::kOneFOneB, 4, 1, 6, 3));
  EXPECT_EQ(std::count(last.begin(), last.end(), true), 12);
  // GPipe never alternates: only the last forward and the first backward meet.
  const std::vector<bool> gpipe = pairedSteps(stageOrder(PipelineSchedule::kGpipe, 4, 1, 6, 0));
  EXPECT_EQ(std::count(gpipe.begin(), gpipe.end(), true), 2);
}

IterationResult simulate(bool overlap, bool collectives_hold_sms = true) {
  // Mixtral 8x7B on 64 H100, pp 4 and ep 8 (the shipped experiment), 64 micro-batches.
  auto experiment =
      loadExperiment("mixtral-8x7b-h100", ConfigPaths{TRAINSIM_CONFIG_DIR_FOR_TESTS},
                     {parseOverride(std::string("parallelism.moe_a2a_overlap=") + (overlap ? "true" : "false"))});
  EXPECT_TRUE(experiment.ok()) << experiment.error().toString();
  SimulationOptions options = shippedSimulationOptions();
  options.iteration.symmetric = true;
  if (!collectives_hold_sms) {
    options.compute.collective_sms.clear();
    options.compute.collective_compute_share_default = 0.0;
  }
  auto result = simulateIteration(*experiment, options);
  EXPECT_TRUE(result.ok()) << result.error().toString();
  return *result;
}

TEST(MoeA2aOverlap, HidesTheAllToAllsBehindThePartnerPass) {
  const IterationResult alone = simulate(false);
  const IterationResult overlapped = simulate(true);
  EXPECT_LT(overlapped.iteration_time_s, alone.iteration_time_s);
  // What stays exposed is the unpaired passes' all-to-alls and what outlasts the compute.
  EXPECT_LT(overlapped.breakdown.tp_comm_exposed, 0.5 * alone.breakdown.tp_comm_exposed);
  // The step cannot beat its compute.
  EXPECT_GT(overlapped.iteration_time_s, overlapped.breakdown.compute);
}

// The overlapped all-to-alls of a pass are one collective and its other calls' latency
// (IterationBuilder::addCollective's count): their NCCL kernels hold 24 of the H100's 132 SMs
// through all of them, so the paired passes' compute beside them runs slower. What the SMs
// add to the step beyond the data-parallel collectives' share (the same without the overlap)
// lies between half that share of the all-to-all time the overlap hides and that share of
// all the all-to-all time. Holding them through the first call only added a tenth of it.
TEST(MoeA2aOverlap, TheOverlappedAllToAllsHoldSmsThroughEveryCall) {
  const IterationResult alone = simulate(false);
  const IterationResult alone_free = simulate(false, false);
  const IterationResult contended = simulate(true);
  const IterationResult free = simulate(true, false);
  const double share = 24.0 / 132.0;
  const double overlapped = alone_free.breakdown.tp_comm_exposed - free.breakdown.tp_comm_exposed;
  const double added =
      (contended.iteration_time_s - free.iteration_time_s) - (alone.iteration_time_s - alone_free.iteration_time_s);
  EXPECT_GT(added, share / 2.0 * overlapped);
  EXPECT_LT(added, share * alone_free.breakdown.tp_comm_exposed);
  // The breakdown books the compute the all-to-alls' SMs took as expert-parallel time: the
  // data-parallel time the SMs add is the data-parallel collectives' alone, as without the
  // overlap (it had taken the all-to-alls' part too).
  EXPECT_NEAR(contended.breakdown.dp_comm_exposed - free.breakdown.dp_comm_exposed,
              alone.breakdown.dp_comm_exposed - alone_free.breakdown.dp_comm_exposed, 1e-6);
  EXPECT_GT(contended.breakdown.tp_comm_exposed - free.breakdown.tp_comm_exposed, 0.5 * added);
}

TEST(MoeA2aOverlap, NeedsAMixtureOfExperts) {
  const std::string text =
      "model: llama3-8b\ncluster: dgx-a100\nparallelism:\n  tp: 8\n  moe_a2a_overlap: true\n"
      "training: {seq_len: 4096, global_batch_size: 64}\n";
  EXPECT_EQ(errorText(loadExperimentNode(parseConfigText(text, "plan.yaml"), testPaths())),
            "plan.yaml:5:20: parallelism.moe_a2a_overlap: moe_a2a_overlap needs a mixture-of-experts model; "
            "llama3-8b is dense (it has no moe section)");
}

}  // namespace
}  // namespace trainsim::parallelism
