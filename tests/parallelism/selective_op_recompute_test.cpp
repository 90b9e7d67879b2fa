// recompute: selective_op, PyTorch's per-op selective activation checkpointing as torchtitan
// configures it: the matmul and attention-kernel outputs are saved but every second matmul,
// the rest reruns (Op::op_checkpoint_rerun). Checked against the closed forms of a Llama layer.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "parallelism/experiment_loader.h"
#include "parallelism/iteration_simulation.h"
#include "parallelism/memory_model.h"
#include "parallelism/pass_work.h"
#include "parallelism/transformer_workload.h"
#include "perf/communication_parameters.h"
#include "tests/parallelism/model_builders.h"
#include "tests/parallelism/test_support.h"
#include "tests/shipped_simulation_options.h"

namespace trainsim::parallelism {
namespace {

using testing::llama3_8bModel;
using testing::shard;

Experiment experimentWith(const std::vector<std::string>& sets) {
  const std::string yaml = R"(
name: selective-op
model: llama3-8b
cluster: {gpu: h100-sxm, nodes: 1, gpus_per_node: 8}
training: {seq_len: 4096, global_batch_size: 16, micro_batch_size: 1}
parallelism: {tp: 1, pp: 1, zero: 1, recompute: selective_op}
)";
  return testing::shippedExperiment(yaml, sets);
}

// One transformer layer's pass work under the experiment's plan (the collectives it runs and
// reruns; times zero).
PassWork layerPassWork(const Experiment& experiment) {
  const ChunkPart part{
      transformerLayer(experiment.model, MicroBatchShard::of(experiment.training, experiment.plan), FlopsOptions{}),
      1.0, true};
  class ZeroTimer : public OpTimer {
   public:
    [[nodiscard]] double seconds(const Op&, PassKind) const override { return 0.0; }
    [[nodiscard]] double memoryBoundSeconds(double) const override { return 0.0; }
  } timer;
  PassWork work;
  addPassWork(
      work, part, experiment.plan, timer, [](const Communication&) { return 0.0; }, perf::CommunicationParameters{});
  return work;
}

// A Llama layer's seven matmuls in torchtitan's order are wq, wk, wv, wo, w1, w3, w2; the
// second, fourth and sixth rerun: wk (h x kv), wo (q x h), w3 (h x ffn).
TEST(SelectiveOpRecompute, TheEvenNumberedMatmulsRerun) {
  const ModelSpec model = llama3_8bModel();
  const int64_t s = 4096;
  for (const bool fused_gate_up : {false, true}) {
    FlopsOptions options;
    options.fuse_gate_up = fused_gate_up;
    const Workload layer = transformerLayer(model, shard(1, s), options);
    double rerun = 0.0;
    for (const Op& op : layer.ops) {
      if (op.matmul) rerun += rerunShare(op, Recompute::kSelectiveOp) * op.forward.flops;
    }
    const double h = 4096.0;
    const double kv = 1024.0;
    const double ffn = 14336.0;
    const double expected = 2.0 * static_cast<double>(s) * (h * kv + h * h + h * ffn);
    EXPECT_NEAR(rerun / expected, 1.0, 1e-12) << fused_gate_up;
    // The attention kernel's output is saved; norms and element-wise ops rerun.
    for (const Op& op : layer.ops) {
      if (op.kind == OpKind::kAttention) {
        EXPECT_EQ(rerunShare(op, Recompute::kSelectiveOp), 0.0) << op.name;
      }
      if (op.kind == OpKind::kNormalization) {
        EXPECT_EQ(rerunShare(op, Recompute::kSelectiveOp), 1.0) << op.name;
      }
    }
  }
}

TEST(SelectiveOpRecompute, HardwareFlopsAddTheRerunMatmuls) {
  const Experiment experiment = experimentWith({});
  const double model_flops = modelFlopsPerIteration(experiment.model, experiment.training);
  const double hardware = hardwareFlopsPerIteration(experiment.model, experiment.training, experiment.plan);
  const double s = 4096.0;
  const double per_layer = 2.0 * s * (4096.0 * 1024.0 + 4096.0 * 4096.0 + 4096.0 * 14336.0);
  EXPECT_NEAR((hardware - model_flops) / (per_layer * 32.0 * 16.0), 1.0, 1e-12);
}

// What the layer keeps (bf16, tp 1): its input (h), wq's and wv's outputs (q + kv), the
// attention output (q) with its fp32 logsumexp (4 bytes per head), w1's output (ffn) and w2's (h).
TEST(SelectiveOpRecompute, ALayerKeepsTheSavedOutputs) {
  const ModelSpec model = llama3_8bModel();
  const double s = 4096.0;
  const double expected = 2.0 * s * (4096.0 + 4096.0 + 1024.0 + 4096.0 + 14336.0 + 4096.0) + 4.0 * s * 32.0;
  EXPECT_NEAR(layerActivationBytes(model, shard(1, 4096), Recompute::kSelectiveOp, MemoryOptions{}) / expected, 1.0,
              1e-12);
  const double none = layerActivationBytes(model, shard(1, 4096), Recompute::kNone, MemoryOptions{});
  const double full = layerActivationBytes(model, shard(1, 4096), Recompute::kFull, MemoryOptions{});
  EXPECT_LT(full, expected);
  EXPECT_LT(expected, none);
}

TEST(SelectiveOpRecompute, AStepLiesBetweenNoneAndFull) {
  const double none = shippedIterationSeconds(experimentWith({"parallelism.recompute=none"}));
  const double op = shippedIterationSeconds(experimentWith({}));
  const double full = shippedIterationSeconds(experimentWith({"parallelism.recompute=full"}));
  EXPECT_LT(none, op);
  EXPECT_LT(op, full);
  const double none_memory = estimateMemory(experimentWith({"parallelism.recompute=none"})).peakBytes();
  const double op_memory = estimateMemory(experimentWith({})).peakBytes();
  const double full_memory = estimateMemory(experimentWith({"parallelism.recompute=full"})).peakBytes();
  EXPECT_LT(full_memory, op_memory);
  EXPECT_LT(op_memory, none_memory);
}

// With tensor and sequence parallelism the gathers rerun with the matmuls they feed; the
// reduce-scatters' outputs are saved.
TEST(SelectiveOpRecompute, TheGathersRerunTheReduceScattersDoNot) {
  const Experiment experiment = experimentWith({"parallelism.tp=2", "parallelism.sequence_parallel=true"});
  const PassWork work = layerPassWork(experiment);
  int gathers = 0;
  int scatters = 0;
  for (const PassCollective& call : work.collectives) {
    if (!call.recomputed) continue;
    gathers += call.op == perf::CollectiveOp::kAllGather ? 1 : 0;
    scatters += call.op == perf::CollectiveOp::kReduceScatter ? 1 : 0;
  }
  EXPECT_EQ(gathers, 2);  // before the attention and before the MLP
  EXPECT_EQ(scatters, 0);
}

// Where torchtitan's policy would not save what the model assumes it saves, the plan is refused.
TEST(SelectiveOpRecompute, IsRefusedWhereTheMappingDoesNotHold) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"model=mixtral-8x7b"}, "mixtral-8x7b has mixture-of-experts layers"},
      {{"model=gpt-1.7b"}, "has biased linear layers"},
      {{"training.precision=fp8"}, "the run is in fp8 without a compiled dispatch"},
      {{"training.flash_attention=false"}, "the attention is not a fused kernel"},
      {{"parallelism.tp=2", "parallelism.sequence_parallel=true", "parallelism.tp_comm_overlap=true"},
       "tp_comm_overlap is on"},
  };
  for (const auto& [sets, expected] : cases) {
    try {
      experimentWith(sets);
      ADD_FAILURE() << "accepted: " << sets.front();
    } catch (const std::runtime_error& error) {
      const std::string text = error.what();
      EXPECT_NE(text.find("parallelism.recompute: recompute: selective_op is modelled for torchtitan's Llama layers"),
                std::string::npos)
          << text;
      EXPECT_NE(text.find(expected), std::string::npos) << text;
    }
  }
}

