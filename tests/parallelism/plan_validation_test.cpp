#include "parallelism/plan_validation.h"

#include <gtest/gtest.h>

#include "parallelism/experiment_loader.h"
#include "tests/parallelism/test_support.h"

namespace trainsim::parallelism {
namespace {

using testing::errorText;
using testing::testPaths;

// An experiment on dgx-a100 (4 nodes x 8 A100, 32 GPUs) whose `parallelism:` lines start on
// line 4 (its first key sits at 4:3), followed by the training section.
Expected<Experiment> loadPlan(const std::string& model, const std::string& training, const std::string& plan_lines,
                              const std::string& cluster = "dgx-a100") {
  const std::string text =
      "model: " + model + "\ncluster: " + cluster + "\nparallelism:\n" + plan_lines + "training: " + training + "\n";
  return loadExperimentNode(parseConfigText(text, "plan.yaml"), testPaths());
}

constexpr const char* kTraining = "{seq_len: 4096, global_batch_size: 64}";

// --- Each rule, through the experiment loader: exact message at the key's position --------------

TEST(PlanValidation, GpusBeyondTheCluster) {
  EXPECT_EQ(errorText(loadPlan("llama3-8b", kTraining, "  gpus: 64\n")),
            "plan.yaml:4:9: parallelism.gpus: gpus = 64 but the cluster has 32 GPUs (4 nodes x 8 per node); lower "
            "gpus or add nodes");
}

TEST(PlanValidation, ExplicitDpDoesNotMatchGpus) {
  EXPECT_EQ(errorText(loadPlan("llama3-8b", kTraining, "  tp: 8\n  pp: 2\n  dp: 4\n")),
            "plan.yaml:6:7: parallelism.dp: tp x pp x cp x dp = 8 x 2 x 1 x 4 = 64 but gpus = 32 (the whole cluster; "
            "set parallelism.gpus to use fewer); use dp: 2 or dp: auto");
}

TEST(PlanValidation, ExplicitDpWithNoFittingValue) {
  EXPECT_EQ(errorText(loadPlan("llama3-8b", kTraining, "  gpus: 24\n  tp: 8\n  pp: 2\n  dp: 1\n")),
            "plan.yaml:7:7: parallelism.dp: tp x pp x cp x dp = 8 x 2 x 1 x 1 = 16 but gpus = 24; no dp fits, because "
            "tp x pp x cp = 16 does not divide 24");
}

TEST(PlanValidation, DpAutoHasNoWholeValue) {
  // dp is left to its default, so the error sits at the parallelism mapping.
  EXPECT_EQ(
      errorText(loadPlan("{layers: 24, hidden_size: 256, attention_heads: 8, vocab_size: 1000}", kTraining,
                         "  tp: 8\n  pp: 3\n")),
      "plan.yaml:4:3: parallelism.dp: dp: auto needs tp x pp x cp = 8 x 3 x 1 = 24 to divide gpus = 32 (the whole "
      "cluster; set parallelism.gpus to use fewer); choose tp, pp and cp whose product divides 32");
}

TEST(PlanValidation, ModelFitComesBeforeDpAuto) {
  // pp = 3 leaves no whole dp on 32 GPUs, but it could never split 32 layers either: that is the error.
  EXPECT_EQ(errorText(loadPlan("llama3-8b", kTraining, "  tp: 8\n  pp: 3\n")),
            "plan.yaml:5:7: parallelism.pp: pp = 3 does not divide layers = 32; use pp = 1, 2, 4, 8, 16 or 32, or set "
            "first_stage_layers / last_stage_layers for an uneven split");
}

TEST(PlanValidation, TpMustDivideHeads) {
  EXPECT_EQ(errorText(loadPlan("{layers: 4, hidden_size: 768, attention_heads: 12, vocab_size: 1000}", kTraining,
                               "  tp: 8\n")),
            "plan.yaml:4:7: parallelism.tp: tp = 8 does not divide attention_heads = 12; tp values that fit this "
            "model: 1, 2, 3, 4, 6 or 12");
}

TEST(PlanValidation, TpMustDivideKvHeads) {
  EXPECT_EQ(errorText(loadPlan("llama3-8b", kTraining, "  tp: 16\n")),
            "plan.yaml:4:7: parallelism.tp: tp = 16 does not divide kv_heads = 8; tp values that fit this model: 1, 2, "
            "4 or 8");
}

TEST(PlanValidation, TpMustDivideFfn) {
  EXPECT_EQ(errorText(loadPlan("{layers: 4, hidden_size: 256, ffn_hidden_size: 1020, attention_heads: 8, "
                               "vocab_size: 1000}",
                               kTraining, "  tp: 8\n")),
            "plan.yaml:4:7: parallelism.tp: tp = 8 does not divide ffn_hidden_size = 1020; tp values that fit this "
            "model: 1, 2 or 4");
}

TEST(PlanValidation, PpMustDivideLayers) {
  EXPECT_EQ(errorText(loadPlan("llama3-8b", kTraining, "  gpus: 24\n  tp: 8\n  pp: 3\n")),
            "plan.yaml:6:7: parallelism.pp: pp = 3 does not divide layers = 32; use pp = 1, 2, 4, 8 or 16, or set "
            "first_stage_layers / last_stage_layers for an uneven split");
}

TEST(PlanValidation, VirtualStagesNeedPipeline) {
  EXPECT_EQ(errorText(loadPlan("llama3-8b", kTraining, "  tp: 8\n  virtual_stages: 2\n")),
            "plan.yaml:5:19: parallelism.virtual_stages: virtual_stages = 2 (interleaved 1F1B) needs pp > 1");
}

TEST(PlanValidation, VirtualStagesNeed1F1B) {
  EXPECT_EQ(errorText(loadPlan("llama3-8b", kTraining, "  tp: 8\n  pp: 2\n  virtual_stages: 2\n  schedule: gpipe\n")),
            "plan.yaml:7:13: parallelism.schedule: gpipe cannot interleave model chunks; virtual_stages = 2 needs "
            "schedule: 1f1b");
}

TEST(PlanValidation, VirtualStagesMustDivideStageLayers) {
  EXPECT_EQ(errorText(loadPlan("llama3-8b", kTraining, "  tp: 8\n  pp: 2\n  virtual_stages: 3\n")),
            "plan.yaml:6:19: parallelism.virtual_stages: virtual_stages = 3 does not divide the 16 layers of each "
            "pipeline stage (layers = 32, pp = 2); use virtual_stages = 1, 2, 4, 8 or 16");
}

TEST(PlanValidation, InterleavingNeedsMicrobatchesMultipleOfPp) {
  EXPECT_EQ(errorText(loadPlan("llama3-8b", "{seq_len: 4096, global_batch_size: 6}",
                               "  tp: 8\n  pp: 4\n  virtual_stages: 2\n")),
            "plan.yaml:6:19: parallelism.virtual_stages: interleaved 1F1B (virtual_stages = 2) needs the number of "
            "microbatches, global_batch_size / (dp x micro_batch_size) = 6, to be a multiple of pp = 4 (a "
            "Megatron-LM requirement)");
}

TEST(PlanValidation, GlobalBatchDivisibleByDpTimesMicroBatch) {
  EXPECT_EQ(errorText(loadPlan("llama3-8b", "\n  seq_len: 4096\n  global_batch_size: 63\n  micro_batch_size: 2",
                               "  tp: 8\n  pp: 2\n")),
            "plan.yaml:8:22: training.global_batch_size: global_batch_size = 63 is not divisible by dp x "
            "micro_batch_size = 2 x 2 = 4; use a multiple of 4, e.g. 60 or 64");
}

TEST(PlanValidation, GlobalBatchSmallerThanOneStep) {
  EXPECT_EQ(errorText(loadPlan("gpt-tiny", "{seq_len: 128, global_batch_size: 16}", "  dp: 32\n")),
            "plan.yaml:5:45: training.global_batch_size: global_batch_size = 16 is not divisible by dp x "
            "micro_batch_size = 32 x 1 = 32; use a multiple of 32, e.g. 32");
}

TEST(PlanValidation, ExpertParallelNeedsMoe) {
  EXPECT_EQ(errorText(loadPlan("llama3-8b", kTraining, "  tp: 8\n  ep: 2\n")),
            "plan.yaml:5:7: parallelism.ep: ep = 2 needs a mixture-of-experts model; llama3-8b is dense (it has no moe "
            "section)");
}

TEST(PlanValidation, ExpertParallelMustDivideExperts) {
  EXPECT_EQ(errorText(loadPlan("mixtral-8x7b", kTraining, "  tp: 4\n  ep: 3\n")),
            "plan.yaml:5:7: parallelism.ep: ep = 3 does not divide moe.experts = 8; ep values that fit: 1, 2, 4 or 8");
}

TEST(PlanValidation, ExpertParallelMustDivideDpTimesCp) {
  EXPECT_EQ(errorText(loadPlan("mixtral-8x7b", kTraining, "  tp: 8\n  pp: 2\n  ep: 8\n")),
            "plan.yaml:6:7: parallelism.ep: ep = 8 does not divide dp x cp = 2 x 1 = 2 (expert-parallel groups are "
            "formed from data- and context-parallel ranks, as in Megatron-Core); ep values that fit: 1 or 2");
}

TEST(PlanValidation, ContextParallelNeedsTwoChunksPerRank) {
  EXPECT_EQ(errorText(loadPlan("llama3-8b", "{seq_len: 4100, global_batch_size: 64}", "  tp: 8\n  cp: 4\n")),
            "plan.yaml:5:7: parallelism.cp: seq_len = 4100 is not divisible by 2 x cp = 8 (load-balanced ring "
            "attention cuts each sequence into 2 x cp chunks)");
}

TEST(PlanValidation, SequenceParallelSplitsTheSequence) {
  EXPECT_EQ(errorText(loadPlan("llama3-8b", "{seq_len: 4100, global_batch_size: 64}",
                               "  tp: 8\n  sequence_parallel: true\n")),
            "plan.yaml:5:22: parallelism.sequence_parallel: sequence_parallel splits each sequence over tp x cp = 8 x "
            "1 = 8 ranks, but seq_len = 4100 is not divisible by 8");
}

TEST(PlanValidation, ZeroThreeWithPipeline) {
  EXPECT_EQ(errorText(loadPlan("llama3-8b", kTraining, "  tp: 8\n  pp: 2\n  zero: 3\n")),
            "plan.yaml:6:9: parallelism.zero: zero 3 (sharded parameters) with pipeline parallelism (pp = 2) is not "
            "supported by Megatron-LM or DeepSpeed; use zero 1 or 2, pp = 1, or training.zero3.unit: block (PyTorch "
            "FSDP with torch.distributed.pipelining, as torchtitan runs it)");
}

TEST(PlanValidation, PrecisionTheGpuLacks) {
  EXPECT_EQ(
      errorText(loadPlan("llama3-8b", "\n  seq_len: 4096\n  global_batch_size: 64\n  precision: fp8", "  tp: 8\n")),
      "plan.yaml:8:14: training.precision: a100-sxm-80gb has no fp8 support; use bf16 or fp16");
}

TEST(PlanValidation, DefaultPrecisionTheGpuLacks) {
  // bf16 is the default; V100 has no bf16, and the error points at the training section.
  EXPECT_EQ(errorText(loadPlan("gpt-tiny", "\n  seq_len: 128\n  global_batch_size: 64", "  tp: 8\n", "dgx-v100")),
            "plan.yaml:6:3: training.precision: v100-sxm2-32gb has no bf16 support; use fp16");
}

TEST(PlanValidation, UnevenStagesNeedPipeline) {
  EXPECT_EQ(errorText(loadPlan("llama3-8b", kTraining, "  tp: 8\n  last_stage_layers: 4\n")),
            "plan.yaml:5:22: parallelism.last_stage_layers: last_stage_layers needs pp > 1: with one pipeline stage "
            "that stage holds every layer");
}

TEST(PlanValidation, UnevenStagesMustSplitTheRestEvenly) {
  EXPECT_EQ(errorText(loadPlan("llama3-8b", kTraining, "  tp: 8\n  pp: 4\n  first_stage_layers: 7\n")),
            "plan.yaml:6:23: parallelism.first_stage_layers: the 25 layers left after first_stage_layers = 7 do not "
            "split evenly over the other 3 stages; make layers minus first_stage_layers a multiple of 3");
}

TEST(PlanValidation, UnevenStagesLeaveTooFewLayers) {
  EXPECT_EQ(errorText(loadPlan("llama3-8b", kTraining,
                               "  tp: 8\n  pp: 4\n  first_stage_layers: 30\n  last_stage_layers: 1\n")),
            "plan.yaml:6:23: parallelism.first_stage_layers: first_stage_layers + last_stage_layers = 30 + 1 = 31 "
            "leaves 1 of the 32 layers for the other 2 stages; every stage needs at least one layer");
}

TEST(PlanValidation, UnevenStagesWithTwoStagesMustCoverAllLayers) {
  EXPECT_EQ(errorText(loadPlan("llama3-8b", kTraining,
                               "  tp: 8\n  pp: 2\n  first_stage_layers: 10\n  last_stage_layers: 20\n")),
            "plan.yaml:6:23: parallelism.first_stage_layers: first_stage_layers + last_stage_layers = 10 + 20 = 30 "
            "must equal layers = 32 when pp = 2 (no stages are left between the first and the last)");
}

TEST(PlanValidation, UnevenStagesWithInterleaving) {
  // An uneven first stage gives its first chunk the layer it lacks (5 = 2 + 3 on two chunks).
  EXPECT_EQ(errorText(loadPlan("llama3-8b", kTraining,
                               "  tp: 8\n  pp: 4\n  virtual_stages: 2\n  first_stage_layers: 5\n  "
                               "last_stage_layers: 3\n")),
            "<no error>");
  // Every chunk needs a layer.
  EXPECT_EQ(errorText(loadPlan("llama3-8b", kTraining,
                               "  tp: 8\n  pp: 4\n  virtual_stages: 2\n  first_stage_layers: 1\n  "
                               "last_stage_layers: 1\n")),
            "plan.yaml:7:23: parallelism.first_stage_layers: first_stage_layers = 1 leaves a model chunk without a "
            "layer: it needs at least virtual_stages = 2");
}

TEST(PlanValidation, UnevenChunksSitNextToTheEmbeddingAndTheLoss) {
  // Llama 3.1 405B as Megatron-Bridge runs it: 126 layers, pp 8, vp 8, 15 + 6 x 16 + 15.
  ParallelPlan plan;
  plan.pp = 8;
  plan.virtual_stages = 8;
  plan.first_stage_layers = 15;
  plan.last_stage_layers = 15;
  EXPECT_EQ(plan.layersOfChunk(126, 0, 0), 1);
  for (int64_t chunk = 1; chunk < 8; ++chunk) EXPECT_EQ(plan.layersOfChunk(126, 0, chunk), 2) << chunk;
  for (int64_t chunk = 0; chunk < 8; ++chunk) EXPECT_EQ(plan.layersOfChunk(126, 3, chunk), 2) << chunk;
  for (int64_t chunk = 0; chunk < 7; ++chunk) EXPECT_EQ(plan.layersOfChunk(126, 7, chunk), 2) << chunk;
  EXPECT_EQ(plan.layersOfChunk(126, 7, 7), 1);
  int64_t total = 0;
  for (int64_t stage = 0; stage < 8; ++stage) {
    for (int64_t chunk = 0; chunk < 8; ++chunk) total += plan.layersOfChunk(126, stage, chunk);
  }
  EXPECT_EQ(total, 126);
  EXPECT_EQ(plan.unevenSplitText(126), "15 + 6 x 16 + 15");
  plan.pp = 2;
  plan.virtual_stages = 1;
  plan.first_stage_layers = 64;
  plan.last_stage_layers = 62;
  EXPECT_EQ(plan.unevenSplitText(126), "64 + 62");
  plan.first_stage_layers.reset();
  plan.last_stage_layers.reset();
  EXPECT_EQ(plan.unevenSplitText(126), "");  // even
}

// --- The rules on plans built in code (as `sweep` does) --------------------------------------

ModelSpec llama8b() {
  ModelSpec model;
  model.name = "llama3-8b";
  model.architecture = Architecture::kLlama;
  model.layers = 32;
  model.hidden_size = 4096;
  model.ffn_hidden_size = 14336;
  model.attention_heads = 32;
  model.kv_heads = 8;
  model.head_dim = 128;
  model.vocab_size = 128256;
  return model;
}

topology::ClusterSpec a100Cluster(int nodes) {
  topology::ClusterSpec cluster;
  cluster.name = "test";
  cluster.gpu.key = "a100-sxm-80gb";
  cluster.gpu.peak_tflops[static_cast<std::size_t>(topology::Precision::kBf16)] = 312.0;
  cluster.nodes = nodes;
  cluster.gpus_per_node = 8;
  return cluster;
}

TrainingSpec training(int64_t global_batch) {
  TrainingSpec spec;
  spec.seq_len = 4096;
  spec.global_batch_size = global_batch;
  return spec;
}

TEST(CheckPlan, ValidPlanHasNoIssues) {
  ParallelPlan plan;
  plan.tp = 8;
  plan.pp = 4;
  plan.virtual_stages = 4;
  ASSERT_EQ(resolvePlan(plan, a100Cluster(8)), std::nullopt);
  EXPECT_EQ(plan.gpus, 64);
  EXPECT_EQ(plan.dp, 2);
  EXPECT_TRUE(checkPlan(llama8b(), a100Cluster(8), training(512), plan).empty());
}

TEST(CheckPlan, ReportsEveryBrokenRuleInOrder) {
  ParallelPlan plan;
  plan.gpus = 64;
  plan.tp = 16;
  plan.pp = 2;
  plan.dp = 2;
  plan.ep = 2;
  plan.zero = 3;
  const auto issues = checkPlan(llama8b(), a100Cluster(8), training(101), plan);
  ASSERT_EQ(issues.size(), 4u);
  EXPECT_EQ(issues[0].key_path, "parallelism.tp");
  EXPECT_EQ(issues[1].key_path, "training.global_batch_size");
  EXPECT_EQ(issues[2].key_path, "parallelism.ep");
  EXPECT_EQ(issues[3].key_path, "parallelism.zero");
}

TEST(CheckPlan, UnresolvedPlanIsReported) {
  ParallelPlan plan;  // gpus and dp still auto
  const auto issues = checkPlan(llama8b(), a100Cluster(1), training(64), plan);
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0],
            (PlanIssue{"parallelism.gpus", "expected a positive integer, found \"0\" (is the plan resolved?)"}));
}

