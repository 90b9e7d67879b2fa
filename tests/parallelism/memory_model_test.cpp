#include "parallelism/memory_model.h"

#include <gtest/gtest.h>

#include <string>

#include "base/units.h"
#include "parallelism/experiment_loader.h"
#include "tests/parallelism/model_builders.h"

namespace trainsim::parallelism {
namespace {

using testing::gpt3Model;
using testing::gptModel;
using testing::llama3_8bModel;
using testing::mixtralModel;
using testing::shard;
using topology::Precision;

constexpr double kRelative = 1e-12;

// Korthikanti et al.'s setup: GPT, 2-byte activations, unfused attention with dropout.
MemoryOptions korthikantiOptions() {
  MemoryOptions options;
  options.kernels.fused_attention = false;
  return options;
}

// --- Activations of one layer: Korthikanti et al. 2022, Table 2 ------------------------------------

struct GptSetup {
  ModelSpec model;
  double s, b, h, a;
};

// GPT-3 175B and the 530B model of Korthikanti et al. Table 3 (105 layers, h 20480, 128 heads).
std::vector<GptSetup> gptSetups() {
  return {{gpt3Model(), 2048, 1, 12288, 96}, {gptModel(105, 20480, 128, 51200), 2048, 2, 20480, 128}};
}

TEST(MemoryModel, KorthikantiNoParallelism) {
  for (const auto& [model, s, b, h, a] : gptSetups()) {
    const double expected = s * b * h * (34.0 + 5.0 * a * s / h);
    const auto sh = shard(static_cast<int64_t>(b), static_cast<int64_t>(s));
    EXPECT_NEAR(layerActivationBytes(model, sh, Recompute::kNone, korthikantiOptions()) / expected, 1.0, kRelative);
  }
}

// Korthikanti's 34 s b h + 5 a s^2 b counts two one-byte dropout masks per layer (after the
// attention and the MLP) and, per attention score, a mask and the dropped-out probabilities
// (3 of the 5 bytes). A gpt model trained without dropout keeps 32 s b h + 2 a s^2 b.
TEST(MemoryModel, KorthikantiWithoutDropoutDropsTheMasks) {
  for (auto [model, s, b, h, a] : gptSetups()) {
    model.hidden_dropout = 0.0;
    model.attention_dropout = 0.0;
    const double expected = s * b * h * (32.0 + 2.0 * a * s / h);
    const auto sh = shard(static_cast<int64_t>(b), static_cast<int64_t>(s));
    EXPECT_NEAR(layerActivationBytes(model, sh, Recompute::kNone, korthikantiOptions()) / expected, 1.0, kRelative);
  }
}

TEST(MemoryModel, KorthikantiTensorParallel) {
  for (const auto& [model, s, b, h, a] : gptSetups()) {
    for (const int64_t tp : {2, 4, 8}) {
      const double t = static_cast<double>(tp);
      const auto sh = shard(static_cast<int64_t>(b), static_cast<int64_t>(s), tp, false);
      const double expected = s * b * h * (10.0 + 24.0 / t + 5.0 * a * s / (h * t));
      EXPECT_NEAR(layerActivationBytes(model, sh, Recompute::kNone, korthikantiOptions()) / expected, 1.0, kRelative);
      const double selective = s * b * h * (10.0 + 24.0 / t);
      EXPECT_NEAR(layerActivationBytes(model, sh, Recompute::kSelective, korthikantiOptions()) / selective, 1.0,
                  kRelative);
      EXPECT_NEAR(layerActivationBytes(model, sh, Recompute::kFull, korthikantiOptions()) / (2.0 * s * b * h), 1.0,
                  kRelative);
    }
  }
}

TEST(MemoryModel, KorthikantiTensorAndSequenceParallel) {
  for (const auto& [model, s, b, h, a] : gptSetups()) {
    for (const int64_t tp : {2, 4, 8}) {
      const double t = static_cast<double>(tp);
      const auto sh = shard(static_cast<int64_t>(b), static_cast<int64_t>(s), tp, true);
      const double expected = s * b * h * (34.0 / t + 5.0 * a * s / (h * t));
      EXPECT_NEAR(layerActivationBytes(model, sh, Recompute::kNone, korthikantiOptions()) / expected, 1.0, kRelative);
      EXPECT_NEAR(layerActivationBytes(model, sh, Recompute::kSelective, korthikantiOptions()) / (34.0 * s * b * h / t),
                  1.0, kRelative);
      EXPECT_NEAR(layerActivationBytes(model, sh, Recompute::kFull, korthikantiOptions()) / (2.0 * s * b * h / t), 1.0,
                  kRelative);
    }
  }
}

TEST(MemoryModel, MegatronTheoreticalEstimateWithSequenceParallelSelective) {
  // megatron/training/theoretical_memory_usage.py: s b h (18 + 4 f / h) / t.
  const ModelSpec model = gpt3Model();
  const double s = 2048, h = 12288, f = 49152;
  EXPECT_NEAR(layerActivationBytes(model, shard(1, 2048, 8, true), Recompute::kSelective) /
                  (s * h * (18.0 + 4.0 * f / h) / 8.0),
              1.0, kRelative);
}

TEST(MemoryModel, FlashAttentionKeepsOnlyTheLogsumexp) {
  const ModelSpec model = gpt3Model();
  const auto sh = shard(1, 2048, 8, true);
  const double core =
      layerActivationBytes(model, sh, Recompute::kNone) - layerActivationBytes(model, sh, Recompute::kSelective);
  EXPECT_DOUBLE_EQ(core, 4.0 * (96.0 / 8) * 2048);  // fp32 per head and query
}

TEST(MemoryModel, ContextParallelDividesTheSequence) {
  const ModelSpec model = gpt3Model();
  const double one = layerActivationBytes(model, shard(1, 4096, 8, true), Recompute::kSelective);
  const double two = layerActivationBytes(model, shard(1, 4096, 8, true, 2), Recompute::kSelective);
  EXPECT_DOUBLE_EQ(two, one / 2.0);
  // The s^2 terms: s / cp queries against all s keys.
  const double unfused_one =
      layerActivationBytes(model, shard(1, 4096, 8, true), Recompute::kNone, korthikantiOptions());
  const double unfused_two =
      layerActivationBytes(model, shard(1, 4096, 8, true, 2), Recompute::kNone, korthikantiOptions());
  EXPECT_DOUBLE_EQ(unfused_two, unfused_one / 2.0);
}

TEST(MemoryModel, GroupedQueryAttentionAndSwiGlu) {
  // Term by term for Llama 3 8B, tp 1, selective: norm inputs, QKV and fc1 inputs (2sbh each),
  // Q 2sbq, K and V 2sb kv each, context 2sbq, SwiGLU input 2sb(2f), fc2 input 2sbf.
  const ModelSpec model = llama3_8bModel();
  const double s = 4096, h = 4096, q = 4096, kv = 1024, f = 14336;
  const double expected = 2 * s * (4 * h + 2 * q + 2 * kv + 3 * f);
  EXPECT_DOUBLE_EQ(layerActivationBytes(model, shard(1, 4096), Recompute::kSelective), expected);
  // fp32 training doubles everything.
  EXPECT_DOUBLE_EQ(layerActivationBytes(model, shard(1, 4096, 1, false, 1, 1, Precision::kFp32), Recompute::kSelective),
                   2.0 * expected);
}

TEST(MemoryModel, Fp8KeepsTheQuantizedInputsOfTransformerEngineLinears) {
  // Transformer Engine saves the 1-byte FP8 copies of the QKV, attention-output, fc1 and fc2
  // inputs; the norm inputs, Q, K, V and the SwiGLU input stay 16-bit.
  const ModelSpec model = llama3_8bModel();
  const double s = 4096, h = 4096, q = 4096, kv = 1024, f = 14336;
  const double sixteen_bit = 2 * s * (2 * h + q + 2 * kv + 2 * f);
  const double quantized = s * (2 * h + q + f);
  EXPECT_DOUBLE_EQ(layerActivationBytes(model, shard(1, 4096, 1, false, 1, 1, Precision::kFp8), Recompute::kSelective),
                   sixteen_bit + quantized);
}

// --- Pipeline schedules --------------------------------------------------------------------------

ParallelPlan pipelinePlan(int64_t pp, int64_t virtual_stages = 1,
                          PipelineSchedule schedule = PipelineSchedule::kOneFOneB) {
  ParallelPlan plan;
  plan.pp = pp;
  plan.dp = 1;
  plan.gpus = pp;
  plan.virtual_stages = virtual_stages;
  plan.schedule = schedule;
  return plan;
}

TEST(MemoryModel, OneFOneBHoldsPipelineDepthOnTheFirstStage) {
  const ParallelPlan plan = pipelinePlan(4);
  EXPECT_EQ(inFlightMicrobatches(plan, 16, 0), 4);
  EXPECT_EQ(inFlightMicrobatches(plan, 16, 1), 3);
  EXPECT_EQ(inFlightMicrobatches(plan, 16, 3), 1);
  EXPECT_EQ(inFlightMicrobatches(plan, 2, 0), 2);  // fewer micro-batches than stages
}

TEST(MemoryModel, GpipeHoldsEveryMicrobatch) {
  const ParallelPlan plan = pipelinePlan(4, 1, PipelineSchedule::kGpipe);
  for (int64_t stage = 0; stage < 4; ++stage) EXPECT_EQ(inFlightMicrobatches(plan, 16, stage), 16);
}

TEST(MemoryModel, InterleavedFollowsMegatronWarmup) {
  const ParallelPlan plan = pipelinePlan(4, 2);
  // 2 (p - 1) + (v - 1) p + 1 = 11 chunks of L / (p v) layers: L (1 + (p - 1) / (p v)) on stage 0.
  EXPECT_EQ(inFlightMicrobatches(plan, 8, 0), 11);
  EXPECT_EQ(inFlightMicrobatches(plan, 8, 3), 5);
  EXPECT_EQ(inFlightMicrobatches(plan, 4, 3), 8);  // m = p: every forward is warm-up
}

Experiment gptExperiment(int64_t pp, PipelineSchedule schedule, int64_t microbatches) {
  Experiment experiment;
  experiment.name = "test";
  experiment.model = gptModel(8, 1024, 16, 1000);
  experiment.cluster.gpu.memory_GiB = 80;
  experiment.training = testing::training(1024, microbatches);
  experiment.plan = pipelinePlan(pp, 1, schedule);
  return experiment;
}

TEST(MemoryModel, StagesHoldTheScheduleInFlightActivations) {
  const Experiment one_f_one_b = gptExperiment(4, PipelineSchedule::kOneFOneB, 16);
  const Experiment gpipe = gptExperiment(4, PipelineSchedule::kGpipe, 16);
  const double per_layer = layerActivationBytes(
      one_f_one_b.model, MicroBatchShard::of(one_f_one_b.training, one_f_one_b.plan), Recompute::kNone);
  const MemoryReport a = estimateMemory(one_f_one_b);
  const MemoryReport b = estimateMemory(gpipe);
  ASSERT_EQ(a.stages.size(), 4u);
  EXPECT_EQ(a.stages[0].in_flight, 4);
  EXPECT_EQ(b.stages[0].in_flight, 16);
  // Middle stages hold nothing but their layers' activations: 2 layers x in-flight.
  EXPECT_DOUBLE_EQ(a.stages[1].activations, 3 * 2 * per_layer);
  EXPECT_DOUBLE_EQ(b.stages[1].activations, 16 * 2 * per_layer);
  EXPECT_GT(a.stages[0].activations, 4 * 2 * per_layer);  // plus token ids and embedding dropout
  EXPECT_EQ(a.peak_stage, 0u);
}

// --- Weights, gradients, optimizer states, ZeRO ------------------------------------------------------

TEST(MemoryModel, BytesPerParameterFollowMegatronTable) {
  auto sum = [](const StateBytes& bytes) { return bytes.weights + bytes.gradients + bytes.optimizer; };
  EXPECT_DOUBLE_EQ(sum(stateBytesPerParameter(Precision::kFp16, Optimizer::kAdam)), 20.0);
  EXPECT_DOUBLE_EQ(sum(stateBytesPerParameter(Precision::kBf16, Optimizer::kAdam)), 18.0);
  EXPECT_DOUBLE_EQ(sum(stateBytesPerParameter(Precision::kFp32, Optimizer::kAdam)), 16.0);
  // Distributed optimizer: 4 + 16/d, 6 + 12/d, 8 + 8/d.
  const StateBytes fp16 = stateBytesPerParameter(Precision::kFp16, Optimizer::kAdam);
  EXPECT_DOUBLE_EQ(fp16.weights + fp16.gradients, 4.0);
  EXPECT_DOUBLE_EQ(fp16.optimizer, 16.0);
  const StateBytes bf16 = stateBytesPerParameter(Precision::kBf16, Optimizer::kAdam);
  EXPECT_DOUBLE_EQ(bf16.weights + bf16.gradients, 6.0);
  EXPECT_DOUBLE_EQ(bf16.optimizer, 12.0);
  const StateBytes fp32 = stateBytesPerParameter(Precision::kFp32, Optimizer::kAdam);
  EXPECT_DOUBLE_EQ(fp32.weights + fp32.gradients, 8.0);
  EXPECT_DOUBLE_EQ(fp32.optimizer, 8.0);
  // SGD: fp32 master + momentum.
  EXPECT_DOUBLE_EQ(stateBytesPerParameter(Precision::kBf16, Optimizer::kSgd).optimizer, 8.0);
}

TEST(MemoryModel, GradReducePrecisionSetsTheGradientsAndTheOptimizersFp32Copy) {
  TrainingSpec training;
  training.precision = Precision::kBf16;
  training.grad_reduce_precision = Precision::kBf16;
  // bf16 main gradients (Megatron-Bridge's grad_reduce_in_fp32 = False): 2 bytes, and the
  // distributed optimizer keeps an fp32 copy of its shard of them, as for fp16: 4 + 16/d.
  StateBytes bytes = stateBytesPerParameter(training);
  EXPECT_DOUBLE_EQ(bytes.weights + bytes.gradients, 4.0);
  EXPECT_DOUBLE_EQ(bytes.optimizer, 16.0);
  // fp16 with fp32 main gradients (--accumulate-allreduce-grads-in-fp32): bf16's row, 6 + 12/d.
  training.precision = Precision::kFp16;
  training.grad_reduce_precision = Precision::kFp32;
  bytes = stateBytesPerParameter(training);
  EXPECT_DOUBLE_EQ(bytes.weights + bytes.gradients, 6.0);
  EXPECT_DOUBLE_EQ(bytes.optimizer, 12.0);
}

TEST(MemoryModel, Bf16OptimizerStatesHalveTheMomentsAndDropTheGradientCopy) {
  TrainingSpec training;
  training.precision = Precision::kBf16;
  training.optimizer_state_precision = Precision::kBf16;
  // fp32 master weight 4 + bf16 m and v 2 + 2.
  EXPECT_DOUBLE_EQ(stateBytesPerParameter(training).optimizer, 8.0);
  // bf16 main gradients are read as they are: no fp32 copy of them (16 with fp32 states).
  training.grad_reduce_precision = Precision::kBf16;
  EXPECT_DOUBLE_EQ(stateBytesPerParameter(training).optimizer, 8.0);
  training.optimizer = Optimizer::kSgd;
  EXPECT_DOUBLE_EQ(stateBytesPerParameter(training).optimizer, 6.0);
}

Experiment llamaExperiment(int zero, int64_t dp) {
  Experiment experiment;
  experiment.name = "llama";
  experiment.model = llama3_8bModel();
  experiment.cluster.gpu.memory_GiB = 80;
  experiment.training = testing::training(4096, 64);
  experiment.plan.dp = dp;
  experiment.plan.gpus = dp;
  experiment.plan.zero = zero;
  return experiment;
}

TEST(MemoryModel, ZeroShardsOverDataParallelRanks) {
  const StageMemory none = estimateMemory(llamaExperiment(0, 8)).peak();
  const StageMemory one = estimateMemory(llamaExperiment(1, 8)).peak();
  const StageMemory two = estimateMemory(llamaExperiment(2, 8)).peak();
  const StageMemory three = estimateMemory(llamaExperiment(3, 8)).peak();
  EXPECT_DOUBLE_EQ(one.optimizer, none.optimizer / 8.0);
  EXPECT_DOUBLE_EQ(one.gradients, none.gradients);
  EXPECT_DOUBLE_EQ(one.weights, none.weights);
  EXPECT_DOUBLE_EQ(two.gradients, none.gradients / 8.0);
  EXPECT_DOUBLE_EQ(two.weights, none.weights);
  EXPECT_DOUBLE_EQ(three.weights, none.weights / 8.0);
  EXPECT_GT(three.communication_buffers, two.communication_buffers);  // gathered layers
  // bf16 Adam without sharding: 18 bytes per parameter.
  const double parameters = llama3_8bModel().parameterCount();
  EXPECT_NEAR((none.weights + none.gradients + none.optimizer) / (18.0 * parameters), 1.0, kRelative);
}

TEST(MemoryModel, ExpertStatesShardOverExpertDataParallelRanks) {
  Experiment experiment;
  experiment.model = mixtralModel();
  experiment.cluster.gpu.memory_GiB = 80;
  experiment.training = testing::training(4096, 64);
  experiment.plan.dp = 16;
  experiment.plan.ep = 8;
  experiment.plan.gpus = 16;
  experiment.plan.zero = 1;
  const StageMemory stage = estimateMemory(experiment).peak();
  const StateBytes bytes = stateBytesPerParameter(Precision::kBf16, Optimizer::kAdam);
  // Dense parameters shard over 16 ranks, the one local expert per layer over 16 / 8 = 2.
  EXPECT_NEAR(stage.optimizer / (bytes.optimizer * (stage.parameters.dense / 16 + stage.parameters.expert / 2)), 1.0,
              kRelative);
  EXPECT_NEAR(stage.parameters.expert / (32.0 * 3 * 4096 * 14336), 1.0, kRelative);
}

TEST(MemoryModel, StageParametersAddUpToTheModel) {
  const ModelSpec llama = llama3_8bModel();
  ParallelPlan plan;
  plan.dp = 1;
  EXPECT_NEAR(
      stageParameters(llama, testing::training(4096, 8), plan, 0, llama.layers).total() / llama.parameterCount(), 1.0,
      kRelative);
  // A tied GPT: the input embedding serves as output layer on one stage; with pp = 2 the last
  // stage keeps its own copy (Megatron). Learned positions are extra.
  const ModelSpec gpt = gptModel(8, 1024, 16, 1000);
  const double positions = 1024.0 * 1024;
  EXPECT_NEAR(stageParameters(gpt, testing::training(1024, 8), plan, 0, 8).total() / (gpt.parameterCount() + positions),
              1.0, kRelative);
  plan.pp = 2;
  const double two_stages = stageParameters(gpt, testing::training(1024, 8), plan, 0, 4).total() +
                            stageParameters(gpt, testing::training(1024, 8), plan, 1, 4).total();
  EXPECT_NEAR(two_stages / (gpt.parameterCount() + positions + 1000.0 * 1024), 1.0, kRelative);
}

// --- Whole experiments ------------------------------------------------------------------------------

const ConfigPaths kShippedPaths{TRAINSIM_CONFIG_DIR_FOR_TESTS};

Experiment loadShipped(const std::string& text) {
  auto experiment = loadExperimentNode(parseConfigText(text, "test.yaml"), kShippedPaths);
  EXPECT_TRUE(experiment.ok()) << experiment.error().toString();
  return std::move(experiment).value();
}

TEST(MemoryModel, SeventyBillionAtTp1DoesNotFitOn80GB) {
  const Experiment experiment = loadShipped(R"(model: llama3-70b
cluster: dgx-h100
training: {seq_len: 8192, global_batch_size: 64}
parallelism: {gpus: 8, tp: 1, pp: 1, zero: 1, recompute: full}
)");
  const MemoryReport report = estimateMemory(experiment);
  EXPECT_FALSE(report.fits());
  EXPECT_GT(report.peak().weights, 80.0 * units::kGiB);  // 70.6B x 2 bytes alone
  // The same model with tp 8 inside the node does fit.
  const Experiment split = loadShipped(R"(model: llama3-70b
cluster: dgx-h100
training: {seq_len: 8192, global_batch_size: 64}
parallelism: {gpus: 64, tp: 8, pp: 2, zero: 1, recompute: selective, sequence_parallel: true}
)");
  EXPECT_TRUE(estimateMemory(split).fits());
}

TEST(MemoryModel, FusedCrossEntropyKeepsSixteenBitLogitsInsteadOfTheFp32Softmax) {
  // One stage, one micro-batch in flight: the loss buffer is the only difference, 4 bytes per
  // logit unfused (Korthikanti's 4sbV/t) and at its peak the caller's 16-bit logits beside
  // them (2 more; the recomputed core attention's working set is smaller), 2 fused.
  const std::string plan = R"(cluster: dgx-h100
parallelism: {gpus: 8, tp: 2, pp: 1, zero: 1, sequence_parallel: true}
model: llama3-8b
)";
  const Experiment unfused = loadShipped(plan + "training: {seq_len: 8192, global_batch_size: 4}\n");
  const Experiment fused =
      loadShipped(plan + "training: {seq_len: 8192, global_batch_size: 4, fused_cross_entropy: true}\n");
  const double logits = 8192.0 * static_cast<double>(unfused.model.vocab_size) / 2.0;
  const MemoryOptions options;
  const double saved =
      estimateMemory(unfused, options).peak().activations - estimateMemory(fused, options).peak().activations;
  EXPECT_NEAR(saved / ((4.0 + 2.0 - 2.0) * logits), 1.0, 1e-9);
}

// The unfused loss's peak on the last stage: Megatron's in-place loss holds the 16-bit logits
// beside its one fp32 copy (6 bytes per logit, 2 more than it keeps); PyTorch's
// F.cross_entropy holds three fp32 copies in its backward (12, 8 more). The plan is at tp 2,
// so the counts are the split-logits ones (unfused_loss_tp_*). In fp32 training the cast
// copies nothing, so Megatron's loss holds only what it keeps.
TEST(MemoryModel, TheUnfusedLossPeaksBeyondWhatItKeeps) {
  const std::string plan = R"(cluster: dgx-h100
parallelism: {gpus: 8, tp: 2, pp: 1, zero: 1, sequence_parallel: true, recompute: none}
model: llama3-8b
)";
  const Experiment bf16 = loadShipped(plan + "training: {seq_len: 8192, global_batch_size: 4}\n");
  const double logits = 8192.0 * static_cast<double>(bf16.model.vocab_size) / 2.0;
  MemoryOptions megatron;
  MemoryOptions pytorch;
  pytorch.unfused_loss_tp_fp32_copies_at_peak = 2.0;
  pytorch.unfused_loss_tp_backward_fp32_copies_at_peak = 3.0;
  const double megatron_peak = estimateMemory(bf16, megatron).peak().activations;
  EXPECT_NEAR((estimateMemory(bf16, pytorch).peak().activations - megatron_peak) / ((8.0 - 2.0) * logits), 1.0, 1e-9);
  // fp32: Megatron's loss holds only what it keeps, as much as a fused loss keeps.
  const Experiment fp32 = loadShipped(plan + "training: {seq_len: 8192, global_batch_size: 4, precision: fp32}\n");
  const Experiment fp32_fused = loadShipped(
      plan + "training: {seq_len: 8192, global_batch_size: 4, precision: fp32, fused_cross_entropy: true}\n");
  EXPECT_DOUBLE_EQ(estimateMemory(fp32, megatron).peak().activations,
                   estimateMemory(fp32_fused, megatron).peak().activations);
  EXPECT_NEAR((estimateMemory(fp32, pytorch).peak().activations - estimateMemory(fp32, megatron).peak().activations) /
                  (8.0 * logits),
              1.0, 1e-9);
}

