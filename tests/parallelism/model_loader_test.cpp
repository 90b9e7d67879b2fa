#include "parallelism/model_loader.h"

#include <gtest/gtest.h>

#include "tests/parallelism/test_support.h"

namespace trainsim::parallelism {
namespace {

using testing::dataDir;
using testing::errorText;
using testing::overrides;
using testing::testPaths;

Expected<ModelSpec> loadText(const std::string& text) {
  return loadModelNode(parseConfigText(text, "model.yaml"), testPaths());
}

// --- Trainsim model files ------------------------------------------------------------------

TEST(ModelLoader, LoadsPresetByName) {
  auto model = loadModelFile("llama3-8b", testPaths());
  ASSERT_TRUE(model.ok()) << model.error().toString();
  EXPECT_EQ(model->name, "llama3-8b");
  EXPECT_EQ(model->source_file, dataDir() + "/configs/models/llama3-8b.yaml");
  EXPECT_EQ(model->architecture, Architecture::kLlama);
  EXPECT_EQ(model->layers, 32);
  EXPECT_EQ(model->hidden_size, 4096);
  EXPECT_EQ(model->ffn_hidden_size, 14336);
  EXPECT_EQ(model->attention_heads, 32);
  EXPECT_EQ(model->kv_heads, 8);
  EXPECT_EQ(model->head_dim, 128);
  EXPECT_EQ(model->vocab_size, 128256);
  EXPECT_FALSE(model->tied_embeddings);
  EXPECT_FALSE(model->isMoe());
  // Hugging Face reports 8,030,261,248 parameters for Meta-Llama-3-8B.
  EXPECT_DOUBLE_EQ(model->parameterCount(), 8030261248.0);
  EXPECT_DOUBLE_EQ(model->activeParameterCount(), 8030261248.0);
}

TEST(ModelLoader, AppliesGptDefaults) {
  auto model = loadModelFile("gpt-tiny", testPaths());
  ASSERT_TRUE(model.ok()) << model.error().toString();
  EXPECT_EQ(model->name, "gpt-tiny");  // no name key: the preset name
  EXPECT_EQ(model->architecture, Architecture::kGpt);
  EXPECT_EQ(model->ffn_hidden_size, 4 * 256);
  EXPECT_EQ(model->kv_heads, 8);
  EXPECT_EQ(model->head_dim, 32);
  EXPECT_FALSE(model->tied_embeddings);
  EXPECT_FALSE(model->moe.has_value());
  // Megatron's default dropout for gpt (0.1 on the residual stream and the attention probabilities).
  EXPECT_FALSE(model->hidden_dropout.has_value());
  EXPECT_TRUE(model->hasHiddenDropout());
  EXPECT_TRUE(model->hasAttentionDropout());
}

TEST(ModelLoader, ReadsDropoutProbabilities) {
  const std::string sizes = "layers: 2\nhidden_size: 64\nattention_heads: 4\nvocab_size: 10\n";
  // A gpt model trained without dropout (Nemotron-4, Falcon): both off.
  auto off = loadText(sizes + "hidden_dropout: 0\nattention_dropout: 0.0\n");
  ASSERT_TRUE(off.ok()) << off.error().toString();
  EXPECT_FALSE(off->hasHiddenDropout());
  EXPECT_FALSE(off->hasAttentionDropout());
  // Each is its own switch, and a llama model can turn dropout on.
  auto attention_only = loadText(sizes + "attention_dropout: 0.1\nhidden_dropout: 0\n");
  ASSERT_TRUE(attention_only.ok()) << attention_only.error().toString();
  EXPECT_FALSE(attention_only->hasHiddenDropout());
  EXPECT_TRUE(attention_only->hasAttentionDropout());
  auto llama = loadText(sizes + "architecture: llama\nffn_hidden_size: 128\nhidden_dropout: 0.05\n");
  ASSERT_TRUE(llama.ok()) << llama.error().toString();
  EXPECT_TRUE(llama->hasHiddenDropout());
  EXPECT_FALSE(llama->hasAttentionDropout());  // llama's default: none
}

TEST(ModelLoader, LoadsModelFileByPath) {
  auto model = loadModelFile(dataDir() + "/models/gpt3-175b.yaml", testPaths());
  ASSERT_TRUE(model.ok()) << model.error().toString();
  EXPECT_EQ(model->name, "gpt3-175b");
  EXPECT_EQ(model->ffn_hidden_size, 49152);
  // 96 layers of 12h^2 + 13h (weights, biases, LayerNorms), untied 51200-token embeddings, final LayerNorm.
  const double h = 12288.0;
  EXPECT_DOUBLE_EQ(model->parameterCount(), 96.0 * (12.0 * h * h + 13.0 * h) + 2.0 * 51200.0 * h + 2.0 * h);
}

TEST(ModelLoader, AppliesOverridesToAFile) {
  auto model = loadModelFile("llama3-8b", testPaths(), overrides({"layers=2", "moe.experts=4"}));
  ASSERT_TRUE(model.ok()) << model.error().toString();
  EXPECT_EQ(model->layers, 2);
  ASSERT_TRUE(model->moe.has_value());
  EXPECT_EQ(model->moe->experts, 4);
  EXPECT_EQ(model->moe->top_k, 2);  // default
  EXPECT_EQ(model->moe->ffn_hidden_size, 14336);
}

TEST(ModelLoader, ReadsInlineMoeWithDefaults) {
  auto one_expert = loadText("layers: 2\nhidden_size: 64\nattention_heads: 4\nvocab_size: 10\nmoe: {experts: 1}\n");
  ASSERT_TRUE(one_expert.ok()) << one_expert.error().toString();
  EXPECT_EQ(one_expert->name, "model");
  EXPECT_EQ(one_expert->moe->top_k, 1);  // never more than there are experts
  auto many = loadText(
      "layers: 2\nhidden_size: 64\nattention_heads: 4\nvocab_size: 10\nmoe: {experts: 64, top_k: 6, "
      "ffn_hidden_size: 32}\n");
  ASSERT_TRUE(many.ok()) << many.error().toString();
  EXPECT_EQ(many->moe->top_k, 6);
  EXPECT_EQ(many->moe->ffn_hidden_size, 32);
  EXPECT_EQ(many->ffn_hidden_size, 256);
}

TEST(ModelLoader, AcceptsAnExplicitHeadDim) {
  // Qwen3-0.6B: 16 heads of 128 on a hidden size of 1024.
  auto model = loadText(
      "architecture: llama\nlayers: 28\nhidden_size: 1024\nffn_hidden_size: 3072\nattention_heads: 16\n"
      "kv_heads: 8\nhead_dim: 128\nvocab_size: 151936\ntied_embeddings: true\n");
  ASSERT_TRUE(model.ok()) << model.error().toString();
  EXPECT_EQ(model->head_dim, 128);
  EXPECT_EQ(model->queryDim(), 2048);
  EXPECT_EQ(model->kvDim(), 1024);
}

TEST(ModelLoaderErrors, MissingRequiredKey) {
  EXPECT_EQ(errorText(loadText("layers: 2\nattention_heads: 4\nvocab_size: 10\n")),
            "model.yaml:1:1: hidden_size: missing required key");
}

TEST(ModelLoaderErrors, LlamaNeedsFfnHiddenSize) {
  EXPECT_EQ(
      errorText(loadText("architecture: llama\nlayers: 2\nhidden_size: 64\nattention_heads: 4\nvocab_size: 10\n")),
      "model.yaml:1:1: ffn_hidden_size: missing required key (llama models have no default; SwiGLU MLPs are "
      "usually about 8/3 of hidden_size, e.g. 14336 for hidden_size 4096)");
}

TEST(ModelLoaderErrors, KvHeadsMustDivideHeads) {
  EXPECT_EQ(errorText(loadText("layers: 2\nhidden_size: 4096\nattention_heads: 32\nvocab_size: 10\nkv_heads: 5\n")),
            "model.yaml:5:11: kv_heads: expected a divisor of attention_heads (32), found \"5\"");
}

TEST(ModelLoaderErrors, HeadsMustDivideHidden) {
  EXPECT_EQ(errorText(loadText("layers: 2\nhidden_size: 4000\nattention_heads: 48\nvocab_size: 10\n")),
            "model.yaml:3:18: attention_heads: expected a divisor of hidden_size (4000), found \"48\"");
}

TEST(ModelLoaderErrors, TopKAtMostExperts) {
  EXPECT_EQ(errorText(loadText("layers: 2\nhidden_size: 64\nattention_heads: 4\nvocab_size: 10\nmoe:\n  experts: 2\n"
                               "  top_k: 3\n")),
            "model.yaml:7:10: moe.top_k: expected at most experts (2), found \"3\"");
}

TEST(ModelLoaderErrors, UnknownMoeKey) {
  EXPECT_EQ(errorText(loadText("layers: 2\nhidden_size: 64\nattention_heads: 4\nvocab_size: 10\nmoe:\n  expert: 2\n")),
            "model.yaml:6:3: moe.expert: unknown key (did you mean 'experts'?)");
}

TEST(ModelLoaderErrors, UnknownTopLevelKey) {
  EXPECT_EQ(errorText(loadText("layer: 2\nhidden_size: 64\nattention_heads: 4\nvocab_size: 10\n")),
            "model.yaml:1:1: layer: unknown key (did you mean 'layers'?)");
}

TEST(ModelLoaderErrors, UnknownArchitecture) {
  EXPECT_EQ(errorText(loadText("architecture: bert\nlayers: 2\nhidden_size: 64\nattention_heads: 4\nvocab_size: 10\n")),
            "model.yaml:1:15: architecture: expected gpt or llama, found \"bert\"");
}

TEST(ModelLoaderErrors, NegativeLayers) {
  EXPECT_EQ(errorText(loadText("layers: -2\nhidden_size: 64\nattention_heads: 4\nvocab_size: 10\n")),
            "model.yaml:1:9: layers: expected a positive integer, found \"-2\"");
}

TEST(ModelLoaderErrors, FractionalVocab) {
  EXPECT_EQ(errorText(loadText("layers: 2\nhidden_size: 64\nattention_heads: 4\nvocab_size: 1.5\n")),
            "model.yaml:4:13: vocab_size: expected a positive integer, found \"1.5\"");
}

TEST(ModelLoaderErrors, TiedEmbeddingsNotBoolean) {
  EXPECT_EQ(errorText(loadText("layers: 2\nhidden_size: 64\nattention_heads: 4\nvocab_size: 10\ntied_embeddings: 1\n")),
            "model.yaml:5:18: tied_embeddings: expected true or false, found \"1\"");
}

TEST(ModelLoaderErrors, DropoutIsAProbabilityBelowOne) {
  const std::string sizes = "layers: 2\nhidden_size: 64\nattention_heads: 4\nvocab_size: 10\n";
  EXPECT_EQ(errorText(loadText(sizes + "hidden_dropout: 1\n")),
            "model.yaml:5:17: hidden_dropout: expected a probability below 1 (0 turns dropout off), found \"1\"");
  EXPECT_EQ(errorText(loadText(sizes + "attention_dropout: -0.1\n")),
            "model.yaml:5:20: attention_dropout: expected a number >= 0, found \"-0.1\"");
  EXPECT_EQ(errorText(loadText(sizes + "hidden_dropout: yes\n")),
            "model.yaml:5:17: hidden_dropout: expected a number >= 0, found \"yes\"");
}

TEST(ModelLoaderErrors, NotAMapping) {
  EXPECT_EQ(errorText(loadText("- layers\n- 2\n")),
            "model.yaml:1:1: expected a model preset name, a path to a model file or config.json, or a mapping, "
            "found a list");
}

TEST(ModelLoaderErrors, UnknownPreset) {
  EXPECT_EQ(errorText(loadModelFile("llama9", testPaths())),
            "llama9: unknown model preset (no " + dataDir() +
                "/configs/models/llama9.yaml); give a preset name or a file path");
}

TEST(ModelLoaderErrors, OverrideIntoAFile) {
  EXPECT_EQ(errorText(loadModelFile("llama3-8b", testPaths(), overrides({"kv_heads=3"}))),
            "--set kv_heads=3: kv_heads: expected a divisor of attention_heads (32), found \"3\"");
}

// --- Hugging Face config.json ------------------------------------------------------------

TEST(HuggingFaceConfig, LoadsLlama) {
  auto model = loadModelFile(dataDir() + "/hf/Meta-Llama-3-8B/config.json", testPaths());
  ASSERT_TRUE(model.ok()) << model.error().toString();
  EXPECT_EQ(model->name, "Meta-Llama-3-8B");  // config.json: named after its directory
  EXPECT_EQ(model->architecture, Architecture::kLlama);
  EXPECT_EQ(model->layers, 32);
  EXPECT_EQ(model->hidden_size, 4096);
  EXPECT_EQ(model->ffn_hidden_size, 14336);
  EXPECT_EQ(model->attention_heads, 32);
  EXPECT_EQ(model->kv_heads, 8);
  EXPECT_EQ(model->vocab_size, 128256);
  EXPECT_FALSE(model->tied_embeddings);
  EXPECT_DOUBLE_EQ(model->parameterCount(), 8030261248.0);
  EXPECT_EQ(model->attention_dropout, 0.0);
  EXPECT_FALSE(model->hasAttentionDropout());
}

TEST(HuggingFaceConfig, ReadsDropoutUnderItsSpellings) {
  // A gpt-style config trained without dropout (Falcon, BLOOM: hidden_dropout / attention_dropout 0.0).
  auto falcon = loadText(R"({"model_type": "falcon", "hidden_size": 64, "num_hidden_layers": 2,
                             "num_attention_heads": 4, "vocab_size": 10, "hidden_dropout": 0.0,
                             "attention_dropout": 0.0})");
  ASSERT_TRUE(falcon.ok()) << falcon.error().toString();
  EXPECT_FALSE(falcon->hasHiddenDropout());
  EXPECT_FALSE(falcon->hasAttentionDropout());
  // OPT's "dropout"; a gpt-style config that names none keeps the architecture's default.
  auto opt = loadText(R"({"model_type": "opt", "hidden_size": 64, "num_hidden_layers": 2,
                          "num_attention_heads": 4, "vocab_size": 10, "dropout": 0.0})");
  ASSERT_TRUE(opt.ok()) << opt.error().toString();
  EXPECT_FALSE(opt->hasHiddenDropout());
  EXPECT_TRUE(opt->hasAttentionDropout());
  EXPECT_EQ(errorText(loadText(R"({"model_type": "gpt2", "n_embd": 64, "n_layer": 2, "n_head": 4,
                                   "vocab_size": 10, "attn_pdrop": 1.5})")),
            "model.yaml:2:68: attn_pdrop: expected a number between 0 and 1, found \"1.5\"");
}

