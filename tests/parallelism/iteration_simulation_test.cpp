#include "parallelism/iteration_simulation.h"

#include <gtest/gtest.h>

#include <string>

#include "parallelism/experiment_loader.h"
#include "tests/shipped_simulation_options.h"

namespace trainsim::parallelism {
namespace {

Experiment experimentFrom(const std::string& yaml) {
  auto experiment = loadExperimentNode(parseConfigText(yaml, "test.yaml"), ConfigPaths{TRAINSIM_CONFIG_DIR_FOR_TESTS});
  if (!experiment.ok()) throw std::runtime_error(experiment.error().toString());
  return std::move(experiment).value();
}

IterationResult simulate(const Experiment& experiment) {
  auto result = simulateIteration(experiment, shippedSimulationOptions());
  if (!result.ok()) throw std::runtime_error(result.error().toString());
  return std::move(result).value();
}

// Llama 3 8B data-parallel over 4 DGX H100 nodes, one sequence per GPU.
std::string dataParallel(bool overlap) {
  return std::string(R"(
name: dp-only
model: llama3-8b
cluster: {gpu: h100-sxm, nodes: 4, gpus_per_node: 8, inter_node: {nic_bandwidth_Gbps: 400, topology: rail_optimized}}
training: {seq_len: 4096, global_batch_size: 64, micro_batch_size: 1}
parallelism: {tp: 1, pp: 1, zero: 1, overlap_grad_reduce: )") +
         (overlap ? "true" : "false") + "}\n";
}

TEST(IterationSimulationTest, OverlappingGradientReductionShrinksExposedDataParallelTime) {
  const IterationResult serial = simulate(experimentFrom(dataParallel(false)));
  const IterationResult overlapped = simulate(experimentFrom(dataParallel(true)));
  EXPECT_GT(serial.breakdown.dp_comm_exposed, 0.0);
  EXPECT_LT(overlapped.breakdown.dp_comm_exposed, 0.5 * serial.breakdown.dp_comm_exposed);
  EXPECT_LT(overlapped.iteration_time_s, serial.iteration_time_s);
  // Same work either way.
  EXPECT_NEAR(overlapped.breakdown.compute, serial.breakdown.compute, 1e-9 * serial.breakdown.compute);
}

// The overlapped reduce-scatters hold some of the GPU's SMs (perf::ComputeParameters::
// collective_sms: 24 of H100's 132) while the backward runs beside them: the iteration grows,
// by less than that share of the whole iteration, the compute at full speed does not, and
// what it lost is counted as data-parallel time.
TEST(IterationSimulationTest, OverlappedReductionSlowsTheBackwardItOverlaps) {
  const Experiment experiment = experimentFrom(dataParallel(true));
  SimulationOptions no_contention = shippedSimulationOptions();
  no_contention.compute.collective_sms.clear();
  no_contention.compute.collective_compute_share_default = 0.0;
  auto free = simulateIteration(experiment, no_contention);
  ASSERT_TRUE(free.ok()) << free.error().toString();
  const IterationResult contended = simulate(experiment);
  const double added = contended.iteration_time_s - free.value().iteration_time_s;
  EXPECT_GT(added, 0.0);
  EXPECT_LT(added, 24.0 / 132.0 * free.value().iteration_time_s);
  EXPECT_NEAR(contended.breakdown.compute, free.value().breakdown.compute, 1e-9 * contended.breakdown.compute);
  EXPECT_NEAR(contended.breakdown.dp_comm_exposed - free.value().breakdown.dp_comm_exposed, added, 1e-9);
}

TEST(IterationSimulationTest, SameInputSameResult) {
  const Experiment experiment = experimentFrom(dataParallel(true));
  const IterationResult first = simulate(experiment);
  const IterationResult second = simulate(experiment);
  EXPECT_EQ(first.iteration_time_s, second.iteration_time_s);
  EXPECT_EQ(first.events, second.events);
  EXPECT_EQ(first.breakdown.pipeline_bubble, second.breakdown.pipeline_bubble);
}

TEST(IterationSimulationTest, ThroughputAndFlopsFollowFromTheIterationTime) {
  const Experiment experiment = experimentFrom(dataParallel(true));
  const IterationResult result = simulate(experiment);
  EXPECT_NEAR(result.tokens_per_s * result.iteration_time_s, 64.0 * 4096.0, 1e-6 * 64 * 4096);
  EXPECT_NEAR(result.tflops_per_gpu, result.model_flops / (32.0 * result.iteration_time_s) / 1e12, 1e-9);
  EXPECT_NEAR(result.mfu, result.tflops_per_gpu / 989.4, 1e-3);
  EXPECT_GT(result.mfu, 0.2);
  EXPECT_LT(result.mfu, 0.9);
  // The parts of the breakdown add up to the iteration.
  const auto& b = result.breakdown;
  EXPECT_NEAR(b.compute + b.tp_comm_exposed + b.dp_comm_exposed + b.pp_comm_exposed + b.pipeline_bubble,
              result.iteration_time_s, 1e-9);
}

TEST(IterationSimulationTest, PipelineBubbleMatchesOneFOneBWhenCommunicationIsCheap) {
  // 8 GPUs of one node, pp 4, dp 2: with m micro-batches the 1F1B bubble is about
  // (p - 1) / (m + p - 1) of the iteration (communication over NVLink is small). A tiny
  // vocabulary keeps the embedding and logits from unbalancing the first and last stages.
  const Experiment experiment = experimentFrom(R"(
model: {architecture: llama, layers: 32, hidden_size: 4096, ffn_hidden_size: 14336, attention_heads: 32, kv_heads: 8,
        vocab_size: 1024}
cluster: {gpu: h100-sxm, nodes: 1, gpus_per_node: 8}
training: {seq_len: 2048, global_batch_size: 32, micro_batch_size: 1}
parallelism: {tp: 1, pp: 4, overlap_grad_reduce: true}
)");
  const IterationResult result = simulate(experiment);
  const double m = 16.0, p = 4.0;
  EXPECT_NEAR(result.breakdown.pipeline_bubble / result.iteration_time_s, (p - 1) / (m + p - 1), 0.05);
}

// pp 4 x dp 2 on one node; `global_batch_size` 32 gives 16 micro-batches, simulated in full,
// 64 gives 32, extrapolated from the steady state (microbatchExtrapolation).
Experiment fourStages(int global_batch_size) {
  return experimentFrom(R"(
model: {architecture: llama, layers: 16, hidden_size: 2048, ffn_hidden_size: 8192, attention_heads: 16, kv_heads: 8,
        vocab_size: 32000}
cluster: {gpu: h100-sxm, nodes: 1, gpus_per_node: 8}
training: {seq_len: 2048, micro_batch_size: 1, global_batch_size: )" +
                        std::to_string(global_batch_size) + "}\nparallelism: {tp: 1, pp: 4}\n");
}

bool sameBreakdown(const TimeBreakdown& a, const TimeBreakdown& b) {
  return a.compute == b.compute && a.tp_comm_exposed == b.tp_comm_exposed && a.dp_comm_exposed == b.dp_comm_exposed &&
         a.pp_comm_exposed == b.pp_comm_exposed && a.pipeline_bubble == b.pipeline_bubble &&
         a.host_dispatch_exposed == b.host_dispatch_exposed;
}

void expectStageBreakdowns(const IterationResult& result) {
  ASSERT_EQ(result.stage_breakdowns.size(), 4U);
  int critical_matches = 0;
  for (const TimeBreakdown& b : result.stage_breakdowns) {
    critical_matches += sameBreakdown(b, result.breakdown) ? 1 : 0;
    EXPECT_GT(b.compute, 0.0);
    const double sum = b.compute + b.tp_comm_exposed + b.dp_comm_exposed + b.pp_comm_exposed + b.pipeline_bubble +
                       b.host_dispatch_exposed;
    EXPECT_NEAR(sum, result.iteration_time_s, 1e-9 * result.iteration_time_s);
  }
  EXPECT_GE(critical_matches, 1);
  // The last stage also runs the logits and the loss: the busiest, it sets the pace and idles
  // least; the others wait for it.
  const TimeBreakdown& last = result.stage_breakdowns.back();
  for (std::size_t stage = 0; stage + 1 < result.stage_breakdowns.size(); ++stage) {
    EXPECT_GT(last.compute, result.stage_breakdowns[stage].compute) << stage;
    EXPECT_LT(last.pipeline_bubble, result.stage_breakdowns[stage].pipeline_bubble) << stage;
  }
}

TEST(IterationSimulationTest, EveryPipelineStageHasABreakdownThatAddsUpToTheIteration) {
  const IterationResult result = simulate(fourStages(32));
  ASSERT_FALSE(result.extrapolation);
  expectStageBreakdowns(result);
}

TEST(IterationSimulationTest, StageBreakdownsAreExtrapolatedLikeTheCriticalOne) {
  const IterationResult result = simulate(fourStages(64));
  ASSERT_TRUE(result.extrapolation);
  expectStageBreakdowns(result);
}

TEST(IterationSimulationTest, SymmetricModeGivesTheSameStageBreakdowns) {
  SimulationOptions symmetric = shippedSimulationOptions();
  symmetric.iteration.symmetric = true;
  auto reduced = simulateIteration(fourStages(32), symmetric);
  ASSERT_TRUE(reduced.ok()) << reduced.error().toString();
  const IterationResult full = simulate(fourStages(32));
  ASSERT_EQ(reduced.value().stage_breakdowns.size(), full.stage_breakdowns.size());
  for (std::size_t stage = 0; stage < full.stage_breakdowns.size(); ++stage) {
    EXPECT_NEAR(reduced.value().stage_breakdowns[stage].compute, full.stage_breakdowns[stage].compute, 1e-9);
  }
}

}  // namespace
}  // namespace trainsim::parallelism

namespace trainsim::parallelism {
namespace {

std::string tensorParallel(bool overlap, int tp = 2) {
  return std::string(R"(
model: llama3-8b
cluster: {gpu: h100-sxm, nodes: 1, gpus_per_node: 8}
training: {seq_len: 4096, global_batch_size: 16, micro_batch_size: 1}
parallelism: {sequence_parallel: true, tp: )") +
         std::to_string(tp) + ", tp_comm_overlap: " + (overlap ? "true" : "false") + "}\n";
}

TEST(IterationSimulationTest, TensorParallelCommOverlapHidesCollectivesBehindCompute) {
  // At tp 2 every GEMM of the layer outlasts the collective beside it.
  const IterationResult blocking = simulate(experimentFrom(tensorParallel(false)));
  const IterationResult overlapped = simulate(experimentFrom(tensorParallel(true)));
  EXPECT_GT(blocking.breakdown.tp_comm_exposed, 0.0);
  EXPECT_LT(overlapped.breakdown.tp_comm_exposed, 0.5 * blocking.breakdown.tp_comm_exposed);
  EXPECT_LT(overlapped.iteration_time_s, blocking.iteration_time_s);
  // The overlapped collectives' kernels hold SMs (Transformer Engine: 16 for the pipelined and
  // bulk overlaps), so the GEMMs beside them run slower: planned for the 116 SMs left of an
  // H100, each in at most twice its waves (ceil(t / 116) <= 2 ceil(t / 132)); here the layer's
  // compute grows by about the SMs' share.
  EXPECT_GT(overlapped.breakdown.compute, blocking.breakdown.compute);
  EXPECT_LT(overlapped.breakdown.compute, blocking.breakdown.compute * 1.2);
}

TEST(IterationSimulationTest, TensorParallelCommOverlapCannotHideACollectiveLongerThanItsGemm) {
  // At tp 8 the attention block's GEMMs (QKV with 8 key/value heads: 768 of 4,096 columns per
  // GPU; the output projection's 512-deep reduction) are shorter than the all-gather and the
  // reduce-scatter of the 4,096-wide block input and output beside them, and each collective
  // runs beside its own GEMM only, not beside attention or the MLP (tp_overlap_exposure.h):
  // much of the time stays exposed, yet less than without overlap.
  const IterationResult blocking = simulate(experimentFrom(tensorParallel(false, 8)));
  const IterationResult overlapped = simulate(experimentFrom(tensorParallel(true, 8)));
  EXPECT_GT(overlapped.breakdown.tp_comm_exposed, 0.4 * blocking.breakdown.tp_comm_exposed);
  EXPECT_LT(overlapped.breakdown.tp_comm_exposed, blocking.breakdown.tp_comm_exposed);
  EXPECT_LT(overlapped.iteration_time_s, blocking.iteration_time_s);
}

TEST(IterationSimulationTest, TensorParallelCommOverlapNeedsSequenceParallelism) {
  auto experiment = loadExperimentNode(
      parseConfigText("model: llama3-8b\ncluster: {gpu: h100-sxm, nodes: 1, gpus_per_node: 8}\n"
                      "training: {seq_len: 4096, global_batch_size: 16}\nparallelism: {tp: 8, tp_comm_overlap: true}\n",
                      "overlap.yaml"),
      ConfigPaths{TRAINSIM_CONFIG_DIR_FOR_TESTS});
  ASSERT_FALSE(experiment.ok());
  EXPECT_EQ(experiment.error().code, ExitCode::kInvalidInput);
  EXPECT_EQ(experiment.error().key_path, "parallelism.tp_comm_overlap");
}

}  // namespace
}  // namespace trainsim::parallelism

namespace trainsim::parallelism {
namespace {

// Slow GPUs (goodput/stragglers.h): the synchronous step waits for the slowest rank, so one
// slow GPU slows the whole data-parallel step about as much as all of them would.
TEST(IterationSimulationTest, OneSlowRankSlowsTheSynchronousStep) {
  const Experiment experiment = experimentFrom(dataParallel(true));
  SimulationOptions options = shippedSimulationOptions();
  const IterationResult base = simulate(experiment);
  const auto ranks = static_cast<std::size_t>(experiment.plan.gpus);
  options.iteration.rank_compute_scale.assign(ranks, 1.0);
  options.iteration.rank_compute_scale[5] = 1.5;
  auto one = simulateIteration(experiment, options);
  ASSERT_TRUE(one.ok()) << one.error().toString();
  options.iteration.rank_compute_scale.assign(ranks, 1.5);
  auto all = simulateIteration(experiment, options);
  ASSERT_TRUE(all.ok()) << all.error().toString();
  EXPECT_GT(one->iteration_time_s, base.iteration_time_s * 1.3);
  EXPECT_LE(one->iteration_time_s, all->iteration_time_s * (1.0 + 1e-9));
  EXPECT_GT(one->iteration_time_s, all->iteration_time_s * 0.9);
  EXPECT_LT(all->iteration_time_s, base.iteration_time_s * 1.5 * (1.0 + 1e-9));
}

}  // namespace
}  // namespace trainsim::parallelism