// With the logits split over tp > 1 ranks a loss may run other code than at tp 1: torch's
// loss_parallel (torchtitan at tp > 1) holds 3 fp32 copies forward and 4 in its backward
// where F.cross_entropy on whole logits holds 2 and 3. The tp counts apply at tp > 1 only.
TEST(MemoryModel, TheLossOverSplitLogitsTakesItsOwnCopyCounts) {
  const std::string training = "training: {seq_len: 8192, global_batch_size: 4}\nmodel: llama3-8b\ncluster: dgx-h100\n";
  const Experiment split =
      loadShipped(training + "parallelism: {gpus: 8, tp: 2, pp: 1, zero: 1, sequence_parallel: true}\n");
  const Experiment whole = loadShipped(training + "parallelism: {gpus: 4, tp: 1, pp: 1, zero: 1}\n");
  MemoryOptions whole_logits;
  whole_logits.unfused_loss_fp32_copies_at_peak = 2.0;
  whole_logits.unfused_loss_backward_fp32_copies_at_peak = 3.0;
  MemoryOptions loss_parallel = whole_logits;
  loss_parallel.unfused_loss_tp_fp32_copies_at_peak = 3.0;
  loss_parallel.unfused_loss_tp_backward_fp32_copies_at_peak = 4.0;
  // At tp 1 the tp counts change nothing.
  EXPECT_DOUBLE_EQ(estimateMemory(whole, whole_logits).peak().activations,
                   estimateMemory(whole, loss_parallel).peak().activations);
  // At tp 2 the backward's peak is 16 bytes per logit where the defaults' (1 and 1) is 6
  // (the kept fp32 copy and the 16-bit gradient): 10 bytes more per logit on the rank.
  const double logits = 8192.0 * static_cast<double>(split.model.vocab_size) / 2.0;
  const double more = estimateMemory(split, loss_parallel).peak().activations -
                      estimateMemory(split, MemoryOptions{}).peak().activations;
  EXPECT_NEAR(more / (10.0 * logits), 1.0, 1e-9);
}