// torchao's float8 linears call torch.mm on Float8Tensor operands: the policy sees aten.mm and
// saves and counts them as in 16-bit, so a compiled fp8 run reruns the same matmuls and keeps
// the same (16-bit) outputs.
TEST(SelectiveOpRecompute, Fp8LinearsRerunAndKeepWhatSixteenBitOnesDo) {
  const Experiment bf16 = experimentWith({"training.dispatch=compiled"});
  const Experiment fp8 =
      experimentWith({"training.precision=fp8", "training.fp8_recipe=current", "training.dispatch=compiled"});
  // Each run's own kernels (kernelsFor): the fp8 layer has its casts, the same matmuls.
  auto rerunMatmulFlops = [](const Experiment& experiment) {
    const Workload layer = transformerLayer(experiment.model, MicroBatchShard::of(experiment.training, experiment.plan),
                                            kernelsFor(experiment, FlopsOptions{}));
    double rerun = 0.0;
    for (const Op& op : layer.ops) {
      if (op.matmul) rerun += rerunShare(op, Recompute::kSelectiveOp) * op.forward.flops;
    }
    return rerun;
  };
  EXPECT_GT(rerunMatmulFlops(bf16), 0.0);
  EXPECT_DOUBLE_EQ(rerunMatmulFlops(fp8), rerunMatmulFlops(bf16));
  // The memory model keeps the same (16-bit) outputs per layer: the stages differ only by the
  // FP8 weight copies, not by the activations.
  const MemoryReport bf16_memory = estimateMemory(bf16);
  const MemoryReport fp8_memory = estimateMemory(fp8);
  EXPECT_DOUBLE_EQ(fp8_memory.peak().activation_per_layer, bf16_memory.peak().activation_per_layer);
}

