// The kernels Megatron-Core's experts run besides their grouped GEMMs (docs/moe.md, "Megatron-Core's
// expert kernels"): the all-to-all dispatcher's sort of the received tokens by local expert,
// the FC2 bias loop of models with expert biases and the clamp of a clamped GLU, checked
// against the counts of configs/defaults/workload.yaml; Transformer Engine's fused grouped MLP
// (training.fused_expert_mlp) runs neither of the last two.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "parallelism/chunk_workload.h"
#include "parallelism/experiment.h"
#include "parallelism/memory_model.h"
#include "parallelism/model_loader.h"
#include "parallelism/pass_work.h"
#include "parallelism/transformer_workload.h"
#include "tests/parallelism/model_builders.h"
#include "tests/parallelism/test_support.h"
#include "tests/shipped_simulation_options.h"

namespace trainsim::parallelism {
namespace {

using testing::opNamed;

constexpr double kBf16 = 2.0;
constexpr double kFp32 = 4.0;

// GPT-OSS 120B (hidden 2,880, 128 experts of 2,880, top 4) on one 8-GPU node at ep 8: 16 local
// experts, 4,096 tokens a micro-batch.
Experiment gptOss(const std::vector<std::string>& sets) {
  const std::string yaml = R"(
name: expert-kernels
model: gpt-oss-120b
cluster: {gpu: h100-sxm, nodes: 1, gpus_per_node: 8}
training: {seq_len: 4096, global_batch_size: 8, micro_batch_size: 1}
parallelism: {tp: 1, pp: 1, ep: 8, zero: 1, recompute: none}
)";
  return testing::shippedExperiment(yaml, sets);
}

// The MoE layer's ops of the experiment's first chunk (GPT-OSS: every layer is one).
Workload moeLayer(const Experiment& experiment) {
  for (const ChunkPart& part : chunkWorkloads(experiment, 0, 0, FlopsOptions{})) {
    if (part.workload.find("moe_router") != nullptr) return part.workload;
  }
  throw std::runtime_error("no MoE layer");
}

constexpr double kSlots = 4096.0 * 4.0;  // tokens x top_k, on this rank's 16 experts
constexpr double kHidden = 2880.0;
constexpr double kLocalExperts = 16.0;

TEST(MegatronExpertKernels, GptOssReadsItsClampFromTheConfig) {
  const auto model = loadModelFile(testing::dataDir() + "/hf/gpt-oss-120b/config.json", testing::testPaths());
  ASSERT_TRUE(model.ok()) << model.error().toString();
  EXPECT_DOUBLE_EQ(model->moe->activation_clamp, 7.0);
  EXPECT_DOUBLE_EQ(gptOss({}).model.moe->activation_clamp, 7.0);
  EXPECT_DOUBLE_EQ(gptOss({"model.moe.activation_clamp=0"}).model.moe->activation_clamp, 0.0);
  EXPECT_THROW(gptOss({"model.moe.activation_clamp=-1"}), std::runtime_error);
}

// After the all-to-all dispatcher the router probabilities are in the 16-bit type and
// nothing is cast; after the flex dispatcher's they are fp32, and the sums are too.
TEST(MegatronExpertKernels, TheBiasLoopMovesItsCountedBytesInKernelsPerLocalExpert) {
  const double elements = kSlots * kHidden;
  const Workload layer = moeLayer(gptOss({}));
  const Op& bias = opNamed(layer, "moe_expert_fc2_bias");
  EXPECT_DOUBLE_EQ(bias.forward.bytes, elements * 6.0 * kBf16);
  EXPECT_DOUBLE_EQ(bias.backward.bytes, elements * 8.0 * kBf16);
  EXPECT_DOUBLE_EQ(kernelsOf(bias, PassKind::kForward), 1.0 + 2.0 * kLocalExperts);
  EXPECT_DOUBLE_EQ(kernelsOf(bias, PassKind::kBackward), 2.0 + 5.0 * kLocalExperts);
  const Workload flex_layer = moeLayer(gptOss({"parallelism.moe_dispatcher=flex"}));
  const Op& fp32 = opNamed(flex_layer, "moe_expert_fc2_bias");
  EXPECT_DOUBLE_EQ(fp32.forward.bytes, elements * (2.0 * kBf16 + 6.0 * kFp32));   // 28 bytes
  EXPECT_DOUBLE_EQ(fp32.backward.bytes, elements * (4.0 * kBf16 + 8.0 * kFp32));  // 40 bytes
  EXPECT_DOUBLE_EQ(kernelsOf(fp32, PassKind::kForward), 2.0 + 2.0 * kLocalExperts);
  EXPECT_DOUBLE_EQ(kernelsOf(fp32, PassKind::kBackward), 3.0 + 7.0 * kLocalExperts);
}

// Transformer Engine's grouped GEMM on Hopper: a cuBLASLt call per local expert, one of them
// the op's own kernel; twice in the backward (input and weight gradients).
TEST(MegatronExpertKernels, GroupedGemmsCallTheLibraryOncePerLocalExpert) {
  const Workload layer = moeLayer(gptOss({}));
  for (const char* name : {"moe_expert_gate_up", "moe_expert_fc2"}) {
    EXPECT_DOUBLE_EQ(opNamed(layer, name).library_calls_forward, kLocalExperts - 1.0) << name;
    EXPECT_DOUBLE_EQ(opNamed(layer, name).library_calls_backward, 2.0 * (kLocalExperts - 1.0)) << name;
  }
  EXPECT_DOUBLE_EQ(opNamed(layer, "qkv_projection").library_calls_forward, 0.0);
}

// The weighted activation's backward reduces the probabilities' gradient in a kernel of its
// own, reading the activation's input (both halves) and the output gradient again.
TEST(MegatronExpertKernels, TheWeightedActivationGradientReadsItsInputsAgain) {
  const Workload layer = moeLayer(gptOss({}));
  const Op& activation = opNamed(layer, "moe_expert_swiglu");
  const double width_elements = kSlots * 2880.0;
  EXPECT_DOUBLE_EQ(activation.backward.bytes, width_elements * (5.0 + 3.0) * kBf16);
  EXPECT_DOUBLE_EQ(kernelsOf(activation, PassKind::kBackward), 2.0);
  EXPECT_DOUBLE_EQ(activation.forward.bytes, width_elements * 3.0 * kBf16);
}

TEST(MegatronExpertKernels, TheClampMovesItsCountedBytes) {
  const Workload layer = moeLayer(gptOss({}));
  const Op& clamp = opNamed(layer, "moe_expert_glu_clamp");
  const double width_elements = kSlots * 2880.0;
  // The clamps, masks and wheres read half rows (strided kernels): each of their bytes
  // counts eager_strided_access_cost (2.2) times; the cats are vectorized.
  EXPECT_DOUBLE_EQ(clamp.forward.bytes, width_elements * (4.0 * kBf16 + 4.0 * kBf16 * 2.2));
  EXPECT_DOUBLE_EQ(clamp.backward.bytes, width_elements * (4.0 * kBf16 + (7.0 * kBf16 + 8.0) * 2.2));
  EXPECT_DOUBLE_EQ(kernelsOf(clamp, PassKind::kForward), 3.0);
  EXPECT_DOUBLE_EQ(kernelsOf(clamp, PassKind::kBackward), 9.0);
  // It runs before the activation, which stays one fused kernel.
  EXPECT_LT(layer.find("moe_expert_glu_clamp"), layer.find("moe_expert_swiglu"));
}

TEST(MegatronExpertKernels, TheFusedGroupedMlpRunsNoneAndKeepsNoClampCopy) {
  const Experiment fused = gptOss({"training.fused_expert_mlp=true"});
  EXPECT_TRUE(kernelsFor(fused, FlopsOptions{}).fused_expert_mlp);
  const Workload layer = moeLayer(fused);
  EXPECT_EQ(layer.find("moe_expert_fc2_bias"), nullptr);
  EXPECT_EQ(layer.find("moe_expert_glu_clamp"), nullptr);
  EXPECT_EQ(layer.find("moe_expert_swiglu"), nullptr);  // in FC1's epilogue
  EXPECT_THROW(gptOss({"training.fused_expert_mlp=maybe"}), std::runtime_error);
  // The clamp's backward keeps the unclamped fc1 output: 2 x 2,880 16-bit elements a slot.
  const Experiment unfused = gptOss({});
  const MicroBatchShard shard = MicroBatchShard::of(unfused.training, unfused.plan);
  MemoryOptions options;
  MemoryOptions fused_options;
  fused_options.kernels.fused_expert_mlp = true;
  const LayerKind kind = unfused.model.layerKind(1);
  EXPECT_DOUBLE_EQ(layerActivationBytes(unfused.model, shard, Recompute::kNone, options, kind) -
                       layerActivationBytes(unfused.model, shard, Recompute::kNone, fused_options, kind),
                   kBf16 * kSlots * 2.0 * 2880.0);
}

// Megatron-Core's all-to-all dispatcher sorts what it receives by local expert and restores
// the order before the combine: a copy of the routed tokens each way. The flex dispatcher
// permutes once, and one local expert needs no sort.
TEST(MegatronExpertKernels, TheAllToAllDispatcherSortsByLocalExpert) {
  const Workload layer = moeLayer(gptOss({}));
  const Op& sort = opNamed(layer, "moe_sort_by_local_expert");
  const Op& unsort = opNamed(layer, "moe_unsort_by_local_expert");
  for (const Op* op : {&sort, &unsort}) {
    EXPECT_DOUBLE_EQ(op->forward.bytes, kSlots * kHidden * 2.0 * kBf16);
    EXPECT_DOUBLE_EQ(op->backward.bytes, op->forward.bytes);
  }
  EXPECT_LT(layer.find("moe_sort_by_local_expert"), layer.find("moe_expert_gate_up"));
  EXPECT_GT(layer.find("moe_unsort_by_local_expert"), layer.find("moe_expert_fc2"));
  // The host waits for the counts before the sort, which needs them.
  EXPECT_GT(sort.host_sync_share, 0.0);
  EXPECT_EQ(moeLayer(gptOss({"parallelism.moe_dispatcher=flex"})).find("moe_sort_by_local_expert"), nullptr);
  // 8 experts on 8 ranks: one each.
  const Experiment one_each = gptOss({"model.moe.experts=8"});
  EXPECT_EQ(moeLayer(one_each).find("moe_sort_by_local_expert"), nullptr);
}

TEST(MegatronExpertKernels, TheFusedGroupedMlpMakesNoLibraryCallsPerExpert) {
  const Workload layer = moeLayer(gptOss({"training.fused_expert_mlp=true"}));
  EXPECT_DOUBLE_EQ(opNamed(layer, "moe_expert_gate_up").library_calls_forward, 0.0);
  EXPECT_DOUBLE_EQ(opNamed(layer, "moe_expert_fc2").library_calls_backward, 0.0);
}

// The shared experts' fc1 input is the router's input (the pre-MLP norm's output): kept once
// in 16 bits; in fp8 its linear keeps a quantized copy of its own.
TEST(MegatronExpertKernels, SharedExpertsKeepTheRoutersInputOnceIn16Bits) {
  auto sharedBytes = [](const std::string& precision) {
    const std::string yaml = R"(
name: shared-experts
model: deepseek-v3
cluster: {gpu: h100-sxm, nodes: 1, gpus_per_node: 8}
training: {seq_len: 4096, global_batch_size: 8, micro_batch_size: 1, )" +
                             precision + R"(}
parallelism: {tp: 1, pp: 1, ep: 8, zero: 1, recompute: none}
)";
    const Experiment with = testing::shippedExperiment(yaml, {});
    const Experiment without = testing::shippedExperiment(yaml, {"model.moe.shared_experts=0"});
    const MicroBatchShard shard = MicroBatchShard::of(with.training, with.plan);
    const LayerKind kind = with.model.layerKind(5);  // a MoE layer
    return layerActivationBytes(with.model, shard, Recompute::kNone, MemoryOptions{}, kind) -
           layerActivationBytes(without.model, shard, Recompute::kNone, MemoryOptions{}, kind);
  };
  const double tokens = 4096.0;
  const double width = 2048.0;  // one shared expert
  // SwiGLU input (2 x width) and fc2 input, 16-bit; no fc1 input of its own.
  EXPECT_DOUBLE_EQ(sharedBytes("precision: bf16"), (2.0 * kBf16 + kBf16) * tokens * width);
  // fp8: the fc1 and fc2 inputs as the linears' 1-byte copies, the fc1 input its own.
  EXPECT_DOUBLE_EQ(sharedBytes("precision: fp8, fp8_recipe: current"),
                   1.0 * tokens * 7168.0 + (2.0 * kBf16 + 1.0) * tokens * width);
}

TEST(MegatronExpertKernels, TheFusedGroupedMlpMakesTheStepFaster) {
  EXPECT_GT(shippedIterationSeconds(gptOss({})), shippedIterationSeconds(gptOss({"training.fused_expert_mlp=true"})));
}

}  // namespace
}  // namespace trainsim::parallelism