TEST(MemoryModel, Fp8WeightCacheHoldsATransposeOnlyWhereFp8GemmsAreTnOnly) {
  // The same plan on Hopper (TN-only FP8 GEMMs: weight and transpose cached, 2 bytes per
  // parameter) and on Blackwell (either layout: 1 byte), and in bf16 (no cache).
  const std::string plan = R"(model: llama3-8b
training: {seq_len: 4096, global_batch_size: 16, precision: PRECISION}
parallelism: {gpus: 8, tp: 2, pp: 1, zero: 1, sequence_parallel: true}
)";
  const auto weights = [&](const std::string& cluster, const std::string& precision) {
    std::string text = plan;
    text.replace(text.find("PRECISION"), 9, precision);
    const MemoryReport report = estimateMemory(loadShipped(text + "cluster: " + cluster + "\n"));
    return report.peak().weights / report.peak().parameters.total();
  };
  EXPECT_NEAR(weights("dgx-h100", "bf16"), 2.0, 1e-12);
  EXPECT_NEAR(weights("dgx-h100", "fp8"), 4.0, 1e-12);
  EXPECT_NEAR(weights("dgx-b200", "fp8"), 3.0, 1e-12);
  EXPECT_NEAR(weights("dgx-gb200", "fp8"), 3.0, 1e-12);
  EXPECT_NEAR(weights("dgx-b200", "bf16"), 2.0, 1e-12);
  // FP8 weights (fp8_param_gather) drop the 16-bit copy: the FP8 data and, on Hopper, its transpose.
  EXPECT_NEAR(weights("dgx-h100", "fp8, fp8_param_gather: true"), 2.0, 1e-12);
  EXPECT_NEAR(weights("dgx-b200", "fp8, fp8_param_gather: true"), 1.0, 1e-12);
}

