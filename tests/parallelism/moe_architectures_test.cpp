// Modern mixture-of-experts architectures (docs/moe.md): the Hugging Face readers of
// deepseek_v3, kimi_k2, qwen2_moe, qwen3_moe and gpt_oss, the trainsim keys for the same
// features, the parameter counts the model cards publish, FLOPs per token against 6 x the
// activated parameters, and the per-stage weights of the memory model.
#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "parallelism/chunk_workload.h"
#include "parallelism/experiment_loader.h"
#include "parallelism/memory_model.h"
#include "parallelism/model_loader.h"
#include "parallelism/transformer_workload.h"
#include "test_support.h"

namespace trainsim::parallelism {
namespace {

using testing::dataDir;
using testing::errorText;
using testing::testPaths;

const ConfigPaths kShippedPaths{TRAINSIM_CONFIG_DIR_FOR_TESTS};

ModelSpec hfModel(const std::string& name) {
  auto model = loadModelFile(dataDir() + "/hf/" + name + "/config.json", testPaths());
  EXPECT_TRUE(model.ok()) << model.error().toString();
  return model.ok() ? *model : ModelSpec{};
}

ModelSpec preset(const std::string& name) {
  auto model = loadModelFile(name, kShippedPaths);
  EXPECT_TRUE(model.ok()) << model.error().toString();
  return model.ok() ? *model : ModelSpec{};
}

ModelSpec inlineModel(const std::string& yaml) {
  auto model = loadModelNode(parseConfigText(yaml, "model.yaml"), testPaths());
  EXPECT_TRUE(model.ok()) << model.error().toString();
  return model.ok() ? *model : ModelSpec{};
}

std::string inlineError(const std::string& yaml) {
  return errorText(loadModelNode(parseConfigText(yaml, "model.yaml"), testPaths()));
}

double embeddingTable(const ModelSpec& model) {
  return static_cast<double>(model.vocab_size) * static_cast<double>(model.hidden_size);
}

// --- Hugging Face readers -------------------------------------------------------------------

TEST(DeepseekV3Config, ReadsLatentAttentionExpertsAndMtp) {
  const ModelSpec model = hfModel("deepseek-v3");
  EXPECT_EQ(model.name, "DeepSeek-V3");
  EXPECT_EQ(model.architecture, Architecture::kLlama);
  ASSERT_TRUE(model.mla.has_value());
  EXPECT_EQ(*model.mla, (LatentAttentionSpec{1536, 512, 128, 64, 128}));
  ASSERT_TRUE(model.moe.has_value());
  EXPECT_EQ(model.moe->experts, 256);
  EXPECT_EQ(model.moe->top_k, 8);
  EXPECT_EQ(model.moe->ffn_hidden_size, 2048);
  EXPECT_EQ(model.moe->shared_experts, 1);
  EXPECT_EQ(model.moe->shared_ffn_hidden_size, 2048);
  EXPECT_EQ(model.moe->dense_layers, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(model.moe->router_groups, 8);
  EXPECT_EQ(model.moe->router_group_top_k, 4);
  EXPECT_TRUE(model.moe->router_bias);
  EXPECT_EQ(model.ffn_hidden_size, 18432);
  EXPECT_EQ(model.mtp_layers, 1);
  EXPECT_FALSE(model.uniformLayers());
  EXPECT_FALSE(model.layerKind(2).moe);
  EXPECT_TRUE(model.layerKind(3).moe);
}

// The paper's figures (arXiv:2412.19437 section 1: 671B total, 37B activated; 685B on Hugging
// Face, whose checkpoint holds the MTP module with its own copies of the embedding and head).
TEST(DeepseekV3Config, ParameterCountsMatchThePaper) {
  const ModelSpec model = hfModel("deepseek-v3");
  EXPECT_NEAR((model.parameterCount() - model.mtpParameterCount()) / 671e9, 1.0, 0.01);
  EXPECT_NEAR(model.activeParameterCount() / 37e9, 1.0, 0.02);
  EXPECT_NEAR((model.parameterCount() + 2.0 * embeddingTable(model)) / 685e9, 1.0, 0.01);
  // The preset says the same as the config.json.
  EXPECT_DOUBLE_EQ(preset("deepseek-v3").parameterCount(), model.parameterCount());
  EXPECT_DOUBLE_EQ(preset("deepseek-v3").activeParameterCount(), model.activeParameterCount());
}

TEST(KimiK2Config, ReadsAsDeepseekV3) {
  const ModelSpec model = hfModel("kimi-k2");
  ASSERT_TRUE(model.mla.has_value());
  EXPECT_EQ(model.moe->experts, 384);
  EXPECT_EQ(model.moe->dense_layers, (std::vector<int64_t>{0}));
  EXPECT_EQ(model.mtp_layers, 0);
  // Moonshot AI: 1.04T total parameters, 32B activated.
  EXPECT_NEAR(model.parameterCount() / 1.04e12, 1.0, 0.02);
  EXPECT_NEAR(model.activeParameterCount() / 32e9, 1.0, 0.03);
}

// Qwen3 model card: 30.5B total, 3.3B activated.
TEST(Qwen3MoeConfig, ParameterCountsMatchTheModelCard) {
  const ModelSpec model = hfModel("qwen3-30b-a3b");
  ASSERT_TRUE(model.moe.has_value());
  EXPECT_TRUE(model.moe->dense_layers.empty());
  EXPECT_EQ(model.moe->shared_experts, 0);
  EXPECT_TRUE(model.uniformLayers());
  EXPECT_NEAR(model.parameterCount() / 30.5e9, 1.0, 0.01);
  EXPECT_NEAR(model.activeParameterCount() / 3.3e9, 1.0, 0.02);
  EXPECT_DOUBLE_EQ(preset("qwen3-30b-a3b").parameterCount(), model.parameterCount());
  // Qwen3-235B-A22B: 235B total, 22B activated.
  EXPECT_NEAR(preset("qwen3-235b-a22b").parameterCount() / 235e9, 1.0, 0.01);
  EXPECT_NEAR(preset("qwen3-235b-a22b").activeParameterCount() / 22e9, 1.0, 0.02);
}

// Qwen1.5-MoE-A2.7B (qwen2_moe): 14.3B total, 2.7B activated, with its gated shared expert.
TEST(Qwen2MoeConfig, ReadsTheGatedSharedExpert) {
  auto model = loadModelFile(dataDir() + "/hf/qwen1.5-moe-a2.7b.json", testPaths());
  ASSERT_TRUE(model.ok()) << model.error().toString();
  EXPECT_EQ(model->moe->shared_experts, 1);
  EXPECT_EQ(model->moe->shared_ffn_hidden_size, 5632);
  EXPECT_TRUE(model->moe->shared_expert_gate);
  EXPECT_NEAR(model->parameterCount() / 14.3e9, 1.0, 0.02);
  EXPECT_NEAR(model->activeParameterCount() / 2.7e9, 1.0, 0.02);
}

TEST(Qwen2MoeConfig, SparseStepAndMlpOnlyLayersMakeDenseLayers) {
  auto model = loadModelFile(dataDir() + "/hf/qwen1.5-moe-a2.7b.json", testPaths(),
                             testing::overrides({"decoder_sparse_step=2", "mlp_only_layers=[3]"}));
  ASSERT_TRUE(model.ok()) << model.error().toString();
  // Layer i is sparse when (i + 1) % 2 == 0 and i is not 3: 1, 5, 7, ...
  EXPECT_FALSE(model->layerKind(0).moe);
  EXPECT_TRUE(model->layerKind(1).moe);
  EXPECT_FALSE(model->layerKind(3).moe);
  EXPECT_TRUE(model->layerKind(5).moe);
  EXPECT_EQ(model->moe->dense_layers.size(), 13U);
}

// OpenAI's model card: 116.83B total; 5.13B active per token, counting the unembedding but
// not the embedding table.
TEST(GptOssConfig, ParameterCountsMatchTheModelCard) {
  const ModelSpec model = hfModel("gpt-oss-120b");
  EXPECT_TRUE(model.attention_bias);
  EXPECT_TRUE(model.attention_sinks);
  EXPECT_TRUE(model.moe->expert_bias);
  EXPECT_EQ(model.sliding_window, 128);
  EXPECT_EQ(model.sliding_window_layers.size(), 18U);
  EXPECT_TRUE(model.layerKind(0).sliding_window);
  EXPECT_FALSE(model.layerKind(1).sliding_window);
  EXPECT_NEAR(model.parameterCount() / 116.83e9, 1.0, 0.01);
  EXPECT_NEAR((model.activeParameterCount() - embeddingTable(model)) / 5.13e9, 1.0, 0.01);
  EXPECT_DOUBLE_EQ(preset("gpt-oss-120b").parameterCount(), model.parameterCount());
}

TEST(MixtralPreset, ParameterCountsMatchMistral) {
  const ModelSpec model = preset("mixtral-8x7b");
  EXPECT_NEAR(model.parameterCount() / 46.7e9, 1.0, 0.01);
  EXPECT_NEAR(model.activeParameterCount() / 12.9e9, 1.0, 0.01);
}

TEST(HuggingFaceFeatureErrors, DeepseekNeedsTheLatentRanks) {
  EXPECT_EQ(errorText(loadModelFile(dataDir() + "/hf/deepseek-v3/config.json", testPaths(),
                                    testing::overrides({"kv_lora_rank=0"}))),
            "--set kv_lora_rank=0: kv_lora_rank: expected a positive integer, found \"0\"");
  EXPECT_EQ(errorText(loadModelFile(dataDir() + "/hf/deepseek-v3/config.json", testPaths(),
                                    testing::overrides({"topk_group=9"}))),
            "--set topk_group=9: topk_group: expected at most the router groups (8), found \"9\"");
}

TEST(HuggingFaceFeatureErrors, GptOssLayerTypesOnePerLayer) {
  EXPECT_EQ(errorText(loadModelFile(dataDir() + "/hf/gpt-oss-120b/config.json", testPaths(),
                                    testing::overrides({"num_hidden_layers=4"}))),
            dataDir() +
                "/hf/gpt-oss-120b/config.json:17:18: layer_types: expected a list of 4 layer types (one per "
                "layer), found a list");
}

// --- trainsim model keys ----------------------------------------------------------------------

constexpr const char* kSmallMoe =
    "architecture: llama\nlayers: 4\nhidden_size: 64\nffn_hidden_size: 256\nattention_heads: 4\nvocab_size: 100\n";

TEST(TrainsimFeatureKeys, ReadEveryKey) {
  const ModelSpec model =
      inlineModel(std::string(kSmallMoe) +
                  "mla: {q_lora_rank: 16, kv_lora_rank: 8, qk_nope_head_dim: 16, "
                  "qk_rope_head_dim: 8, v_head_dim: 16}\n"
                  "attention_bias: true\nattention_sinks: true\nsliding_window: 32\n"
                  "sliding_window_layers: [2, 0]\nmtp_layers: 2\n"
                  "moe: {experts: 8, top_k: 2, ffn_hidden_size: 32, shared_experts: 2, "
                  "shared_ffn_hidden_size: 48, shared_expert_gate: true, dense_layers: [0], "
                  "expert_bias: true, router_bias: true, router_groups: 4, router_group_top_k: 2}\n");
  EXPECT_EQ(*model.mla, (LatentAttentionSpec{16, 8, 16, 8, 16}));
  EXPECT_EQ(model.sliding_window_layers, (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(model.mtp_layers, 2);
  EXPECT_EQ(model.moe->shared_experts, 2);
  EXPECT_EQ(model.moe->shared_ffn_hidden_size, 48);
  EXPECT_EQ(model.moe->router_group_top_k, 2);
  const std::vector<LayerKindCount> kinds = model.layerKinds(0, 4);
  ASSERT_EQ(kinds.size(), 3U);  // dense + sliding, MoE + full, MoE + sliding
  EXPECT_EQ(kinds[0].kind, (LayerKind{false, true}));
  EXPECT_EQ(kinds[1].kind, (LayerKind{true, false}));
  EXPECT_EQ(kinds[1].count, 2);
  EXPECT_EQ(kinds[2].kind, (LayerKind{true, true}));
}

TEST(TrainsimFeatureKeys, ErrorsNameTheKey) {
  EXPECT_EQ(inlineError(std::string(kSmallMoe) + "moe: {experts: 8, dense_layers: [4]}\n"),
            "model.yaml:7:34: moe.dense_layers[0]: expected an integer between 0 and 3, found \"4\"");
  EXPECT_EQ(inlineError(std::string(kSmallMoe) + "moe: {experts: 8, dense_layers: [1, 1]}\n"),
            "model.yaml:7:37: moe.dense_layers[1]: layer 1 is listed twice");
  EXPECT_EQ(inlineError(std::string(kSmallMoe) + "sliding_window_layers: [1]\n"),
            "model.yaml:1:1: sliding_window: missing required key (sliding_window_layers needs the window's length)");
  EXPECT_EQ(inlineError(std::string(kSmallMoe) + "moe: {experts: 8, router_groups: 3}\n"),
            "model.yaml:7:34: moe.router_groups: expected a divisor of the routed experts (8), found \"3\"");
  EXPECT_EQ(inlineError(std::string(kSmallMoe) + "mla: {kv_lora_rank: 8}\n"),
            "model.yaml:7:6: mla.qk_nope_head_dim: missing required key");
}

// --- FLOPs ------------------------------------------------------------------------------------

// Model FLOPs per token = 6 x the matmul weights a token passes through (every weight but the
// input embedding's and the norms') + the attention score and context matmuls, 6 s (qk + v) / 2
// per head and layer over the whole sequence (SPEC: no causal discount).
double sixNPlusAttention(const ModelSpec& model, double seq, bool with_mtp) {
  double flops = 6.0 * (model.activeParameterCount() - embeddingTable(model));
  double attention = 0.0;
  for (int64_t layer = 0; layer < model.layers; ++layer) {
    const double keys = model.layerKind(layer).sliding_window ? std::min<double>(seq, model.sliding_window) : seq;
    attention += 6.0 * keys * static_cast<double>(model.attention_heads * (model.qkHeadDim() + model.vHeadDim()));
  }
  if (with_mtp) {
    const double copies = static_cast<double>(model.moe->top_k);
    const double block = model.layerParameterCount(model.mtpLayerKind()) -
                         (static_cast<double>(model.moe->experts) - copies) * 3.0 *
                             static_cast<double>(model.hidden_size * model.moe->ffn_hidden_size);
    const double h = static_cast<double>(model.hidden_size);
    flops += static_cast<double>(model.mtp_layers) *
             (6.0 * (block + 2.0 * h * h + embeddingTable(model)) +
              6.0 * seq * static_cast<double>(model.attention_heads * (model.qkHeadDim() + model.vHeadDim())));
  }
  return flops + attention;
}

double flopsPerToken(const ModelSpec& model, int64_t seq) {
  TrainingSpec training;
  training.seq_len = seq;
  training.global_batch_size = 1;
  return modelFlopsPerIteration(model, training) / static_cast<double>(seq);
}

TEST(MoeFlops, DeepseekV3IsSixTimesItsActivatedParametersPlusAttention) {
  ModelSpec model = hfModel("deepseek-v3");
  EXPECT_NEAR(flopsPerToken(model, 4096) / sixNPlusAttention(model, 4096, true), 1.0, 0.005);
  EXPECT_NEAR(flopsPerToken(model, 4096) / 1e9, 292.0, 3.0);
  model.mtp_layers = 0;
  EXPECT_NEAR(flopsPerToken(model, 4096) / sixNPlusAttention(model, 4096, false), 1.0, 0.005);
  // About 292 GFLOPs per token at 4K: 6 x 36.6B non-embedding activated = 220, the attention
  // 6 x 4096 x 128 x (192 + 128) x 61 = 61, the MTP module 11.
}

TEST(MoeFlops, GptOssSlidingLayersScoreOverTheirWindow) {
  const ModelSpec model = hfModel("gpt-oss-120b");
  EXPECT_NEAR(flopsPerToken(model, 8192) / sixNPlusAttention(model, 8192, false), 1.0, 0.005);
  TrainingSpec training;
  training.seq_len = 8192;
  training.global_batch_size = 1;
  const MicroBatchShard shard = MicroBatchShard::wholeSequence(training);
  const Workload sliding_layer = transformerLayer(model, shard, {}, model.layerKind(0));
  const Workload full_layer = transformerLayer(model, shard, {}, model.layerKind(1));
  const Op* sliding = sliding_layer.find("flash_attention");
  const Op* full = full_layer.find("flash_attention");
  ASSERT_NE(sliding, nullptr);
  ASSERT_NE(full, nullptr);
  EXPECT_DOUBLE_EQ(full->forward.flops / sliding->forward.flops, 8192.0 / 128.0);
  // A window of 128 keys out of 8192: nearly every block inside it is computed, not half.
  EXPECT_NEAR(sliding->forward.executed_flops / sliding->forward.flops, 1.0 - 0.5 * 128.0 / 8192.0, 1e-12);
}

TEST(MoeFlops, QwenAndMixtralAreSixTimesTheirActivatedParametersPlusAttention) {
  for (const ModelSpec& model : {hfModel("qwen3-30b-a3b"), preset("mixtral-8x7b")}) {
    EXPECT_NEAR(flopsPerToken(model, 4096) / sixNPlusAttention(model, 4096, false), 1.0, 0.005) << model.name;
  }
}

// --- Pipeline chunks and memory ---------------------------------------------------------------

TEST(MoeLayers, ChunksHoldConsecutiveLayersInVirtualStageOrder) {
  ParallelPlan plan;
  plan.pp = 2;
  plan.virtual_stages = 2;
  EXPECT_EQ(plan.firstLayerOfChunk(8, 0, 0), 0);
  EXPECT_EQ(plan.firstLayerOfChunk(8, 1, 0), 2);
  EXPECT_EQ(plan.firstLayerOfChunk(8, 0, 1), 4);
  EXPECT_EQ(plan.firstLayerOfChunk(8, 1, 1), 6);
}

TEST(MoeLayers, DeepseekExperimentSplitsDenseAndMoeLayersAndPutsMtpLast) {
  auto experiment = loadExperiment("deepseek-v3-h100", kShippedPaths);
  ASSERT_TRUE(experiment.ok()) << experiment.error().toString();
  const auto first = chunkWorkloads(*experiment, 0, 0, {});
  // 7 layers on 4 chunks: the first chunk holds 1, layer 0, dense; then the embedding.
  ASSERT_EQ(first.size(), 2U);
  EXPECT_EQ(first[0].repeats, 1.0);
  EXPECT_NE(first[0].workload.find("mlp_fc2"), nullptr);
  // Interleaved: stage 1's first chunk follows stage 0's, with layers 1 and 2 (dense); stage
  // 2's holds layers 3 and 4, MoE.
  const auto second = chunkWorkloads(*experiment, 1, 0, {});
  ASSERT_EQ(second.size(), 1U);
  EXPECT_EQ(second[0].repeats, 2.0);
  EXPECT_NE(second[0].workload.find("mlp_fc2"), nullptr);
  EXPECT_NE(chunkWorkloads(*experiment, 2, 0, {})[0].workload.find("moe_expert_fc2"), nullptr);
  const auto last = chunkWorkloads(*experiment, 7, 3, {});
  // Layers, output layer, MTP input, MTP block, MTP head.
  ASSERT_EQ(last.size(), 5U);
  EXPECT_NE(last[2].workload.find("mtp_projection"), nullptr);
  EXPECT_NE(last[3].workload.find("shared_expert_fc2"), nullptr);
  EXPECT_NE(last[3].workload.find("kv_up_projection"), nullptr);
}

TEST(MoeMemory, StagesHoldEveryParameterOnce) {
  auto experiment = loadExperiment("deepseek-v3-h100", kShippedPaths);
  ASSERT_TRUE(experiment.ok()) << experiment.error().toString();
  Experiment whole = *experiment;
  whole.plan.tp = 1;
  whole.plan.ep = 1;
  const ModelSpec& model = whole.model;
  const auto layers = whole.plan.layersPerStage(model.layers);
  double total = 0.0;
  for (int64_t stage = 0; stage < whole.plan.pp; ++stage) {
    total += stageParameters(model, whole.training, whole.plan, stage, layers[static_cast<std::size_t>(stage)]).total();
  }
  // Every weight once, plus the last stage's copy of the embedding for the MTP module.
  EXPECT_NEAR(total / (model.parameterCount() + embeddingTable(model)), 1.0, 1e-12);
  // With ep 64 a GPU holds 1/64 of the routed experts of its layers, whole at etp 1 (the
  // experiment's), split over tp 2 at the default etp.
  const StageParameters middle = stageParameters(model, experiment->training, experiment->plan, 3, 8);
  EXPECT_NEAR(middle.expert, 8.0 * 4.0 * 3.0 * 7168.0 * 2048.0, 1.0);
  Experiment split = *experiment;
  split.plan.etp = ParallelPlan::kAuto;
  EXPECT_NEAR(stageParameters(model, split.training, split.plan, 3, 8).expert, middle.expert / 2.0, 1.0);
}

}  // namespace
}  // namespace trainsim::parallelism