TEST(HuggingFaceConfig, LoadsGpt2WithItsOwnKeyNames) {
  auto model = loadModelFile(dataDir() + "/hf/gpt2/config.json", testPaths());
  ASSERT_TRUE(model.ok()) << model.error().toString();
  EXPECT_EQ(model->name, "gpt2");
  EXPECT_EQ(model->architecture, Architecture::kGpt);
  EXPECT_EQ(model->layers, 12);
  EXPECT_EQ(model->hidden_size, 768);
  EXPECT_EQ(model->ffn_hidden_size, 3072);  // n_inner: null = 4 * n_embd
  EXPECT_EQ(model->kv_heads, 12);
  EXPECT_TRUE(model->tied_embeddings);       // transformers' default when the config does not say
  EXPECT_EQ(model->hidden_dropout, 0.1);     // resid_pdrop
  EXPECT_EQ(model->attention_dropout, 0.1);  // attn_pdrop
  // GPT-2 small has 124,439,808 parameters, 786,432 of them learned position embeddings (not counted).
  EXPECT_DOUBLE_EQ(model->parameterCount(), 124439808.0 - 786432.0);
}

TEST(HuggingFaceConfig, LoadsMixtral) {
  auto model = loadModelFile(dataDir() + "/hf/mixtral/config.json", testPaths());
  ASSERT_TRUE(model.ok()) << model.error().toString();
  EXPECT_EQ(model->name, "Mixtral-8x7B-v0.1");  // from _name_or_path
  ASSERT_TRUE(model->moe.has_value());
  EXPECT_EQ(model->moe->experts, 8);
  EXPECT_EQ(model->moe->top_k, 2);
  EXPECT_EQ(model->moe->ffn_hidden_size, 14336);
  // Mistral AI: 46.7B parameters, 12.9B active per token.
  EXPECT_DOUBLE_EQ(model->parameterCount(), 46702792704.0);
  EXPECT_DOUBLE_EQ(model->activeParameterCount(), 12879925248.0);
}