TEST(MemoryModel, ShippedExperimentsFit) {
  for (const std::string name : {"gpt3-175b-selene", "llama3-405b-16k-h100", "llama3-8b-dgx-h100"}) {
    auto experiment = loadExperiment(name, kShippedPaths);
    ASSERT_TRUE(experiment.ok()) << experiment.error().toString();
    const MemoryReport report = estimateMemory(*experiment);
    EXPECT_TRUE(report.fits()) << name << ": " << report.peakBytes() / units::kGiB << " GiB";
    EXPECT_EQ(report.stages.size(), static_cast<std::size_t>(experiment->plan.pp));
  }
}

TEST(MemoryModel, UnevenStagesUseTheirOwnLayerCounts) {
  auto experiment = loadExperiment("llama3-405b-16k-h100", kShippedPaths);
  ASSERT_TRUE(experiment.ok()) << experiment.error().toString();
  const MemoryReport report = estimateMemory(*experiment);
  EXPECT_EQ(report.stages.front().layers, 7);
  EXPECT_EQ(report.stages[1].layers, 8);
  EXPECT_EQ(report.stages.back().layers, 7);
  // Interleaved with 16 micro-batches over 16 stages: the warm-up covers every micro-batch, so
  // each stage holds all 16 x 4 chunks.
  EXPECT_EQ(report.stages.front().in_flight, 64);
  EXPECT_EQ(report.stages.back().in_flight, 64);
  // Plain 1F1B: stage i holds pp - i micro-batches.
  auto plain = loadExperiment("llama3-405b-16k-h100", kShippedPaths, {parseOverride("parallelism.virtual_stages=1")});
  ASSERT_TRUE(plain.ok()) << plain.error().toString();
  const MemoryReport plain_report = estimateMemory(*plain);
  EXPECT_EQ(plain_report.stages.front().in_flight, 16);
  EXPECT_EQ(plain_report.stages.back().in_flight, 1);
}

}  // namespace
}  // namespace trainsim::parallelism
