#include "parallelism/experiment_loader.h"

#include <gtest/gtest.h>

#include "tests/parallelism/test_support.h"

namespace trainsim::parallelism {
namespace {

using testing::dataDir;
using testing::errorText;
using testing::overrides;
using testing::testPaths;

Expected<Experiment> loadText(const std::string& text, const std::vector<std::string>& sets = {}) {
  return loadExperimentNode(parseConfigText(text, "bad.yaml"), testPaths(), overrides(sets));
}

// A valid experiment: llama3-8b (32 heads, 8 KV heads, 32 layers) on 4 x 8 A100s, tp 8 x pp 2 x dp 2.
constexpr const char* kValid = R"(model: llama3-8b
cluster: dgx-a100
training:
  seq_len: 4096
  global_batch_size: 64
parallelism:
  tp: 8
  pp: 2
)";

// --- Loading and defaults --------------------------------------------------------------------

TEST(ExperimentLoader, LoadsPreset) {
  auto experiment = loadExperiment("llama3-8b-dgx", testPaths());
  ASSERT_TRUE(experiment.ok()) << experiment.error().toString();
  EXPECT_EQ(experiment->name, "llama3-8b-on-dgx");
  EXPECT_EQ(experiment->source_file, dataDir() + "/configs/experiments/llama3-8b-dgx.yaml");
  EXPECT_EQ(experiment->model.name, "llama3-8b");
  EXPECT_EQ(experiment->cluster.name, "dgx-a100");
  EXPECT_EQ(experiment->cluster.totalGpus(), 32);
  EXPECT_EQ(experiment->cluster.gpu.key, "a100-sxm-80gb");
  EXPECT_EQ(experiment->training.seq_len, 8192);
  EXPECT_EQ(experiment->training.micro_batch_size, 2);
  EXPECT_EQ(experiment->training.tokens, 15e12);
  const ParallelPlan& plan = experiment->plan;
  EXPECT_EQ(plan.gpus, 32);
  EXPECT_EQ(plan.tp, 4);
  EXPECT_EQ(plan.pp, 2);
  EXPECT_EQ(plan.dp, 4);  // auto: 32 / (4 * 2 * 1)
  EXPECT_TRUE(plan.sequence_parallel);
  EXPECT_TRUE(plan.interleaved());
  EXPECT_EQ(plan.zero, 1);
  EXPECT_EQ(plan.recompute, Recompute::kSelective);
  EXPECT_EQ(plan.microbatches(experiment->training), 16);  // 128 / (4 * 2)
  EXPECT_EQ(plan.layersPerStage(experiment->model.layers), (std::vector<int64_t>{16, 16}));
}

TEST(ExperimentLoader, AppliesDefaults) {
  auto experiment = loadText(R"(model: gpt-tiny
cluster: dgx-a100
training:
  seq_len: 128
  global_batch_size: 64
)");
  ASSERT_TRUE(experiment.ok()) << experiment.error().toString();
  EXPECT_EQ(experiment->name, "bad");  // the file name
  const TrainingSpec& training = experiment->training;
  EXPECT_EQ(training.micro_batch_size, 1);
  EXPECT_EQ(training.precision, topology::Precision::kBf16);
  EXPECT_EQ(training.optimizer, Optimizer::kAdam);
  EXPECT_FALSE(training.tokens.has_value());
  EXPECT_TRUE(training.flash_attention);
  EXPECT_FALSE(training.fused_cross_entropy);
  const ParallelPlan& plan = experiment->plan;
  EXPECT_EQ(plan.gpus, 32);  // the whole cluster
  EXPECT_EQ(plan.tp, 1);
  EXPECT_EQ(plan.pp, 1);
  EXPECT_EQ(plan.dp, 32);
  EXPECT_EQ(plan.cp, 1);
  EXPECT_EQ(plan.ep, 1);
  EXPECT_FALSE(plan.sequence_parallel);
  EXPECT_EQ(plan.virtual_stages, 1);
  EXPECT_EQ(plan.schedule, PipelineSchedule::kOneFOneB);
  EXPECT_EQ(plan.zero, 0);
  EXPECT_EQ(plan.recompute, Recompute::kNone);
  EXPECT_TRUE(plan.overlap_grad_reduce);
  EXPECT_TRUE(plan.overlap_param_gather);
  EXPECT_FALSE(plan.ddp_bucket_size.has_value());
  EXPECT_FALSE(plan.first_stage_layers.has_value());
  EXPECT_EQ(plan.microbatches(training), 2);
}

TEST(ExperimentLoader, ComputesDpAutoFromGpus) {
  auto experiment = loadText(R"(model: llama3-8b
cluster: dgx-a100
training: {seq_len: 4096, global_batch_size: 64}
parallelism: {gpus: 16, tp: 4, pp: 2, dp: auto}
)");
  ASSERT_TRUE(experiment.ok()) << experiment.error().toString();
  EXPECT_EQ(experiment->plan.gpus, 16);
  EXPECT_EQ(experiment->plan.dp, 2);
  EXPECT_EQ(experiment->plan.microbatches(experiment->training), 32);
}

TEST(ExperimentLoader, EmptyParallelismSectionMeansDefaults) {
  auto experiment = loadText(
      "model: gpt-tiny\ncluster: dgx-a100\ntraining: {seq_len: 128, global_batch_size: 32}\n"
      "parallelism:\n");
  ASSERT_TRUE(experiment.ok()) << experiment.error().toString();
  EXPECT_EQ(experiment->plan.dp, 32);
}

TEST(ExperimentLoader, SequenceParallelIsANoOpAtTp1) {
  auto experiment = loadText(
      "model: gpt-tiny\ncluster: dgx-a100\ntraining: {seq_len: 127, global_batch_size: 32}\n"
      "parallelism: {sequence_parallel: true}\n");
  ASSERT_TRUE(experiment.ok()) << experiment.error().toString();
  EXPECT_FALSE(experiment->plan.sequence_parallel);
}

TEST(ExperimentLoader, InlineModelAndCluster) {
  auto experiment = loadText(R"(name: inline
model:
  architecture: llama
  layers: 4
  hidden_size: 512
  ffn_hidden_size: 1536
  attention_heads: 8
  kv_heads: 2
  vocab_size: 32000
cluster:
  gpu: h100-sxm
  nodes: 1
  gpus_per_node: 8
training: {seq_len: 2048, global_batch_size: 16, precision: fp8, optimizer: sgd}
parallelism: {tp: 2, pp: 2, schedule: gpipe, recompute: full, zero: 2}
)");
  ASSERT_TRUE(experiment.ok()) << experiment.error().toString();
  EXPECT_EQ(experiment->name, "inline");
  EXPECT_EQ(experiment->model.name, "model");
  EXPECT_EQ(experiment->model.source_file, "");
  EXPECT_EQ(experiment->model.kv_heads, 2);
  EXPECT_EQ(experiment->cluster.gpu.key, "h100-sxm");
  EXPECT_EQ(experiment->training.precision, topology::Precision::kFp8);
  EXPECT_EQ(experiment->training.optimizer, Optimizer::kSgd);
  EXPECT_EQ(experiment->plan.dp, 2);
  EXPECT_EQ(experiment->plan.schedule, PipelineSchedule::kGpipe);
  EXPECT_EQ(experiment->plan.recompute, Recompute::kFull);
  EXPECT_EQ(experiment->plan.zero, 2);
}

TEST(ExperimentLoader, ModelFromHuggingFaceConfig) {
  auto experiment = loadText("model: " + dataDir() +
                             "/hf/mixtral/config.json\ncluster: dgx-a100\n"
                             "training: {seq_len: 4096, global_batch_size: 64}\nparallelism: {tp: 4, ep: 8}\n");
  ASSERT_TRUE(experiment.ok()) << experiment.error().toString();
  EXPECT_EQ(experiment->model.name, "Mixtral-8x7B-v0.1");
  EXPECT_EQ(experiment->plan.dp, 8);
  EXPECT_EQ(experiment->plan.ep, 8);
}

TEST(ExperimentLoader, ModelPathRelativeToTheExperimentFile) {
  auto experiment = loadExperiment(dataDir() + "/experiments/relative_model.yaml", testPaths());
  ASSERT_TRUE(experiment.ok()) << experiment.error().toString();
  EXPECT_EQ(experiment->name, "relative_model");
  EXPECT_EQ(experiment->model.name, "gpt3-175b");
  EXPECT_EQ(experiment->plan.dp, 1);
}

TEST(ExperimentLoader, ClusterPathRelativeToTheExperimentFile) {
  auto experiment = loadExperiment(dataDir() + "/experiments/relative_cluster.yaml", testPaths());
  ASSERT_TRUE(experiment.ok()) << experiment.error().toString();
  EXPECT_EQ(experiment->cluster.name, "dgx-a100");
  EXPECT_EQ(experiment->plan.gpus, 32);
}

TEST(ExperimentLoader, UnevenFirstAndLastStages) {
  // Llama 3 405B: 126 layers on pp = 16, the first and last stage one layer short.
  auto experiment = loadText(R"(model:
  architecture: llama
  layers: 126
  hidden_size: 16384
  ffn_hidden_size: 53248
  attention_heads: 128
  kv_heads: 8
  vocab_size: 128256
cluster: {gpu: h100-sxm, nodes: 16, gpus_per_node: 8, inter_node: {nic_bandwidth_Gbps: 400}}
training: {seq_len: 8192, global_batch_size: 16}
parallelism: {tp: 8, pp: 16, first_stage_layers: 7, last_stage_layers: 7}
)");
  ASSERT_TRUE(experiment.ok()) << experiment.error().toString();
  std::vector<int64_t> expected(16, 8);
  expected.front() = 7;
  expected.back() = 7;
  EXPECT_EQ(experiment->plan.layersPerStage(126), expected);
  EXPECT_EQ(experiment->plan.dp, 1);
}

TEST(ExperimentLoader, UnevenFirstStageOnly) {
  auto experiment = loadText(std::string(kValid) + "  first_stage_layers: 2\n  last_stage_layers: 30\n");
  ASSERT_TRUE(experiment.ok()) << experiment.error().toString();
  EXPECT_EQ(experiment->plan.layersPerStage(32), (std::vector<int64_t>{2, 30}));
  auto first_only = loadText(R"(model: llama3-8b
cluster: dgx-a100
training: {seq_len: 4096, global_batch_size: 64}
parallelism: {tp: 8, pp: 4, first_stage_layers: 5}
)");
  ASSERT_TRUE(first_only.ok()) << first_only.error().toString();
  EXPECT_EQ(first_only->plan.layersPerStage(32), (std::vector<int64_t>{5, 9, 9, 9}));
}

// --- Overrides are applied before validation ---------------------------------------------------

TEST(ExperimentOverrides, FixAnInvalidPlan) {
  const std::string invalid = std::string(kValid) + "  dp: 3\n";
  EXPECT_FALSE(loadText(invalid).ok());
  auto experiment = loadText(invalid, {"parallelism.dp=auto", "parallelism.tp=4"});
  ASSERT_TRUE(experiment.ok()) << experiment.error().toString();
  EXPECT_EQ(experiment->plan.tp, 4);
  EXPECT_EQ(experiment->plan.dp, 4);
}

TEST(ExperimentOverrides, ReachReferencedModelAndClusterFiles) {
  auto experiment = loadText(kValid, {"model.layers=16", "cluster.nodes=8", "training.micro_batch_size=2"});
  ASSERT_TRUE(experiment.ok()) << experiment.error().toString();
  EXPECT_EQ(experiment->model.layers, 16);
  EXPECT_EQ(experiment->cluster.totalGpus(), 64);
  EXPECT_EQ(experiment->plan.dp, 4);  // auto, from the overridden cluster
  EXPECT_EQ(experiment->plan.microbatches(experiment->training), 8);
}

TEST(ExperimentOverrides, ReachInlineModelAndCluster) {
  auto experiment = loadText(R"(model: {layers: 4, hidden_size: 256, attention_heads: 8, vocab_size: 1000}
cluster: {gpu: a100-sxm-80gb, nodes: 1, gpus_per_node: 8}
training: {seq_len: 128, global_batch_size: 64}
)",
                             {"model.layers=8", "cluster.gpus_per_node=4"});
  ASSERT_TRUE(experiment.ok()) << experiment.error().toString();
  EXPECT_EQ(experiment->model.layers, 8);
  EXPECT_EQ(experiment->plan.dp, 4);
}