TEST(HuggingFaceConfig, LoadsNumExpertsSpelling) {
  auto model = loadModelFile(dataDir() + "/hf/olmoe.json", testPaths());
  ASSERT_TRUE(model.ok()) << model.error().toString();
  EXPECT_EQ(model->name, "OLMoE-1B-7B-0924");
  EXPECT_EQ(model->architecture, Architecture::kLlama);
  ASSERT_TRUE(model->moe.has_value());
  EXPECT_EQ(model->moe->experts, 64);
  EXPECT_EQ(model->moe->top_k, 8);
  EXPECT_EQ(model->moe->ffn_hidden_size, 1024);
}

TEST(HuggingFaceConfig, OverridesItsOwnKeys) {
  auto model =
      loadModelFile(dataDir() + "/hf/Meta-Llama-3-8B/config.json", testPaths(), overrides({"num_hidden_layers=2"}));
  ASSERT_TRUE(model.ok()) << model.error().toString();
  EXPECT_EQ(model->layers, 2);
}

TEST(HuggingFaceConfigErrors, UnknownModelType) {
  EXPECT_EQ(errorText(loadModelFile(dataDir() + "/hf/t5.json", testPaths())),
            dataDir() +
                "/hf/t5.json:2:17: model_type: expected a model_type trainsim knows: gated-MLP (llama-style) llama, "
                "mistral, mixtral, qwen2, qwen2_moe, qwen3, qwen3_moe, gemma, gemma2, phi3, olmo, olmo2, olmoe, "
                "granite, internlm2, cohere, stablelm, deepseek_v2, deepseek_v3, kimi_k2, gpt_oss; plain-MLP "
                "(gpt-style) gpt2, gpt_neox, gptj, gpt_neo, "
                "gpt_bigcode, opt, bloom, falcon, phi, starcoder2, codegen; describe other models in a trainsim model "
                "file, found \"t5\"");
}