TEST(CheckPlan, AbsurdDegreesDoNotOverflow) {
  ParallelPlan plan;
  plan.gpus = 8;
  plan.tp = int64_t{1} << 40;
  plan.pp = int64_t{1} << 40;
  plan.dp = 1;
  const auto issues = checkPlan(llama8b(), a100Cluster(1), training(64), plan);
  ASSERT_EQ(issues.size(), 3u);
  EXPECT_EQ(issues[0].key_path, "parallelism.tp");
  EXPECT_EQ(issues[1].key_path, "parallelism.pp");
  EXPECT_EQ(issues[2].message,
            "tp x pp x cp x dp = 1099511627776 x 1099511627776 x 1 x 1 = 9223372036854775807 but gpus = 8; no dp fits, "
            "because tp x pp x cp = 9223372036854775807 does not divide 8");
  ParallelPlan automatic;
  automatic.tp = int64_t{1} << 40;
  automatic.pp = int64_t{1} << 40;
  auto issue = resolvePlan(automatic, a100Cluster(1));
  ASSERT_TRUE(issue.has_value());
  EXPECT_EQ(issue->key_path, "parallelism.dp");
}

TEST(CheckPlan, InlineGpuWithoutAName) {
  topology::ClusterSpec cluster = a100Cluster(1);
  cluster.gpu.key = "inline";
  cluster.gpu.name = "inline";
  TrainingSpec spec = training(64);
  spec.precision = topology::Precision::kFp8;
  ParallelPlan plan;
  ASSERT_EQ(resolvePlan(plan, cluster), std::nullopt);
  const auto issues = checkPlan(llama8b(), cluster, spec, plan);
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].message, "the cluster's GPU has no fp8 support; use bf16");
}