TEST(ExperimentOverrides, ReplaceTheModelReference) {
  // The replacement comes first, whatever the order on the command line.
  auto experiment = loadText(kValid, {"model.layers=8", "model=gpt-tiny"});
  ASSERT_TRUE(experiment.ok()) << experiment.error().toString();
  EXPECT_EQ(experiment->model.name, "gpt-tiny");
  EXPECT_EQ(experiment->model.layers, 8);
}

// --- Malformed experiments: the exact message and exit code 2 -----------------------------------

TEST(ExperimentErrors, UnknownTopLevelKey) {
  EXPECT_EQ(errorText(loadText("model: llama3-8b\ncluster: dgx-a100\ntraining: {seq_len: 1, global_batch_size: 1}\n"
                               "paralelism: {tp: 1}\n")),
            "bad.yaml:4:1: paralelism: unknown key (did you mean 'parallelism'?)");
}

TEST(ExperimentErrors, UnknownParallelismKey) {
  EXPECT_EQ(errorText(loadText(std::string(kValid) + "  tpp: 2\n")),
            "bad.yaml:9:3: parallelism.tpp: unknown key (did you mean 'tp'?)");
}

TEST(ExperimentErrors, TpNotANumber) {
  EXPECT_EQ(errorText(loadText("model: llama3-8b\ncluster: dgx-a100\ntraining: {seq_len: 1, global_batch_size: 1}\n"
                               "parallelism:\n  tp: eight\n")),
            "bad.yaml:5:7: parallelism.tp: expected a positive integer, found \"eight\"");
}