// Without sequence parallelism the attention's all-reduce reruns (the MLP's norm and w3 need
// its output); the MLP's closing one does not (nothing in the backward needs its output).
TEST(SelectiveOpRecompute, OnlyTheAttentionsAllReduceReruns) {
  const Experiment experiment = experimentWith({"parallelism.tp=2"});
  ASSERT_FALSE(experiment.plan.sequence_parallel);
  const PassWork work = layerPassWork(experiment);
  int rerun = 0;
  for (const PassCollective& call : work.collectives) rerun += call.recomputed ? 1 : 0;
  EXPECT_EQ(rerun, 1);
}

// With tensor and sequence parallelism (tp 2): the input is kept sharded, the saved matmul
// outputs on the rank's whole sequence (w2's before its reduce-scatter), and both
// reduce-scatters' sharded outputs.
TEST(SelectiveOpRecompute, ALayerKeepsItsSavedOutputsUnderSequenceParallelism) {
  const ModelSpec model = llama3_8bModel();
  const double s = 4096.0;
  const double shard_h = 2.0 * s * 4096.0 / 2.0;
  const double expected = shard_h                                                 // input
                          + 2.0 * s * (4096.0 + 1024.0 + 4096.0 + 14336.0) / 2.0  // wq, wv, attention, w1
                          + 4.0 * s * 16.0                                        // logsumexp, 16 heads
                          + 2.0 * s * 4096.0                                      // w2
                          + 2.0 * shard_h;                                        // two reduce-scatters
  EXPECT_NEAR(layerActivationBytes(model, shard(1, 4096, 2, true), Recompute::kSelectiveOp, MemoryOptions{}) / expected,
              1.0, 1e-12);
}

}  // namespace
}  // namespace trainsim::parallelism