TEST(HuggingFaceConfigErrors, KvHeadsMustDivideHeads) {
  EXPECT_EQ(errorText(loadModelFile(dataDir() + "/hf/bad_kv_heads.json", testPaths())),
            dataDir() +
                "/hf/bad_kv_heads.json:7:26: num_key_value_heads: expected a divisor of num_attention_heads (32), "
                "found \"5\"");
}

TEST(HuggingFaceConfigErrors, GatedMlpNeedsIntermediateSize) {
  EXPECT_EQ(errorText(loadModelFile(dataDir() + "/hf/no_intermediate.json", testPaths())),
            dataDir() +
                "/hf/no_intermediate.json:1:1: intermediate_size: missing required key (model_type llama has a gated "
                "MLP with no default width)");
}

TEST(HuggingFaceConfigErrors, WrongType) {
  EXPECT_EQ(errorText(loadModelFile(dataDir() + "/hf/bad_hidden.json", testPaths())),
            dataDir() + "/hf/bad_hidden.json:3:18: hidden_size: expected a positive integer, found \"big\"");
}

TEST(HuggingFaceConfigErrors, OverrideOfAKeyItDoesNotRead) {
  EXPECT_EQ(
      errorText(loadModelFile(dataDir() + "/hf/Meta-Llama-3-8B/config.json", testPaths(), overrides({"layers=2"}))),
      "--set layers=2: layers: not a key trainsim reads from a Hugging Face config.json; it reads model_type, "
      "hidden_size, num_hidden_layers, num_attention_heads, num_key_value_heads, head_dim, intermediate_size, "
      "vocab_size, tie_word_embeddings, num_local_experts, num_experts_per_tok, moe_intermediate_size, "
      "n_routed_experts, the dropout probabilities hidden_dropout, resid_pdrop, hidden_dropout_prob, dropout, "
      "attention_dropout, attn_pdrop and attention_probs_dropout_prob, and the architecture keys n_shared_experts, "
      "first_k_dense_replace, moe_layer_freq, q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, "
      "v_head_dim, n_group, topk_group, topk_method, num_nextn_predict_layers, attention_bias, "
      "shared_expert_intermediate_size, decoder_sparse_step, mlp_only_layers, sliding_window, layer_types, "
      "swiglu_limit, rope_scaling");
}