TEST(ExperimentErrors, TpZero) {
  EXPECT_EQ(errorText(loadText("model: llama3-8b\ncluster: dgx-a100\ntraining: {seq_len: 1, global_batch_size: 1}\n"
                               "parallelism:\n  tp: 0\n")),
            "bad.yaml:5:7: parallelism.tp: expected a positive integer, found \"0\"");
}

TEST(ExperimentLoader, DdpBucketSize) {
  auto experiment = loadText(
      "model: gpt-tiny\ncluster: dgx-a100\ntraining: {seq_len: 128, global_batch_size: 32}\n"
      "parallelism: {ddp_bucket_size: 4e9}\n");
  ASSERT_TRUE(experiment.ok()) << experiment.error().toString();
  EXPECT_EQ(experiment->plan.ddp_bucket_size, 4e9);
}

TEST(ExperimentLoader, FlashAttention) {
  auto experiment = loadText(
      "model: gpt-tiny\ncluster: dgx-a100\ntraining: {seq_len: 128, global_batch_size: 32, flash_attention: false}\n");
  ASSERT_TRUE(experiment.ok()) << experiment.error().toString();
  EXPECT_FALSE(experiment->training.flash_attention);
  experiment = loadText(kValid, {"training.flash_attention=false"});
  ASSERT_TRUE(experiment.ok()) << experiment.error().toString();
  EXPECT_FALSE(experiment->training.flash_attention);
}

