// RoPE with an attention factor (YaRN's mscale, ModelSpec::rope_attention_factor): read from a
// Hugging Face config's rope_scaling as transformers computes it, and, other than 1, priced as
// Megatron-Core's unfused RoPE chain (FlopsOptions::unfused_rope_*), its strided kernels at
// eager_strided_access_cost.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "parallelism/chunk_workload.h"
#include "parallelism/experiment.h"
#include "parallelism/model_loader.h"
#include "parallelism/pass_work.h"
#include "parallelism/transformer_workload.h"
#include "tests/parallelism/test_support.h"
#include "tests/shipped_simulation_options.h"

namespace trainsim::parallelism {
namespace {

using testing::dataDir;
using testing::errorText;
using testing::opNamed;
using testing::overrides;
using testing::testPaths;

double factorOf(const std::string& path, const std::vector<std::string>& sets = {}) {
  auto model = loadModelFile(path, testPaths(), overrides(sets));
  if (!model.ok()) throw std::runtime_error(model.error().toString());
  return model->rope_attention_factor;
}

const std::string kGptOssConfig = "/hf/gpt-oss-120b/config.json";

TEST(RopeAttentionFactor, YarnWithoutMscalesIsTheLogOfItsFactor) {
  EXPECT_DOUBLE_EQ(factorOf(dataDir() + kGptOssConfig), 0.1 * std::log(32.0) + 1.0);  // 1.3466
}

TEST(RopeAttentionFactor, EqualMscalesCancelAsDeepseeksDo) {
  EXPECT_DOUBLE_EQ(factorOf(dataDir() + kGptOssConfig, {"rope_scaling.mscale=1", "rope_scaling.mscale_all_dim=1"}),
                   1.0);
  EXPECT_DOUBLE_EQ(factorOf(dataDir() + kGptOssConfig, {"rope_scaling.mscale=2", "rope_scaling.mscale_all_dim=1"}),
                   (0.2 * std::log(32.0) + 1.0) / (0.1 * std::log(32.0) + 1.0));
}

TEST(RopeAttentionFactor, OneMscaleAloneOrNoScalingIsTheLogOfTheFactorOrOne) {
  // transformers uses the mscale ratio only when both are given and nonzero.
  EXPECT_DOUBLE_EQ(factorOf(dataDir() + kGptOssConfig, {"rope_scaling.mscale=1"}), 0.1 * std::log(32.0) + 1.0);
  EXPECT_DOUBLE_EQ(factorOf(dataDir() + kGptOssConfig, {"rope_scaling.factor=1"}), 1.0);
  EXPECT_DOUBLE_EQ(factorOf(dataDir() + kGptOssConfig, {"rope_scaling.factor=0.5"}), 1.0);
}

TEST(RopeAttentionFactor, AGivenAttentionFactorWins) {
  EXPECT_DOUBLE_EQ(factorOf(dataDir() + kGptOssConfig, {"rope_scaling.attention_factor=1.25"}), 1.25);
}

TEST(RopeAttentionFactor, OtherRopeTypesScaleNothing) {
  EXPECT_DOUBLE_EQ(factorOf(dataDir() + kGptOssConfig, {"rope_scaling.rope_type=linear"}), 1.0);
  EXPECT_DOUBLE_EQ(factorOf(dataDir() + "/hf/Meta-Llama-3-8B/config.json"), 1.0);
}

TEST(RopeAttentionFactor, ModelFilesSetItAndItMustBePositive) {
  const Experiment gpt_oss = testing::shippedExperiment(R"(
name: gpt-oss
model: gpt-oss-120b
cluster: {gpu: h100-sxm, nodes: 1, gpus_per_node: 8}
training: {seq_len: 4096, global_batch_size: 8, micro_batch_size: 1}
parallelism: {tp: 1, pp: 1, ep: 8}
)",
                                                        {});
  EXPECT_DOUBLE_EQ(gpt_oss.model.rope_attention_factor, 1.3466);  // the shipped preset
  EXPECT_DOUBLE_EQ(factorOf("llama3-8b"), 1.0);
  EXPECT_DOUBLE_EQ(factorOf("llama3-8b", {"rope_attention_factor=1.5"}), 1.5);
  const std::string error = errorText(loadModelFile("llama3-8b", testPaths(), overrides({"rope_attention_factor=0"})));
  EXPECT_NE(error.find("rope_attention_factor"), std::string::npos) << error;
}

// Llama 3 8B on one GPU: the layer's ops with the stack's fused pointwise kernels.
Workload layerOps(const std::vector<std::string>& sets) {
  const std::string yaml = R"(
name: rope-factor
model: llama3-8b
cluster: {gpu: h100-sxm, nodes: 1, gpus_per_node: 1}
training: {seq_len: 4096, global_batch_size: 1, micro_batch_size: 1}
parallelism: {tp: 1, pp: 1, zero: 1, recompute: none}
)";
  const Experiment experiment = testing::shippedExperiment(yaml, sets);
  for (const ChunkPart& part : chunkWorkloads(experiment, 0, 0, FlopsOptions{})) {
    if (part.workload.find("rope") != nullptr) return part.workload;
  }
  throw std::runtime_error("no rope op");
}

TEST(RopeAttentionFactor, AFactorOtherThanOneRunsTheUnfusedChain) {
  const double elements = 4096.0 * (32.0 + 8.0) * 128.0;  // tokens x (query + key heads) x head dim
  const Workload plain = layerOps({});
  const Op& fused = opNamed(plain, "rope");
  EXPECT_DOUBLE_EQ(fused.forward.bytes, elements * 2.0 * 2.0);
  EXPECT_DOUBLE_EQ(kernelsOf(fused, PassKind::kForward), 1.0);

  const Workload scaled = layerOps({"model.rope_attention_factor=1.3466"});
  const Op& unfused = opNamed(scaled, "rope");
  // 12 accesses forward, 7 of them strided; 11 backward, 7 strided (workload.yaml).
  EXPECT_DOUBLE_EQ(unfused.forward.bytes, elements * (5.0 * 2.0 + 7.0 * 2.0 * 2.2));
  EXPECT_DOUBLE_EQ(unfused.backward.bytes, elements * (4.0 * 2.0 + 7.0 * 2.0 * 2.2));
  EXPECT_DOUBLE_EQ(kernelsOf(unfused, PassKind::kForward), 24.0);  // 12 for each of query and key
  EXPECT_DOUBLE_EQ(kernelsOf(unfused, PassKind::kBackward), 14.0);
}

}  // namespace
}  // namespace trainsim::parallelism
