// training.fused_pointwise: false runs RMSNorm, RoPE and SwiGLU as eager PyTorch's op chains
// (torchtitan's model code), whose bytes and kernels configs/defaults/workload.yaml counts op
// by op; a compiled dispatch fuses them again (kernelsFor). Checked against those counts.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "parallelism/experiment.h"
#include "parallelism/iteration_simulation.h"
#include "parallelism/memory_model.h"
#include "parallelism/pass_work.h"
#include "parallelism/transformer_workload.h"
#include "tests/parallelism/model_builders.h"
#include "tests/parallelism/test_support.h"
#include "tests/shipped_simulation_options.h"

namespace trainsim::parallelism {
namespace {

using testing::opNamed;

using testing::llama3_8bModel;
using testing::shard;

constexpr double kBf16 = 2.0;
constexpr double kFp32 = 4.0;

Workload layerOf(const ModelSpec& model, bool fused) {
  FlopsOptions options;
  options.fused_pointwise = fused;
  return transformerLayer(model, shard(2, 4096), options);
}

TEST(EagerPointwise, RmsNormMovesTheCountedBytesInItsKernels) {
  const ModelSpec model = llama3_8bModel();
  const double elements = 2.0 * 4096.0 * 4096.0;  // tokens x hidden
  const Workload fused_layer = layerOf(model, true);
  const Workload eager_layer = layerOf(model, false);
  const Op& fused = opNamed(fused_layer, "input_norm");
  const Op& eager = opNamed(eager_layer, "input_norm");
  EXPECT_DOUBLE_EQ(fused.forward.bytes, elements * 2.0 * kBf16);
  EXPECT_DOUBLE_EQ(eager.forward.bytes, elements * (4.0 * kBf16 + 7.0 * kFp32));    // 36 bytes
  EXPECT_DOUBLE_EQ(eager.backward.bytes, elements * (8.0 * kBf16 + 19.0 * kFp32));  // 92 bytes
  EXPECT_DOUBLE_EQ(kernelsOf(fused, PassKind::kForward), 1.0);
  EXPECT_DOUBLE_EQ(kernelsOf(eager, PassKind::kForward), 8.0);
  EXPECT_DOUBLE_EQ(kernelsOf(eager, PassKind::kBackward), 16.0);
  // The FLOPs are the norm's either way (they are not matmuls; time goes by the bytes).
  EXPECT_DOUBLE_EQ(eager.forward.flops, fused.forward.flops);
}

TEST(EagerPointwise, RopeAndSwigluMoveTheCountedBytes) {
  const ModelSpec model = llama3_8bModel();
  const double tokens = 2.0 * 4096.0;
  const Workload eager = layerOf(model, false);
  const Op& rope = opNamed(eager, "rope");
  const double rope_elements = tokens * (4096.0 + 1024.0);  // query and key heads
  EXPECT_DOUBLE_EQ(rope.forward.bytes, rope_elements * (2.0 * kBf16 + 4.0 * kFp32));
  EXPECT_DOUBLE_EQ(rope.backward.bytes, rope.forward.bytes);
  EXPECT_DOUBLE_EQ(kernelsOf(rope, PassKind::kForward), 6.0);
  const Op& swiglu = opNamed(eager, "mlp_swiglu");
  const double width_elements = tokens * 14336.0;
  EXPECT_DOUBLE_EQ(swiglu.forward.bytes, width_elements * 5.0 * kBf16);
  EXPECT_DOUBLE_EQ(swiglu.backward.bytes, width_elements * 9.0 * kBf16);
  EXPECT_DOUBLE_EQ(kernelsOf(swiglu, PassKind::kForward), 2.0);
  EXPECT_DOUBLE_EQ(kernelsOf(swiglu, PassKind::kBackward), 3.0);
  const Workload fused = layerOf(model, true);
  const Op& fused_swiglu = opNamed(fused, "mlp_swiglu");
  EXPECT_DOUBLE_EQ(fused_swiglu.forward.bytes, width_elements * 3.0 * kBf16);
}

// PyTorch's LayerNorm is one kernel even in eager mode: a gpt layer's norms do not change.
TEST(EagerPointwise, LayerNormStaysOneKernel) {
  const ModelSpec model = testing::gptModel(4, 2048, 16, 51200);
  const Workload fused_layer = layerOf(model, true);
  const Workload eager_layer = layerOf(model, false);
  const Op& fused = opNamed(fused_layer, "input_norm");
  const Op& eager = opNamed(eager_layer, "input_norm");
  EXPECT_DOUBLE_EQ(eager.forward.bytes, fused.forward.bytes);
  EXPECT_DOUBLE_EQ(kernelsOf(eager, PassKind::kForward), 1.0);
}

Experiment experimentWith(const std::vector<std::string>& sets) {
  const std::string yaml = R"(
name: eager-pointwise
model: llama3-8b
cluster: {gpu: h100-sxm, nodes: 1, gpus_per_node: 8}
training: {seq_len: 4096, global_batch_size: 16, micro_batch_size: 2, stack: torchtitan}
parallelism: {tp: 1, pp: 1, zero: 3, recompute: none}
)";
  return testing::shippedExperiment(yaml, sets);
}

// The torchtitan preset runs the chains eager; a compiled dispatch or the experiment's own
// fused_pointwise fuses them.
TEST(EagerPointwise, TheStackChoosesAndACompiledDispatchFuses) {
  EXPECT_FALSE(kernelsFor(experimentWith({}), FlopsOptions{}).fused_pointwise);
  EXPECT_TRUE(kernelsFor(experimentWith({"training.dispatch=compiled"}), FlopsOptions{}).fused_pointwise);
  EXPECT_TRUE(kernelsFor(experimentWith({"training.fused_pointwise=true"}), FlopsOptions{}).fused_pointwise);
  EXPECT_TRUE(kernelsFor(experimentWith({"training.stack=megatron-core"}), FlopsOptions{}).fused_pointwise);
  EXPECT_THROW(experimentWith({"training.fused_pointwise=sometimes"}), std::runtime_error);
}

// What the chains keep for the backward: each RMSNorm's fp32 input copy (4 bytes per element
// more than the fused norm's 16-bit input) and silu's output (one element of the width).
TEST(EagerPointwise, ALayerKeepsTheChainsSavedTensorsWithoutRecomputation) {
  const ModelSpec model = llama3_8bModel();
  const MicroBatchShard one = shard(2, 4096);
  MemoryOptions fused;
  MemoryOptions eager;
  eager.kernels.fused_pointwise = false;
  const double tokens = 2.0 * 4096.0;
  const double extra = 2.0 * kFp32 * tokens * 4096.0 + kBf16 * tokens * 14336.0;
  EXPECT_DOUBLE_EQ(layerActivationBytes(model, one, Recompute::kNone, eager) -
                       layerActivationBytes(model, one, Recompute::kNone, fused),
                   extra);
  // Recomputed layers keep what they kept before: the chains run again.
  for (const Recompute recompute : {Recompute::kFull, Recompute::kSelectiveOp}) {
    EXPECT_DOUBLE_EQ(layerActivationBytes(model, one, recompute, eager),
                     layerActivationBytes(model, one, recompute, fused));
  }
}

TEST(EagerPointwise, AnEagerStepIsSlowerByItsChains) {
  const double eager = shippedIterationSeconds(experimentWith({}));
  const double fused = shippedIterationSeconds(experimentWith({"training.fused_pointwise=true"}));
  EXPECT_GT(eager, 1.05 * fused);
}

}  // namespace
}  // namespace trainsim::parallelism