TEST(ExperimentLoader, FusedCrossEntropy) {
  auto experiment = loadText(
      "model: gpt-tiny\ncluster: dgx-a100\ntraining: {seq_len: 128, global_batch_size: 32, fused_cross_entropy: "
      "true}\n");
  ASSERT_TRUE(experiment.ok()) << experiment.error().toString();
  EXPECT_TRUE(experiment->training.fused_cross_entropy);
  EXPECT_TRUE(kernelsFor(*experiment, {}).fused_cross_entropy);
  experiment = loadText(kValid, {"training.fused_cross_entropy=true"});
  ASSERT_TRUE(experiment.ok()) << experiment.error().toString();
  EXPECT_TRUE(experiment->training.fused_cross_entropy);
}

TEST(ExperimentLoader, GradReducePrecision) {
  auto experiment = loadText(kValid);
  ASSERT_TRUE(experiment.ok()) << experiment.error().toString();
  EXPECT_FALSE(experiment->training.grad_reduce_precision.has_value());  // the precision's default
  experiment = loadText(kValid, {"training.grad_reduce_precision=bf16"});
  ASSERT_TRUE(experiment.ok()) << experiment.error().toString();
  EXPECT_EQ(experiment->training.grad_reduce_precision, topology::Precision::kBf16);
  experiment = loadText(kValid, {"training.precision=fp16", "training.grad_reduce_precision=fp32"});
  ASSERT_TRUE(experiment.ok()) << experiment.error().toString();
  EXPECT_EQ(experiment->training.grad_reduce_precision, topology::Precision::kFp32);
}

TEST(ExperimentLoader, OptimizerStatePrecision) {
  auto experiment = loadText(kValid);
  ASSERT_TRUE(experiment.ok()) << experiment.error().toString();
  EXPECT_EQ(experiment->training.optimizer_state_precision, topology::Precision::kFp32);
  experiment = loadText(kValid, {"training.optimizer_state_precision=bf16"});
  ASSERT_TRUE(experiment.ok()) << experiment.error().toString();
  EXPECT_EQ(experiment->training.optimizer_state_precision, topology::Precision::kBf16);
  EXPECT_EQ(errorText(loadText(kValid, {"training.optimizer_state_precision=fp8"})),
            "--set training.optimizer_state_precision=fp8: training.optimizer_state_precision: expected fp32 "
            "or bf16, found \"fp8\"");
}

TEST(ExperimentLoader, Fp8ParamGatherNeedsFp8) {
  auto experiment = loadText(kValid);
  ASSERT_TRUE(experiment.ok()) << experiment.error().toString();
  EXPECT_FALSE(experiment->training.fp8_param_gather);
  experiment = loadText(kValid, {"cluster.gpu=h100-sxm", "training.precision=fp8", "training.fp8_param_gather=true"});
  ASSERT_TRUE(experiment.ok()) << experiment.error().toString();
  EXPECT_TRUE(experiment->training.fp8_param_gather);
  // The scaling recipe: delayed unless set, and only in an fp8 run.
  EXPECT_EQ(experiment->training.fp8_recipe, Fp8Recipe::kDelayed);
  experiment = loadText(kValid, {"cluster.gpu=h100-sxm", "training.precision=fp8", "training.fp8_recipe=current"});
  ASSERT_TRUE(experiment.ok()) << experiment.error().toString();
  EXPECT_EQ(experiment->training.fp8_recipe, Fp8Recipe::kCurrent);
  EXPECT_TRUE(kernelsFor(*experiment, {}).fp8_current_scaling);
  EXPECT_EQ(errorText(loadText(kValid, {"training.fp8_recipe=current"})),
            "--set training.fp8_recipe=current: training.fp8_recipe: an FP8 scaling recipe needs precision fp8, "
            "found precision bf16");
  EXPECT_EQ(errorText(loadText(kValid, {"cluster.gpu=h100-sxm", "training.precision=fp8", "training.fp8_recipe=mx"})),
            "--set training.fp8_recipe=mx: training.fp8_recipe: expected delayed, current, mxfp8 or blockwise, found "
            "\"mx\"");
  // The block recipes: scales inside the cast, both orientations written on any GPU.
  experiment = loadText(kValid, {"cluster.gpu=h100-sxm", "training.precision=fp8", "training.fp8_recipe=mxfp8"});
  ASSERT_TRUE(experiment.ok()) << experiment.error().toString();
  EXPECT_EQ(experiment->training.fp8_recipe, Fp8Recipe::kMxfp8);
  const FlopsOptions mxfp8 = kernelsFor(*experiment, {});
  EXPECT_TRUE(mxfp8.fp8_block_scaling && mxfp8.fp8_transposed_copies && !mxfp8.fp8_current_scaling);
  experiment = loadText(kValid, {"cluster.gpu=h100-sxm", "training.precision=fp8", "training.fp8_recipe=blockwise"});
  ASSERT_TRUE(experiment.ok()) << experiment.error().toString();
  EXPECT_EQ(experiment->training.fp8_recipe, Fp8Recipe::kBlockwise);
  EXPECT_TRUE(kernelsFor(*experiment, {}).fp8_block_scaling);
  // FP8 weights in a bf16 run are a contradiction, not a default to fall back from.
  EXPECT_EQ(errorText(loadText("model: llama3-8b\ncluster: dgx-a100\ntraining:\n  seq_len: 4096\n"
                               "  global_batch_size: 64\n  fp8_param_gather: true\nparallelism: {tp: 8}\n")),
            "bad.yaml:6:21: training.fp8_param_gather: FP8 parameters need precision fp8, found precision bf16");
}

