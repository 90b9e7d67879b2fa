// Qwen3's per-head query and key RMSNorms (ModelSpec::qk_norm): read from a config.json's
// model_type and from trainsim's key, two norm ops after the QKV projection, their inputs
// kept for the backward, head_dim weights each.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "parallelism/chunk_workload.h"
#include "parallelism/experiment.h"
#include "parallelism/memory_model.h"
#include "parallelism/model_loader.h"
#include "parallelism/transformer_workload.h"
#include "tests/parallelism/test_support.h"

namespace trainsim::parallelism {
namespace {

constexpr double kBf16 = 2.0;

// Qwen3-30B-A3B (32 query heads and 4 key heads of 128) at tp 2: 16 and 2 heads a rank,
// 4,096 tokens a micro-batch.
Experiment qwen3(const std::vector<std::string>& sets) {
  const std::string yaml = R"(
name: qk-norm
model: qwen3-30b-a3b
cluster: {gpu: h100-sxm, nodes: 1, gpus_per_node: 8}
training: {seq_len: 4096, global_batch_size: 8, micro_batch_size: 1}
parallelism: {tp: 2, pp: 1, ep: 4, zero: 1, recompute: none}
)";
  return testing::shippedExperiment(yaml, sets);
}

Workload firstLayer(const Experiment& experiment) {
  for (const ChunkPart& part : chunkWorkloads(experiment, 0, 0, FlopsOptions{})) {
    if (part.workload.find("qkv_projection") != nullptr) return part.workload;
  }
  throw std::runtime_error("no attention layer");
}

TEST(QkNorm, ReadFromQwen3ConfigsAndTheModelKey) {
  const auto qwen3_json = loadModelFile(testing::dataDir() + "/hf/qwen3-30b-a3b/config.json", testing::testPaths());
  ASSERT_TRUE(qwen3_json.ok()) << qwen3_json.error().toString();
  EXPECT_TRUE(qwen3_json->qk_norm);
  const auto llama = loadModelFile(testing::dataDir() + "/hf/Meta-Llama-3-8B/config.json", testing::testPaths());
  ASSERT_TRUE(llama.ok()) << llama.error().toString();
  EXPECT_FALSE(llama->qk_norm);
  EXPECT_TRUE(qwen3({}).model.qk_norm);  // the shipped preset
  EXPECT_FALSE(qwen3({"model.qk_norm=false"}).model.qk_norm);
  EXPECT_THROW(qwen3({"model.qk_norm=sometimes"}), std::runtime_error);
  try {
    (void)testing::shippedExperiment(R"(
name: qk-norm-mla
model: {name: m, architecture: llama, layers: 2, hidden_size: 1024, ffn_hidden_size: 2048, attention_heads: 8,
        vocab_size: 1000, qk_norm: true,
        mla: {kv_lora_rank: 128, qk_nope_head_dim: 64, qk_rope_head_dim: 32, v_head_dim: 64}}
cluster: {gpu: h100-sxm, nodes: 1, gpus_per_node: 8}
training: {seq_len: 1024, global_batch_size: 8}
)",
                                     {});
    ADD_FAILURE() << "qk_norm with mla accepted";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("qk_norm"), std::string::npos) << error.what();
  }
  // A gpt model's norms are LayerNorms with biases: not these.
  EXPECT_THROW((void)testing::shippedExperiment(R"(
name: qk-norm-gpt
model: {name: m, architecture: gpt, layers: 2, hidden_size: 1024, attention_heads: 8, vocab_size: 1000, qk_norm: true}
cluster: {gpu: h100-sxm, nodes: 1, gpus_per_node: 8}
training: {seq_len: 1024, global_batch_size: 8}
)",
                                                {}),
               std::runtime_error);
}

TEST(QkNorm, NormalizesTheRanksQueryAndKeyHeadsAfterTheProjection) {
  const Workload layer = firstLayer(qwen3({}));
  const Op* q = layer.find("q_norm");
  const Op* k = layer.find("k_norm");
  ASSERT_NE(q, nullptr);
  ASSERT_NE(k, nullptr);
  // Fused (Transformer Engine's RMSNorm): 2 16-bit accesses forward, 3 backward, per element.
  EXPECT_DOUBLE_EQ(q->forward.bytes, 4096.0 * 16.0 * 128.0 * 2.0 * kBf16);
  EXPECT_DOUBLE_EQ(q->backward.bytes, 4096.0 * 16.0 * 128.0 * 3.0 * kBf16);
  EXPECT_DOUBLE_EQ(k->forward.bytes, 4096.0 * 2.0 * 128.0 * 2.0 * kBf16);
  // After the QKV projection, before RoPE.
  std::vector<std::string> names;
  for (const Op& op : layer.ops) names.push_back(op.name);
  const auto at = [&names](const std::string& name) {
    const auto found = std::find(names.begin(), names.end(), name);
    EXPECT_NE(found, names.end()) << name;
    return found - names.begin();
  };
  EXPECT_LT(at("qkv_projection"), at("q_norm"));
  EXPECT_LT(at("k_norm"), at("rope"));
  const Workload without = firstLayer(qwen3({"model.qk_norm=false"}));
  EXPECT_EQ(without.find("q_norm"), nullptr);
  EXPECT_EQ(without.find("k_norm"), nullptr);
}

TEST(QkNorm, KeepsTheNormsInputsAndCountsTheirWeights) {
  const Experiment with = qwen3({});
  const Experiment without = qwen3({"model.qk_norm=false"});
  const MicroBatchShard shard = MicroBatchShard::of(with.training, with.plan);
  const LayerKind kind = with.model.layerKind(0);
  // The pre-norm queries and keys of the rank's heads, 16-bit: (16 + 2) x 128 per token.
  EXPECT_DOUBLE_EQ(layerActivationBytes(with.model, shard, Recompute::kNone, MemoryOptions{}, kind) -
                       layerActivationBytes(without.model, shard, Recompute::kNone, MemoryOptions{}, kind),
                   kBf16 * 4096.0 * 18.0 * 128.0);
  // Full recomputation keeps the layer's input only, with or without them.
  EXPECT_DOUBLE_EQ(layerActivationBytes(with.model, shard, Recompute::kFull, MemoryOptions{}, kind),
                   layerActivationBytes(without.model, shard, Recompute::kFull, MemoryOptions{}, kind));
  // head_dim weights for each norm, every layer.
  EXPECT_DOUBLE_EQ(with.model.parameterCount() - without.model.parameterCount(), 48.0 * 2.0 * 128.0);
}

}  // namespace
}  // namespace trainsim::parallelism