// --- Bounds: sizes that would exhaust memory or overflow are refused at their key --------

TEST(ModelLoaderBounds, TrainsimModelSizes) {
  const std::string rest = "hidden_size: 64\nattention_heads: 4\nvocab_size: 10\n";
  EXPECT_EQ(errorText(loadText("layers: 1e6\n" + rest)),
            "model.yaml:1:9: layers: expected an integer between 1 and 10000, found \"1e6\"");
  EXPECT_EQ(errorText(loadText("layers: 2\nhidden_size: 1073741824\nattention_heads: 4\nvocab_size: 10\n")),
            "model.yaml:2:14: hidden_size: expected an integer between 1 and 1048576, found \"1073741824\"");
  EXPECT_EQ(errorText(loadText("layers: 2\nhidden_size: 64\nattention_heads: 4\nvocab_size: 1e15\n")),
            "model.yaml:4:13: vocab_size: expected an integer between 1 and 16777216, found \"1e15\"");
  EXPECT_EQ(errorText(loadText("layers: 2\n" + rest + "ffn_hidden_size: 1e12\n")),
            "model.yaml:5:18: ffn_hidden_size: expected an integer between 1 and 4194304, found \"1e12\"");
  EXPECT_EQ(errorText(loadText("layers: 2\n" + rest + "head_dim: 1e9\n")),
            "model.yaml:5:11: head_dim: expected an integer between 1 and 65536, found \"1e9\"");
  EXPECT_EQ(errorText(loadText("layers: 2\n" + rest + "moe: {experts: 1e9}\n")),
            "model.yaml:5:16: moe.experts: expected an integer between 1 and 65536, found \"1e9\"");
  EXPECT_EQ(errorText(loadText("layers: 2\n" + rest + "moe: {experts: 8, ffn_hidden_size: 1e12}\n")),
            "model.yaml:5:36: moe.ffn_hidden_size: expected an integer between 1 and 4194304, found \"1e12\"");
  // The bounds themselves load.
  auto largest = loadText(
      "layers: 10000\nhidden_size: 1048576\nattention_heads: 65536\nvocab_size: 16777216\n"
      "moe: {experts: 65536, top_k: 65536}\n");
  EXPECT_TRUE(largest.ok()) << largest.error().toString();
}

TEST(ModelLoaderBounds, HuggingFaceSizes) {
  const std::string base =
      "{\"model_type\": \"llama\", \"num_hidden_layers\": 2, \"num_attention_heads\": 4, \"intermediate_size\": 64, ";
  EXPECT_EQ(errorText(loadText(base + "\"hidden_size\": 1073741824, \"vocab_size\": 10}")),
            "model.yaml:1:115: hidden_size: expected an integer between 1 and 1048576, found \"1073741824\"");
  EXPECT_EQ(errorText(loadText(base + "\"hidden_size\": 64, \"vocab_size\": 1e15}")),
            "model.yaml:1:133: vocab_size: expected an integer between 1 and 16777216, found \"1e15\"");
  EXPECT_EQ(errorText(loadText(base + "\"hidden_size\": 64, \"vocab_size\": 10, \"num_local_experts\": 1e9}")),
            "model.yaml:1:158: num_local_experts: expected an integer between 0 and 65536, found \"1e9\"");
}

}  // namespace
}  // namespace trainsim::parallelism