TEST(ExperimentErrors, DdpBucketSizeNotPositive) {
  EXPECT_EQ(errorText(loadText("model: llama3-8b\ncluster: dgx-a100\ntraining: {seq_len: 1, global_batch_size: 1}\n"
                               "parallelism:\n  ddp_bucket_size: -1\n")),
            "bad.yaml:5:20: parallelism.ddp_bucket_size: expected a positive number, found \"-1\"");
}

TEST(ExperimentErrors, DpNeitherNumberNorAuto) {
  EXPECT_EQ(errorText(loadText(std::string(kValid) + "  dp: half\n")),
            "bad.yaml:9:7: parallelism.dp: expected a positive integer or auto, found \"half\"");
}

TEST(ExperimentErrors, ZeroStageOutOfRange) {
  EXPECT_EQ(errorText(loadText(std::string(kValid) + "  zero: 4\n")),
            "bad.yaml:9:9: parallelism.zero: expected 0, 1, 2 or 3, found \"4\"");
}

TEST(ExperimentErrors, UnknownSchedule) {
  EXPECT_EQ(errorText(loadText(std::string(kValid) + "  schedule: interleaved\n")),
            "bad.yaml:9:13: parallelism.schedule: expected gpipe, 1f1b, zero_bubble, zbv, dualpipev or dualpipe, found "
            "\"interleaved\"");
}

TEST(ExperimentErrors, UnknownRecompute) {
  EXPECT_EQ(errorText(loadText(std::string(kValid) + "  recompute: partial\n")),
            "bad.yaml:9:14: parallelism.recompute: expected none, selective, full or selective_op, found \"partial\"");
}

TEST(ExperimentErrors, SequenceParallelNotBoolean) {
  EXPECT_EQ(errorText(loadText(std::string(kValid) + "  sequence_parallel: maybe\n")),
            "bad.yaml:9:22: parallelism.sequence_parallel: expected true or false, found \"maybe\"");
}

TEST(ExperimentErrors, FirstStageLayersZero) {
  EXPECT_EQ(errorText(loadText(std::string(kValid) + "  first_stage_layers: 0\n")),
            "bad.yaml:9:23: parallelism.first_stage_layers: first_stage_layers = 0 leaves a pipeline stage without "
            "transformer layers; expected a positive integer (only zbv's and dualpipev's first and last model chunks "
            "may hold none)");
}

TEST(ExperimentErrors, UnknownPrecision) {
  EXPECT_EQ(errorText(loadText("model: llama3-8b\ncluster: dgx-a100\ntraining:\n  seq_len: 4096\n"
                               "  global_batch_size: 64\n  precision: int8\n")),
            "bad.yaml:6:14: training.precision: expected fp32, tf32, fp16, bf16 or fp8, found \"int8\"");
}

TEST(ExperimentErrors, UnknownOptimizer) {
  EXPECT_EQ(errorText(loadText("model: llama3-8b\ncluster: dgx-a100\ntraining:\n  seq_len: 4096\n"
                               "  global_batch_size: 64\n  optimizer: adamw\n")),
            "bad.yaml:6:14: training.optimizer: expected adam or sgd, found \"adamw\"");
}

TEST(ExperimentErrors, FlashAttentionNotBoolean) {
  EXPECT_EQ(errorText(loadText("model: llama3-8b\ncluster: dgx-a100\ntraining:\n  seq_len: 4096\n"
                               "  global_batch_size: 64\n  flash_attention: maybe\n")),
            "bad.yaml:6:20: training.flash_attention: expected true or false, found \"maybe\"");
}

TEST(ExperimentErrors, FusedCrossEntropyNotBoolean) {
  EXPECT_EQ(errorText(loadText("model: llama3-8b\ncluster: dgx-a100\ntraining:\n  seq_len: 4096\n"
                               "  global_batch_size: 64\n  fused_cross_entropy: 1.5\n")),
            "bad.yaml:6:24: training.fused_cross_entropy: expected true or false, found \"1.5\"");
}