TEST(CheckPlan, SequenceParallelKeptAboveTp1) {
  ParallelPlan plan;
  plan.tp = 2;
  plan.sequence_parallel = true;
  ASSERT_EQ(resolvePlan(plan, a100Cluster(1)), std::nullopt);
  EXPECT_TRUE(plan.sequence_parallel);
}

// --- Plans whose iteration the simulator cannot time or build -------------------------------

TEST(PlanValidation, IterationLongerThanTheClockHolds) {
  // A 1 GFLOP/s GPU: each figure is in range, but 64 x 4096 tokens of Llama 3 8B take years.
  const std::string cluster =
      "{gpu: {peak_tflops: {bf16: 0.001}, memory_GiB: 80, memory_bandwidth_GBps: 2000}, nodes: 1, gpus_per_node: "
      "1}";
  const std::string text = errorText(loadPlan("llama3-8b", kTraining, "  tp: 1\n", cluster));
  EXPECT_EQ(text.rfind("plan.yaml:5:46: training.global_batch_size: one iteration would take at least ", 0), 0u)
      << text;
  EXPECT_NE(text.find("FLOPs on 1 GPU at 0.001 TFLOP/s"), std::string::npos) << text;
  // The same batch at 1,000 GFLOP/s is a long but representable iteration.
  const std::string faster =
      "{gpu: {peak_tflops: {bf16: 1}, memory_GiB: 80, memory_bandwidth_GBps: 2000}, nodes: "
      "1, gpus_per_node: 1}";
  auto experiment = loadPlan("llama3-8b", kTraining, "  tp: 1\n", faster);
  EXPECT_TRUE(experiment.ok()) << experiment.error().toString();
}

TEST(CheckPlan, GradientBucketsPerGpuAreBounded) {
  auto experiment = loadPlan("llama3-8b", kTraining, "  tp: 8\n  pp: 2\n");
  ASSERT_TRUE(experiment.ok()) << experiment.error().toString();
  EXPECT_TRUE(checkPlan(experiment->model, experiment->cluster, experiment->training, experiment->plan).empty());
  ParallelPlan plan = experiment->plan;
  ModelSpec model = experiment->model;
  model.layers = 10'000;
  plan.ddp_bucket_size = 1e6;
  const auto issues = checkPlan(model, experiment->cluster, experiment->training, plan);
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues.front().key_path, "parallelism.ddp_bucket_size");
  // Without overlap every chunk is one bucket, whatever its size.
  plan.overlap_grad_reduce = false;
  EXPECT_TRUE(checkPlan(model, experiment->cluster, experiment->training, plan).empty());
}

}  // namespace
}  // namespace trainsim::parallelism