TEST(ExperimentErrors, FlashAttentionMisspelt) {
  EXPECT_EQ(errorText(loadText("model: llama3-8b\ncluster: dgx-a100\ntraining:\n  seq_len: 4096\n"
                               "  global_batch_size: 64\n  flash_atention: false\n")),
            "bad.yaml:6:3: training.flash_atention: unknown key (did you mean 'flash_attention'?)");
}

TEST(ExperimentErrors, GradReducePrecisionUnknown) {
  EXPECT_EQ(errorText(loadText("model: llama3-8b\ncluster: dgx-a100\ntraining:\n  seq_len: 4096\n"
                               "  global_batch_size: 64\n  grad_reduce_precision: fp8\n")),
            "bad.yaml:6:26: training.grad_reduce_precision: expected fp32, bf16 or fp16, found \"fp8\"");
}

TEST(ExperimentErrors, GradReducePrecisionNotTheParametersType) {
  EXPECT_EQ(errorText(loadText("model: llama3-8b\ncluster: dgx-a100\ntraining:\n  seq_len: 4096\n"
                               "  global_batch_size: 64\n  grad_reduce_precision: fp16\n")),
            "bad.yaml:6:26: training.grad_reduce_precision: grad_reduce_precision fp16 does not go with precision "
            "bf16: expected fp32 or bf16 (main gradients are fp32 or the parameters' 16-bit type)");
  EXPECT_EQ(errorText(loadText("model: llama3-8b\ncluster: dgx-a100\ntraining:\n  seq_len: 4096\n"
                               "  global_batch_size: 64\n  precision: fp32\n  grad_reduce_precision: bf16\n")),
            "bad.yaml:7:26: training.grad_reduce_precision: grad_reduce_precision bf16 does not go with precision "
            "fp32: expected fp32 (main gradients are fp32 or the parameters' 16-bit type)");
}

TEST(ExperimentErrors, NegativeTokens) {
  EXPECT_EQ(errorText(loadText("model: llama3-8b\ncluster: dgx-a100\ntraining:\n  seq_len: 4096\n"
                               "  global_batch_size: 64\n  tokens: -5e9\n")),
            "bad.yaml:6:11: training.tokens: expected a positive number, found \"-5e9\"");
}

TEST(ExperimentErrors, MissingSeqLen) {
  EXPECT_EQ(errorText(loadText("model: llama3-8b\ncluster: dgx-a100\ntraining:\n  global_batch_size: 64\n")),
            "bad.yaml:4:3: training.seq_len: missing required key");
}

TEST(ExperimentErrors, MissingTrainingSection) {
  EXPECT_EQ(errorText(loadText("model: llama3-8b\ncluster: dgx-a100\n")),
            "bad.yaml:1:1: training: missing required key");
}

TEST(ExperimentErrors, MissingModel) {
  EXPECT_EQ(errorText(loadText("cluster: dgx-a100\ntraining: {seq_len: 1, global_batch_size: 1}\n")),
            "bad.yaml:1:1: model: missing required key");
}

TEST(ExperimentErrors, NotAMapping) {
  EXPECT_EQ(errorText(loadText("just text\n")),
            "bad.yaml:1:1: expected an experiment (a mapping with model, cluster, training and parallelism), found "
            "\"just text\"");
}

TEST(ExperimentErrors, UnknownModelPreset) {
  EXPECT_EQ(errorText(loadText("model: llama9\ncluster: dgx-a100\ntraining: {seq_len: 1, global_batch_size: 1}\n")),
            "bad.yaml:1:8: model: unknown model preset \"llama9\" (no " + dataDir() +
                "/configs/models/llama9.yaml); give a preset name or a file path");
}

TEST(ExperimentErrors, MissingModelFile) {
  EXPECT_EQ(errorText(loadText("model: nope/model.yaml\ncluster: dgx-a100\n"
                               "training: {seq_len: 1, global_batch_size: 1}\n")),
            "bad.yaml:1:8: model: cannot open model file \"nope/model.yaml\"");
}

TEST(ExperimentErrors, ModelIsAList) {
  EXPECT_EQ(errorText(loadText("model: [1, 2]\ncluster: dgx-a100\ntraining: {seq_len: 1, global_batch_size: 1}\n")),
            "bad.yaml:1:8: model: expected a model preset name, a path to a model file or config.json, or a mapping, "
            "found a list");
}

TEST(ExperimentErrors, InlineModelKvHeads) {
  EXPECT_EQ(errorText(loadText(R"(model:
  layers: 4
  hidden_size: 256
  attention_heads: 8
  kv_heads: 3
  vocab_size: 1000
cluster: dgx-a100
training: {seq_len: 128, global_batch_size: 64}
)")),
            "bad.yaml:5:13: model.kv_heads: expected a divisor of attention_heads (8), found \"3\"");
}

TEST(ExperimentErrors, InlineClusterError) {
  EXPECT_EQ(errorText(loadText("model: gpt-tiny\ncluster:\n  gpu: a100-sxm-80gb\n  nodes: many\n  gpus_per_node: 8\n"
                               "training: {seq_len: 128, global_batch_size: 64}\n")),
            "bad.yaml:4:10: cluster.nodes: expected a positive integer, found \"many\"");
}

TEST(ExperimentErrors, UnknownExperimentPreset) {
  EXPECT_EQ(errorText(loadExperiment("nope", testPaths())),
            "nope: unknown experiment preset (no " + dataDir() +
                "/configs/experiments/nope.yaml); give a preset name or a file path");
}

// --- Malformed overrides: the error points at the command line ---------------------------------

TEST(ExperimentOverrideErrors, UnknownTopLevelKey) {
  EXPECT_EQ(errorText(loadText(kValid, {"parallelsm.tp=4"})),
            "--set parallelsm.tp=4: parallelsm: unknown key (did you mean 'parallelism'?)");
}

TEST(ExperimentOverrideErrors, UnknownTopLevelKeyWithoutSuggestion) {
  EXPECT_EQ(errorText(loadText(kValid, {"optimizer=adam"})),
            "--set optimizer=adam: optimizer: unknown key; expected one of name, description, model, cluster, "
            "training or parallelism");
}

TEST(ExperimentOverrideErrors, UnknownSectionKey) {
  EXPECT_EQ(errorText(loadText(kValid, {"training.seqlen=4"})),
            "--set training.seqlen=4: training.seqlen: unknown key (did you mean 'seq_len'?)");
}

TEST(ExperimentOverrideErrors, BadValue) {
  EXPECT_EQ(errorText(loadText(kValid, {"parallelism.tp=abc"})),
            "--set parallelism.tp=abc: parallelism.tp: expected a positive integer, found \"abc\"");
}

TEST(ExperimentOverrideErrors, BadValueInReferencedModel) {
  EXPECT_EQ(errorText(loadText(kValid, {"model.layers=abc"})),
            "--set model.layers=abc: layers: expected a positive integer, found \"abc\"");
}

TEST(ExperimentOverrideErrors, UnknownKeyInReferencedModel) {
  EXPECT_EQ(errorText(loadText(kValid, {"model.layer=4"})),
            "--set model.layer=4: layer: unknown key (did you mean 'layers'?)");
}

TEST(ExperimentOverrideErrors, BadValueInReferencedCluster) {
  EXPECT_EQ(errorText(loadText(kValid, {"cluster.nodes=abc"})),
            "--set cluster.nodes=abc: nodes: expected a positive integer, found \"abc\"");
}

TEST(ExperimentOverrideErrors, UnknownModelReplacement) {
  EXPECT_EQ(errorText(loadText(kValid, {"model=llama9"})),
            "--set model=llama9: model: unknown model preset \"llama9\" (no " + dataDir() +
                "/configs/models/llama9.yaml); give a preset name or a file path");
}

TEST(ExperimentOverrideErrors, OverrideMakesThePlanInvalid) {
  EXPECT_EQ(errorText(loadText(kValid, {"parallelism.tp=3"})),
            "--set parallelism.tp=3: parallelism.tp: tp = 3 does not divide attention_heads = 32; tp values that fit "
            "this model: 1, 2, 4 or 8");
}

TEST(ExperimentOverrideErrors, OverrideOfReferencedModelMakesThePlanInvalid) {
  // The model file is fine, the override makes 30 layers that pp = 4 cannot split; the error
  // names the key to change in the experiment (pp), at its position.
  EXPECT_EQ(errorText(loadText(kValid, {"model.layers=30", "parallelism.pp=4", "parallelism.tp=4"})),
            "--set parallelism.pp=4: parallelism.pp: pp = 4 does not divide layers = 30; use pp = 1, 2, 3, 5, 6, 10, "
            "15 or 30, or set first_stage_layers / last_stage_layers for an uneven split");
}

// --- Bounds and YAML strictness (docs/input-robustness-audit.md items 2 to 5 and 11) ------

TEST(ExperimentBounds, TrainingSizesTheSimulatorCannotRepresent) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"training.seq_len=1e12",
       "--set training.seq_len=1e12: training.seq_len: expected an integer between 1 and 16777216, found \"1e12\""},
      // global_batch_size x seq_len used to overflow int64 (0 tokens/s, exit 0).
      {"training.global_batch_size=9007199254740992",
       "--set training.global_batch_size=9007199254740992: training.global_batch_size: expected an integer between "
       "1 and 16777216, found \"9007199254740992\""},
      {"training.global_batch_size=1e15",
       "--set training.global_batch_size=1e15: training.global_batch_size: expected an integer between 1 and "
       "16777216, found \"1e15\""},
      {"training.micro_batch_size=1e15",
       "--set training.micro_batch_size=1e15: training.micro_batch_size: expected an integer between 1 and "
       "16777216, found \"1e15\""},
      {"training.tokens=1e300",
       "--set training.tokens=1e300: training.tokens: expected a number between 1 and 1e18, found \"1e300\""},
      {"parallelism.ddp_bucket_size=100",
       "--set parallelism.ddp_bucket_size=100: parallelism.ddp_bucket_size: expected a number between 1000000 and "
       "1e15, found \"100\""},
  };
  for (const auto& [set, expected] : cases) EXPECT_EQ(errorText(loadText(kValid, {set})), expected) << set;
}

TEST(ExperimentBounds, ModelAndClusterSizesReachTheirFiles) {
  const std::vector<std::vector<std::string>> sets = {
      {"model.layers=1e6"},
      {"model.vocab_size=1e15"},
      {"model.hidden_size=1073741824"},
      {"model=mixtral-8x7b", "model.moe.experts=1e9"},
      {"cluster.nodes=1250000"},
      {"cluster.inter_node.latency_us=1e12"},
  };
  const std::vector<std::string> expected = {
      "--set model.layers=1e6: layers: expected an integer between 1 and 10000, found \"1e6\"",
      "--set model.vocab_size=1e15: vocab_size: expected an integer between 1 and 16777216, found \"1e15\"",
      "--set model.hidden_size=1073741824: hidden_size: expected an integer between 1 and 1048576, found "
      "\"1073741824\"",
      "--set model.moe.experts=1e9: moe.experts: expected an integer between 1 and 65536, found \"1e9\"",
      "--set cluster.nodes=1250000: nodes: expected an integer between 1 and 1048576, found \"1250000\"",
      "--set cluster.inter_node.latency_us=1e12: inter_node.latency_us: expected a number between 0 and 100000, "
      "found \"1e12\"",
  };
  for (std::size_t i = 0; i < sets.size(); ++i) EXPECT_EQ(errorText(loadText(kValid, sets[i])), expected[i]);
}

TEST(ExperimentBounds, IterationTooLongForTheClock) {
  // Each size within its bounds, but a 16M-token context makes an iteration of years.
  const std::string text = errorText(loadText(kValid, {"training.seq_len=16777216"}));
  EXPECT_EQ(text.rfind("bad.yaml:5:22: training.global_batch_size: one iteration would take at least ", 0), 0u) << text;
  EXPECT_NE(text.find("more than the 11.6 days the simulator's clock accepts per iteration"), std::string::npos);
}

TEST(ExperimentBounds, TooManyGradientBuckets) {
  // 10,000 layers over 16 GPUs: about 1.4e11 parameters per GPU, 140,000 buckets of 1M.
  const std::string text = errorText(loadText(kValid, {"model.layers=10000", "parallelism.ddp_bucket_size=1e6"}));
  EXPECT_EQ(text.rfind("--set parallelism.ddp_bucket_size=1e6: parallelism.ddp_bucket_size: ddp_bucket_size = "
                       "1000000 cuts a GPU's ",
                       0),
            0u)
      << text;
  EXPECT_NE(text.find("the simulator builds at most 10000: set ddp_bucket_size to at least "), std::string::npos);
  // Megatron-Core's default (40M) gives that model about 3,500 buckets per GPU: fine.
  auto experiment = loadText(kValid, {"model.layers=10000"});
  EXPECT_TRUE(experiment.ok()) << experiment.error().toString();
}

// Parsing and loading together: YAML problems are found while parsing.
Expected<Experiment> parseAndLoad(const std::string& text, const std::vector<std::string>& sets = {}) {
  return catchInputErrors([&] { return valueOrThrow(loadText(text, sets)); });
}

TEST(ExperimentYaml, DuplicateKeyIsAnError) {
  EXPECT_EQ(errorText(parseAndLoad(std::string(kValid) + "  tp: 4\n")),
            "bad.yaml:9:3: parallelism.tp: duplicate key \"tp\" (first at line 7); a mapping holds each key once");
  EXPECT_EQ(errorText(parseAndLoad(kValid, {"parallelism={tp: 2, tp: 3}"})),
            "--set parallelism={tp: 2, tp: 3}: parallelism.tp: duplicate key \"tp\" (first at column 2); a mapping "
            "holds each key once");
}

TEST(ExperimentYaml, SecondDocumentIsAnError) {
  EXPECT_EQ(errorText(parseAndLoad(std::string(kValid) + "---\nparallelism: {tp: 4}\n")),
            "bad.yaml:9:1: a second YAML document starts here; a config file holds one document (remove the --- "
            "line and what follows it)");
}

TEST(ExperimentYaml, EmptyValueIsReportedAtItsKey) {
  EXPECT_EQ(
      errorText(parseAndLoad("model: llama3-8b\ncluster: dgx-a100\ntraining:\n  seq_len:\n  global_batch_size: 64\n")),
      "bad.yaml:4:3: training.seq_len: expected a positive integer, found nothing");
}

TEST(ExperimentYaml, UnclosedQuoteIsASyntaxError) {
  EXPECT_EQ(errorText(parseAndLoad("model: \"llama3-8b\ncluster: dgx-a100\ntraining:\n  seq_len: 4096\n  "
                                   "global_batch_size: 64\n")),
            "bad.yaml:1:8: model: invalid YAML: unclosed quote (the string that starts here has no closing \")");
}

}  // namespace
}  // namespace trainsim::parallelism
