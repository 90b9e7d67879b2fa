#include "parallelism/transformer_workload.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "tests/parallelism/model_builders.h"

namespace trainsim::parallelism {
namespace {

using testing::gpt3Model;
using testing::gptModel;
using testing::llama3_8bModel;
using testing::mixtralModel;
using testing::shard;
using testing::training;
using topology::Precision;

constexpr double kRelative = 1e-12;

// Megatron-LM's model FLOPs per iteration for GPT (Narayanan et al. SC21, eq. 3 without the
// recompute forward; SPEC.md): 72 B s L h^2 (1 + s/(6h) + V/(12 h L)).
double megatronModelFlops(double batch, double seq, double layers, double hidden, double vocab) {
  return 72.0 * batch * seq * layers * hidden * hidden *
         (1.0 + seq / (6.0 * hidden) + vocab / (12.0 * hidden * layers));
}

// SC21 eq. 3, with full recomputation: 96 B s l h^2 (1 + s/(6h) + V/(16 l h)).
double narayananHardwareFlops(double batch, double seq, double layers, double hidden, double vocab) {
  return 96.0 * batch * seq * layers * hidden * hidden *
         (1.0 + seq / (6.0 * hidden) + vocab / (16.0 * layers * hidden));
}

TEST(TransformerWorkload, Gpt3ModelFlopsMatchMegatronClosedForm) {
  const ModelSpec model = gpt3Model();
  const TrainingSpec spec = training(2048, 1536);
  EXPECT_NEAR(modelFlopsPerIteration(model, spec) / megatronModelFlops(1536, 2048, 96, 12288, 51200), 1.0, kRelative);
}

TEST(TransformerWorkload, SmallGptModelFlopsMatchMegatronClosedForm) {
  const ModelSpec model = gptModel(4, 256, 8, 1000);
  const TrainingSpec spec = training(128, 8);
  EXPECT_NEAR(modelFlopsPerIteration(model, spec) / megatronModelFlops(8, 128, 4, 256, 1000), 1.0, kRelative);
}

TEST(TransformerWorkload, PerLayerFlopsAre72Bsh2PlusAttention) {
  // Per layer 72 B s h^2 (1 + s/(6h)), for a whole micro-batch of 2 sequences on one GPU.
  const ModelSpec model = gptModel(4, 256, 8, 1000);
  const Workload layer = transformerLayer(model, shard(2, 128));
  const double b = 2, s = 128, h = 256;
  const double expected = 72.0 * b * s * h * h * (1.0 + s / (6.0 * h));
  EXPECT_NEAR((layer.forwardFlops(true) + layer.backwardFlops(true)) / expected, 1.0, kRelative);
  const Workload output = outputLayer(model, shard(2, 128));
  EXPECT_NEAR((output.forwardFlops(true) + output.backwardFlops(true)) / (6.0 * b * s * h * 1000.0), 1.0, kRelative);
}

TEST(TransformerWorkload, FullRecomputeHardwareFlopsMatchNarayanan) {
  const ModelSpec model = gpt3Model();
  const TrainingSpec spec = training(2048, 1536);
  EXPECT_NEAR(
      hardwareFlopsPerIteration(model, spec, Recompute::kFull) / narayananHardwareFlops(1536, 2048, 96, 12288, 51200),
      1.0, kRelative);
  // The layer part is 4/3 of the model FLOPs' layer part; the logits are not recomputed.
  const double logits = 6.0 * 1536 * 2048 * 12288 * 51200.0;
  const double model_layers = modelFlopsPerIteration(model, spec) - logits;
  const double hardware_layers = hardwareFlopsPerIteration(model, spec, Recompute::kFull) - logits;
  EXPECT_NEAR(hardware_layers / model_layers, 4.0 / 3.0, kRelative);
}

TEST(TransformerWorkload, SelectiveRecomputeAddsTheAttentionMatmulsForward) {
  // Korthikanti et al.: selective recompute reruns QK^T and attention x V: 4 B s^2 h per layer.
  const ModelSpec model = gptModel(4, 256, 8, 1000);
  const TrainingSpec spec = training(128, 8);
  const double extra = 4.0 * 8 * 128.0 * 128.0 * 256.0 * 4;
  EXPECT_NEAR(hardwareFlopsPerIteration(model, spec, Recompute::kSelective) - modelFlopsPerIteration(model, spec),
              extra, extra * kRelative);
  EXPECT_EQ(hardwareFlopsPerIteration(model, spec, Recompute::kNone), modelFlopsPerIteration(model, spec));
}

TEST(TransformerWorkload, UnfusedAttentionCountsTheSameModelFlops) {
  const ModelSpec model = gptModel(4, 256, 8, 1000);
  const TrainingSpec spec = training(128, 8);
  FlopsOptions unfused;
  unfused.fused_attention = false;
  EXPECT_NEAR(modelFlopsPerIteration(model, spec, unfused) / modelFlopsPerIteration(model, spec), 1.0, kRelative);
  const Workload layer = transformerLayer(model, shard(1, 128), unfused);
  ASSERT_NE(layer.find("attention_scores"), nullptr);
  ASSERT_NE(layer.find("attention_softmax"), nullptr);
  ASSERT_NE(layer.find("attention_dropout"), nullptr);  // gpt trains with dropout
  ASSERT_NE(layer.find("attention_context"), nullptr);
  EXPECT_EQ(layer.find("flash_attention"), nullptr);
  // Scores: per head, (s x d) x (d x s).
  EXPECT_EQ(layer.find("attention_scores")->forward_gemms.front(), (GemmShape{128, 128, 32, 8}));
  EXPECT_EQ(layer.find("attention_context")->forward_gemms.front(), (GemmShape{128, 32, 128, 8}));
}

TEST(TransformerWorkload, FlashAttentionExecutesTheCausalHalfAndRecomputesScores) {
  ModelSpec model = gptModel(4, 256, 8, 1000);
  model.attention_dropout = 0.0;
  const Workload layer = transformerLayer(model, shard(1, 128));
  const Op* flash = layer.find("flash_attention");
  ASSERT_NE(flash, nullptr);
  const double counted = 4.0 * 128 * 128 * 256;  // scores + context, in full
  EXPECT_DOUBLE_EQ(flash->forward.flops, counted);
  EXPECT_DOUBLE_EQ(flash->forward.executed_flops, counted / 2.0);
  EXPECT_DOUBLE_EQ(flash->backward.flops, 2.0 * counted);
  EXPECT_DOUBLE_EQ(flash->backward.executed_flops, 2.5 * counted / 2.0);
  EXPECT_EQ(flash->backward_gemms.size(), 5u);
  EXPECT_TRUE(flash->core_attention);
}

TEST(TransformerWorkload, AttentionDropoutSlowsTheFusedKernelOnly) {
  const ModelSpec model = gptModel(4, 256, 8, 1000);
  ModelSpec no_dropout = model;
  no_dropout.attention_dropout = 0.0;
  const Workload without = transformerLayer(no_dropout, shard(1, 128));
  const Workload with = transformerLayer(model, shard(1, 128));
  const Op* plain = without.find("flash_attention");
  const Op* dropped = with.find("flash_attention");
  ASSERT_NE(plain, nullptr);
  ASSERT_NE(dropped, nullptr);
  // Same counted FLOPs, more executed work: forward at 80%, backward at 65% of the rate.
  EXPECT_DOUBLE_EQ(dropped->forward.flops, plain->forward.flops);
  EXPECT_DOUBLE_EQ(dropped->forward.executed_flops, plain->forward.executed_flops / 0.80);
  EXPECT_DOUBLE_EQ(dropped->backward.executed_flops, plain->backward.executed_flops / 0.65);
  // Llama (no dropout) is untouched.
  const Workload llama = transformerLayer(llama3_8bModel(), shard(1, 4096, 4, true));
  const Op* flash = llama.find("flash_attention");
  ASSERT_NE(flash, nullptr);
  EXPECT_DOUBLE_EQ(flash->forward.executed_flops, flash->forward.flops / 2.0);
}

TEST(TransformerWorkload, DropoutFollowsTheModelNotItsArchitecture) {
  const auto has = [](const Workload& layer, std::string_view name) {
    return layer.find(std::string(name)) != nullptr;
  };
  FlopsOptions unfused;
  unfused.fused_attention = false;
  ModelSpec gpt = gptModel(4, 256, 8, 1000);
  EXPECT_TRUE(has(transformerLayer(gpt, shard(1, 128), unfused), "attention_dropout"));
  // Without dropout: no attention-dropout kernel, and the residual adds store no masks.
  const double with_bytes = transformerLayer(gpt, shard(1, 128)).find("attention_residual")->forward.bytes;
  gpt.hidden_dropout = 0.0;
  gpt.attention_dropout = 0.0;
  EXPECT_FALSE(has(transformerLayer(gpt, shard(1, 128), unfused), "attention_dropout"));
  const double without_bytes = transformerLayer(gpt, shard(1, 128)).find("attention_residual")->forward.bytes;
  EXPECT_LT(without_bytes, with_bytes);
  // A llama model given attention dropout runs it inside the fused kernel.
  ModelSpec llama = llama3_8bModel();
  llama.attention_dropout = 0.1;
  const Workload llama_layer = transformerLayer(llama, shard(1, 4096, 4, true));  // outlives `flash`
  const Op* flash = llama_layer.find("flash_attention");
  ASSERT_NE(flash, nullptr);
  EXPECT_DOUBLE_EQ(flash->forward.executed_flops, flash->forward.flops / 2.0 / 0.80);
}

TEST(TransformerWorkload, BackwardMatmulsAreTwiceForward) {
  const Workload layer = transformerLayer(llama3_8bModel(), shard(1, 4096, 4, true));
  for (const Op& op : layer.ops) {
    if (!op.matmul) continue;
    EXPECT_DOUBLE_EQ(op.backward.flops, 2.0 * op.forward.flops) << op.name;
    double forward_shapes = 0.0;
    for (const GemmShape& gemm : op.forward_gemms) forward_shapes += gemm.flops();
    EXPECT_DOUBLE_EQ(forward_shapes, op.forward.flops) << op.name;
  }
}

TEST(TransformerWorkload, LlamaLayerUsesGqaAndSwiGlu) {
  // 2 s h (q + 2 kv) + 2 s q h + 4 s^2 q + 3 x 2 s h f, forward, per sequence.
  const ModelSpec model = llama3_8bModel();
  const double s = 4096, h = 4096, q = 4096, kv = 1024, f = 14336;
  const double expected = 2 * s * h * (q + 2 * kv) + 2 * s * q * h + 4 * s * s * q + 6 * s * h * f;
  const Workload layer = transformerLayer(model, shard(1, 4096));
  EXPECT_NEAR(layer.forwardFlops(true) / expected, 1.0, kRelative);
  ASSERT_NE(layer.find("rope"), nullptr);
  EXPECT_EQ(layer.find("attention_dropout"), nullptr);
  EXPECT_EQ(layer.find("mlp_gate_up")->forward_gemms.front(), (GemmShape{4096, 2 * 14336, 4096, 1}));
  // Three GEMMs when gate and up are not fused; the same FLOPs.
  FlopsOptions separate;
  separate.fuse_gate_up = false;
  const Workload three = transformerLayer(model, shard(1, 4096), separate);
  int gemms = 0;
  for (const Op& op : three.ops) gemms += op.kind == OpKind::kGemm && op.name.starts_with("mlp_") ? 1 : 0;
  EXPECT_EQ(gemms, 3);
  EXPECT_NEAR(three.forwardFlops(true) / layer.forwardFlops(true), 1.0, kRelative);
}

TEST(TransformerWorkload, Fp8QuantizesTransformerEngineLinearsAndKeepsTheOutputLayerSixteenBit) {
  const ModelSpec model = llama3_8bModel();
  const double s = 4096, h = 4096, q = 4096, kv = 1024, f = 14336;
  const FlopsOptions options;
  const double per_element = options.fp8_quantize_bytes_per_element;
  // tp 2 with sequence parallelism: column-parallel layers quantize their input shard before
  // the all-gather, row-parallel ones their output-gradient shard.
  const MicroBatchShard fp8 = shard(1, 4096, 2, true, 1, 1, Precision::kFp8);
  const Workload layer = transformerLayer(model, fp8, options);
  const auto quantize = [&](const std::string& gemm) -> const Op& {
    const Op* op = layer.find(gemm + "_fp8_quantize");
    EXPECT_NE(op, nullptr) << gemm;
    return *op;
  };
  EXPECT_DOUBLE_EQ(quantize("qkv_projection").forward.bytes, per_element * s * h / 2);
  EXPECT_DOUBLE_EQ(quantize("qkv_projection").backward.bytes, per_element * s * (q + 2 * kv) / 2);
  EXPECT_DOUBLE_EQ(quantize("attention_output_projection").forward.bytes, per_element * s * q / 2);
  EXPECT_DOUBLE_EQ(quantize("attention_output_projection").backward.bytes, per_element * s * h / 2);
  EXPECT_DOUBLE_EQ(quantize("mlp_gate_up").forward.bytes, per_element * s * h / 2);
  EXPECT_DOUBLE_EQ(quantize("mlp_gate_up").backward.bytes, per_element * s * 2 * f / 2);
  EXPECT_DOUBLE_EQ(quantize("mlp_fc2").forward.bytes, per_element * s * f / 2);
  EXPECT_DOUBLE_EQ(quantize("mlp_fc2").backward.bytes, per_element * s * h / 2);
  for (const Op& op : layer.ops) EXPECT_FALSE(op.sixteen_bit_matmul) << op.name;
  // The output layer is a plain matmul: 16-bit, no quantization.
  const Workload output = outputLayer(model, fp8, options);
  ASSERT_NE(output.find("logits"), nullptr);
  EXPECT_TRUE(output.find("logits")->sixteen_bit_matmul);
  EXPECT_EQ(output.find("logits_fp8_quantize"), nullptr);
  // Where FP8 GEMMs take either layout (Blackwell) the cast writes no transposed copy: one
  // byte per element less, and the same GEMMs.
  FlopsOptions any_layout = options;
  any_layout.fp8_transposed_copies = false;
  const Workload blackwell = transformerLayer(model, fp8, any_layout);
  EXPECT_DOUBLE_EQ(blackwell.find("mlp_fc2_fp8_quantize")->forward.bytes, (per_element - 1.0) * s * f / 2);
  EXPECT_DOUBLE_EQ(blackwell.find("qkv_projection_fp8_quantize")->backward.bytes,
                   (per_element - 1.0) * s * (q + 2 * kv) / 2);
  EXPECT_DOUBLE_EQ(blackwell.forwardFlops(true), layer.forwardFlops(true));
  // Delayed scaling (the default: read 2, write 1 + 1) against current scaling, which reads
  // the tensor once more for its amax first.
  EXPECT_DOUBLE_EQ(per_element, 4.0);
  FlopsOptions current = options;
  current.fp8_current_scaling = true;
  const Workload current_layer = transformerLayer(model, fp8, current);
  EXPECT_DOUBLE_EQ(current_layer.find("mlp_fc2_fp8_quantize")->forward.bytes, (per_element + 2.0) * s * f / 2);
  EXPECT_DOUBLE_EQ(current_layer.find("qkv_projection_fp8_quantize")->backward.bytes,
                   (per_element + 2.0) * s * (q + 2 * kv) / 2);
  // bf16: nothing to quantize, and the same model FLOPs.
  const Workload bf16 = transformerLayer(model, shard(1, 4096, 2, true));
  for (const Op& op : bf16.ops) EXPECT_FALSE(op.name.ends_with("_fp8_quantize")) << op.name;
  EXPECT_DOUBLE_EQ(bf16.forwardFlops(true), layer.forwardFlops(true));
}

TEST(TransformerWorkload, HeadDimWiderThanHiddenOverHeads) {
  // Qwen3-style: head_dim 128 with 32 heads on hidden 2048, so queryDim = 4096 != hidden.
  ModelSpec model = llama3_8bModel();
  model.hidden_size = 2048;
  const Workload layer = transformerLayer(model, shard(1, 1024, 2));
  EXPECT_EQ(layer.find("qkv_projection")->forward_gemms.front(), (GemmShape{1024, (4096 + 2 * 1024) / 2, 2048, 1}));
  EXPECT_EQ(layer.find("attention_output_projection")->forward_gemms.front(), (GemmShape{1024, 2048, 4096 / 2, 1}));
}

TEST(TransformerWorkload, TensorParallelShapesFollowMegatronSplits) {
  const ModelSpec model = gpt3Model();
  const Workload layer = transformerLayer(model, shard(1, 2048, 8));
  // Column-parallel: outputs split; row-parallel: inputs split.
  EXPECT_EQ(layer.find("qkv_projection")->forward_gemms.front(), (GemmShape{2048, 3 * 12288 / 8, 12288, 1}));
  EXPECT_EQ(layer.find("attention_output_projection")->forward_gemms.front(), (GemmShape{2048, 12288, 1536, 1}));
  EXPECT_EQ(layer.find("mlp_fc1")->forward_gemms.front(), (GemmShape{2048, 49152 / 8, 12288, 1}));
  EXPECT_EQ(layer.find("mlp_fc2")->forward_gemms.front(), (GemmShape{2048, 12288, 49152 / 8, 1}));
  // Backward: input gradient (m x n) x (n x k) and weight gradient (k x m) x (m x n).
  EXPECT_EQ(layer.find("mlp_fc1")->backward_gemms,
            (std::vector<GemmShape>{{2048, 12288, 49152 / 8, 1}, {12288, 49152 / 8, 2048, 1}}));
  // 12 heads per rank.
  EXPECT_EQ(layer.find("flash_attention")->forward_gemms.front(), (GemmShape{2048, 2048, 128, 12}));
}

TEST(TransformerWorkload, ShardsAddUpToTheWholeLayer) {
  const ModelSpec gpt = gpt3Model();
  const Workload whole = transformerLayer(gpt, shard(2, 2048));
  const std::vector<std::tuple<int64_t, int64_t, bool>> splits = {
      {8, 1, false}, {8, 1, true}, {4, 2, true}, {1, 4, false}};
  for (const auto& [tp, cp, sp] : splits) {
    const Workload part = transformerLayer(gpt, shard(2, 2048, tp, sp, cp));
    const auto ranks = static_cast<double>(tp * cp);
    EXPECT_NEAR(part.forwardFlops(true) * ranks / whole.forwardFlops(true), 1.0, kRelative)
        << "tp " << tp << " cp " << cp;
    EXPECT_NEAR(part.backwardFlops(true) * ranks / whole.backwardFlops(true), 1.0, kRelative);
  }
  // Norms and residual adds run on tokens / tp only with sequence parallelism.
  const double with_sp = transformerLayer(gpt, shard(1, 2048, 8, true)).find("input_norm")->forward.bytes;
  const double without = transformerLayer(gpt, shard(1, 2048, 8, false)).find("input_norm")->forward.bytes;
  EXPECT_DOUBLE_EQ(without, 8.0 * with_sp);
}

TEST(TransformerWorkload, TensorParallelCommunication) {
  const ModelSpec model = gpt3Model();
  const double activation = 2048.0 * 12288 * 2;  // s h, bf16
  const Workload plain = transformerLayer(model, shard(1, 2048, 8, false));
  int all_reduces = 0;
  for (const auto& comm : plain.communications) {
    EXPECT_EQ(comm.op, perf::CollectiveOp::kAllReduce);
    EXPECT_DOUBLE_EQ(comm.bytes, activation);
    ++all_reduces;
  }
  EXPECT_EQ(all_reduces, 4);  // two forward, two backward (Megatron's f and g operators)
  const Workload sp = transformerLayer(model, shard(1, 2048, 8, true));
  int gathers = 0;
  int scatters = 0;
  for (const auto& comm : sp.communications) {
    gathers += comm.op == perf::CollectiveOp::kAllGather ? 1 : 0;
    scatters += comm.op == perf::CollectiveOp::kReduceScatter ? 1 : 0;
  }
  EXPECT_EQ(gathers, 6);  // 2 forward, 2 output-gradient gathers, 2 regathers of the stored input
  EXPECT_EQ(scatters, 4);
  EXPECT_TRUE(transformerLayer(model, shard(1, 2048)).communications.empty());
}

TEST(TransformerWorkload, ContextParallelRingPassesKeysAndValues) {
  const ModelSpec model = llama3_8bModel();
  const Workload layer = transformerLayer(model, shard(1, 8192, 1, false, 4));
  int beside = 0;
  int returns = 0;
  for (const auto& comm : layer.communications) {
    EXPECT_EQ(comm.group, ParallelGroup::kContext);
    EXPECT_EQ(comm.op, perf::CollectiveOp::kSendRecv);
    EXPECT_DOUBLE_EQ(comm.bytes, 2.0 * 2048 * 1024 * 2);  // K and V of 2048 tokens, 8 x 128 wide, bf16
    if (comm.beside_attention) {
      EXPECT_EQ(comm.count, 3);  // one per step after the first
      ++beside;
    } else {
      // The finished dK, dV back to the chunk's rank, after the last step.
      EXPECT_EQ(comm.name, "ring_attention_dkv_return");
      EXPECT_TRUE(comm.backward);
      EXPECT_EQ(comm.count, 1);
      ++returns;
    }
  }
  EXPECT_EQ(beside, 3);  // K, V forward; K, V and dK, dV backward
  EXPECT_EQ(returns, 1);
  // Queries s / cp against all s keys.
  EXPECT_EQ(layer.find("flash_attention")->forward_gemms.front(), (GemmShape{2048, 8192, 128, 32}));
}

TEST(TransformerWorkload, MoeLayerRoutesTopKTokensToLocalExperts) {
  const ModelSpec model = mixtralModel();
  const double s = 4096, h = 4096, f = 14336;
  // Expert parallel over 8 ranks: one local expert gets s x top_k x ep / experts = 8192 tokens.
  const Workload layer = transformerLayer(model, shard(1, 4096, 1, false, 1, 8));
  const Op* gate_up = layer.find("moe_expert_gate_up");
  ASSERT_NE(gate_up, nullptr);
  EXPECT_EQ(gate_up->forward_gemms.front(), (GemmShape{8192, 2 * 14336, 4096, 1}));
  EXPECT_DOUBLE_EQ(gate_up->forward.flops, 2.0 * s * 2 * h * 2 * f);
  EXPECT_EQ(layer.find("moe_router")->forward_gemms.front(), (GemmShape{4096, 8, 4096, 1}));
  double dispatch = 0.0;
  int all_to_alls = 0;
  for (const auto& comm : layer.communications) {
    if (comm.op != perf::CollectiveOp::kAllToAll) continue;
    ++all_to_alls;
    dispatch = comm.bytes;
  }
  EXPECT_EQ(all_to_alls, 4);                    // dispatch and combine, forward and backward
  EXPECT_DOUBLE_EQ(dispatch, s * 2 * h * 2.0);  // every token twice (top-2), bf16
  // Model FLOPs count top_k experts per token, whatever ep.
  const Workload whole = transformerLayer(model, shard(1, 4096));
  EXPECT_NEAR(layer.forwardFlops(true) / whole.forwardFlops(true), 1.0, kRelative);
  const double expected = 2 * s * h * (4096 + 2 * 1024) + 2 * s * 4096 * h + 4 * s * s * 4096 +
                          2 * s * h * 8 /* router */ + 2 * 6 * s * h * f /* two experts */;
  EXPECT_NEAR(whole.forwardFlops(true) / expected, 1.0, kRelative);
}

TEST(TransformerWorkload, MoeTensorParallelSplitsExpertsAndGathersTokens) {
  const Workload layer = transformerLayer(mixtralModel(), shard(1, 4096, 2, true, 1, 4));
  // 2 local experts, tokens all-gathered over tp: 4096 x 2 x 4 / 8 = 4096 per expert; width / tp.
  EXPECT_EQ(layer.find("moe_expert_fc2")->forward_gemms.front(), (GemmShape{4096, 4096, 14336 / 2, 2}));
  // The router sees the sequence-parallel tokens only.
  EXPECT_EQ(layer.find("moe_router")->forward_gemms.front(), (GemmShape{2048, 8, 4096, 1}));
}

TEST(TransformerWorkload, EmbeddingAndOutputLayers) {
  const ModelSpec model = gpt3Model();
  const Workload input = embeddingLayer(model, shard(1, 2048, 8, true));
  EXPECT_NE(input.find("token_embedding"), nullptr);
  EXPECT_NE(input.find("position_embedding"), nullptr);
  EXPECT_NE(input.find("embedding_dropout"), nullptr);
  EXPECT_DOUBLE_EQ(input.forwardFlops(true), 0.0);  // lookups are not matmuls
  const Workload llama_input = embeddingLayer(llama3_8bModel(), shard(1, 2048));
  EXPECT_EQ(llama_input.find("position_embedding"), nullptr);  // RoPE lives in the layers
  const Workload output = outputLayer(model, shard(1, 2048, 8, true));
  EXPECT_EQ(output.find("logits")->forward_gemms.front(), (GemmShape{2048, 51200 / 8, 12288, 1}));
  ASSERT_NE(output.find("cross_entropy_loss"), nullptr);
  EXPECT_EQ(output.find("cross_entropy_loss")->kind, OpKind::kLoss);
  EXPECT_NE(output.find("final_norm"), nullptr);
}

TEST(TransformerWorkload, CrossEntropyMovesTheLogitsAsMegatronsKernelsDo) {
  // Megatron's vocab_parallel_cross_entropy: fp16 logits cast to fp32, then max, subtract,
  // exp, sum, divide over fp32 (38 bytes per logit forward); backward multiply in fp32 and
  // cast back (14 bytes).
  const ModelSpec model = gpt3Model();
  const Workload output = outputLayer(model, shard(1, 2048, 8, true));
  const Op* loss = output.find("cross_entropy_loss");
  ASSERT_NE(loss, nullptr);
  const double logits = 2048.0 * 51200.0 / 8.0;
  EXPECT_DOUBLE_EQ(loss->forward.bytes, 38.0 * logits);
  EXPECT_DOUBLE_EQ(loss->backward.bytes, 14.0 * logits);
}

TEST(TransformerWorkload, FusedCrossEntropyPassesOverTheSixteenBitLogitsOnceEachWay) {
  // Transformer Engine's Triton cross-entropy: forward reads each 16-bit logit once (online
  // softmax), backward reads it and writes its gradient in place: 2 and 4 bytes per logit.
  FlopsOptions fused;
  fused.fused_cross_entropy = true;
  const Workload output = outputLayer(gpt3Model(), shard(1, 2048, 8, true), fused);
  const Op* loss = output.find("cross_entropy_loss");
  ASSERT_NE(loss, nullptr);
  const double logits = 2048.0 * 51200.0 / 8.0;
  EXPECT_DOUBLE_EQ(loss->forward.bytes, 2.0 * logits);
  EXPECT_DOUBLE_EQ(loss->backward.bytes, 4.0 * logits);
  // The loss FLOPs (outside model FLOPs) do not depend on the kernel.
  const Workload unfused = outputLayer(gpt3Model(), shard(1, 2048, 8, true));
  EXPECT_DOUBLE_EQ(loss->forward.flops, unfused.find("cross_entropy_loss")->forward.flops);
}

TEST(TransformerWorkload, EmbeddingTableGradientIsDenseAndBackwardOnly) {
  const ModelSpec model = gpt3Model();
  const Workload input = embeddingLayer(model, shard(1, 2048, 8, true));
  const Op* table = input.find("embedding_table_gradient");
  ASSERT_NE(table, nullptr);
  EXPECT_DOUBLE_EQ(table->forward.bytes, 0.0);
  // Zero-filled 16-bit gradient of the rank's vocabulary shard, added to the fp32 main grad.
  EXPECT_DOUBLE_EQ(table->backward.bytes, 12.0 * 51200.0 / 8.0 * 12288.0);
}

TEST(TransformerWorkload, GemmEpilogueBytesAreTheOutputTiles) {
  const ModelSpec model = gpt3Model();
  const Op fc1 = *transformerLayer(model, shard(1, 2048, 8)).find("mlp_fc1");
  // Forward: the 16-bit output (tokens x 4h/tp). Backward: the input gradient (tokens x h)
  // and the fp32 main-gradient read-modify-write of the weight (h x 4h/tp, 8 bytes).
  const double tokens = 2048.0, hidden = 12288.0, width = 4.0 * 12288.0 / 8.0;
  EXPECT_DOUBLE_EQ(fc1.forward.epilogue_bytes, 2.0 * tokens * width);
  EXPECT_DOUBLE_EQ(fc1.backward.epilogue_bytes, 2.0 * tokens * hidden + 8.0 * hidden * width);
}

TEST(TransformerWorkload, TensorParallelOverlapTakesSmsFromTheOverlappedGemms) {
  const ModelSpec model = gpt3Model();
  FlopsOptions options;
  options.tp_comm_overlap = true;
  const Workload layer = transformerLayer(model, shard(1, 2048, 8, true), options);
  const auto forward = [&](const char* op) { return layer.find(op)->forward_gemms.at(0); };
  const auto backward = [&](const char* op, std::size_t gemm) { return layer.find(op)->backward_gemms.at(gemm); };
  // Transformer Engine defaults: ring-exchange all-gathers on the copy engines (1 SM), the
  // pipelined reduce-scatters and the bulk overlaps on 16 SMs; a row-parallel weight
  // gradient runs beside nothing.
  EXPECT_DOUBLE_EQ(forward("qkv_projection").comm_compute_units, 1.0);
  EXPECT_DOUBLE_EQ(backward("qkv_projection", 0).comm_compute_units, 16.0);
  EXPECT_DOUBLE_EQ(backward("qkv_projection", 1).comm_compute_units, 16.0);
  EXPECT_DOUBLE_EQ(forward("attention_output_projection").comm_compute_units, 16.0);
  EXPECT_DOUBLE_EQ(backward("mlp_fc2", 0).comm_compute_units, 1.0);
  EXPECT_DOUBLE_EQ(backward("mlp_fc2", 1).comm_compute_units, 0.0);
  // The pipeline and bulk overlaps plan their GEMMs for the SMs left (set_sm_margin); the
  // ring exchange does not.
  EXPECT_FALSE(forward("qkv_projection").comm_sm_margin);
  EXPECT_TRUE(backward("qkv_projection", 0).comm_sm_margin);
  EXPECT_TRUE(forward("attention_output_projection").comm_sm_margin);
  EXPECT_FALSE(backward("mlp_fc2", 0).comm_sm_margin);
  // Without sequence parallelism (no overlap possible) or without the option: nothing taken.
  const Workload plain = transformerLayer(model, shard(1, 2048, 8, true));
  EXPECT_DOUBLE_EQ(plain.find("mlp_fc1")->backward_gemms.at(0).comm_compute_units, 0.0);
  const Workload no_sp = transformerLayer(model, shard(1, 2048, 8, false), options);
  EXPECT_DOUBLE_EQ(no_sp.find("mlp_fc1")->backward_gemms.at(0).comm_compute_units, 0.0);
}

// A recipe's userbuffers settings (the DGX Cloud GPT-3 175B preset) land on their own GEMMs:
// the input- and weight-gradient GEMMs of one op apart, and a reduce-scatter moved onto the
// ring exchange splits its GEMM into tp chunks and binds its collective with that method.
TEST(TransformerWorkload, TensorParallelOverlapFollowsTheConfigGemmByGemm) {
  const ModelSpec model = gpt3Model();
  FlopsOptions options;
  options.tp_comm_overlap = true;
  auto& config = options.tp_overlap_config;
  config[TpOverlapGemm::kQkvDgrad] = {TpOverlapMethod::kBulk, 4, 4, false};
  config[TpOverlapGemm::kQkvWgrad] = {TpOverlapMethod::kBulk, 8, 4, false};
  config[TpOverlapGemm::kProjFprop] = {TpOverlapMethod::kPipeline, 24, 2, true};
  config[TpOverlapGemm::kFc2Fprop] = {TpOverlapMethod::kRingExchange, 1, 4, true};
  const Workload layer = transformerLayer(model, shard(1, 2048, 4, true), options);
  const Op& qkv = *layer.find("qkv_projection");
  EXPECT_DOUBLE_EQ(qkv.backward_gemms.at(0).comm_compute_units, 4.0);
  EXPECT_DOUBLE_EQ(qkv.backward_gemms.at(1).comm_compute_units, 8.0);
  EXPECT_FALSE(qkv.backward_gemms.at(1).comm_sm_margin);
  const GemmShape& projection = layer.find("attention_output_projection")->forward_gemms.at(0);
  EXPECT_DOUBLE_EQ(projection.comm_compute_units, 24.0);
  EXPECT_EQ(projection.chunks, 2);
  const GemmShape& fc2 = layer.find("mlp_fc2")->forward_gemms.at(0);
  EXPECT_DOUBLE_EQ(fc2.comm_compute_units, 1.0);
  EXPECT_TRUE(fc2.comm_sm_margin);
  EXPECT_EQ(fc2.chunks, 4);  // tp
  // The ring exchange leaves the tp partial outputs to a reduction kernel: it reads all of
  // them (tokens x hidden) and writes this rank's shard; the pipelined method needs none.
  const Op* reduction = layer.find("mlp_output_ring_reduction");
  ASSERT_NE(reduction, nullptr);
  EXPECT_DOUBLE_EQ(reduction->forward.bytes, 2048.0 * 12288.0 * (2.0 + 2.0 / 4.0));
  EXPECT_DOUBLE_EQ(reduction->backward.bytes, 0.0);
  EXPECT_EQ(layer.find("attention_output_ring_reduction"), nullptr);
  for (const Communication& comm : layer.communications) {
    if (comm.name == "mlp_output_reduce_scatter") {
      ASSERT_TRUE(comm.beside.has_value());
      EXPECT_EQ(comm.beside->method, TpOverlapMethod::kRingExchange);
      EXPECT_EQ(comm.beside->chunks, 4);
    }
    if (comm.name == "attention_output_reduce_scatter") {
      ASSERT_TRUE(comm.beside.has_value());
      EXPECT_EQ(comm.beside->method, TpOverlapMethod::kPipeline);
      EXPECT_EQ(comm.beside->chunks, 2);
    }
  }
}

TEST(TransformerWorkload, TensorParallelOverlapSplitsTheGemmsBesideRingExchangesAndPipelines) {
  const ModelSpec model = gpt3Model();
  FlopsOptions options;
  options.tp_comm_overlap = true;
  const Workload layer = transformerLayer(model, shard(1, 2048, 8, true), options);
  // Ring exchange (QKV and fc1 forward, proj and fc2 input gradient): tp chunks; pipelined
  // reduce-scatter (proj and fc2 forward): 4; bulk overlaps and weight gradients: whole.
  // Transformer Engine issues the chunks on 3 streams.
  const Op& qkv = *layer.find("qkv_projection");
  EXPECT_EQ(qkv.forward_gemms.front().chunks, 8);
  EXPECT_EQ(qkv.forward_gemms.front().concurrent_chunks, 3);
  EXPECT_EQ(qkv.backward_gemms.front().chunks, 1);
  EXPECT_EQ(qkv.backward_gemms.back().chunks, 1);
  const Op& fc2 = *layer.find("mlp_fc2");
  EXPECT_EQ(fc2.forward_gemms.front().chunks, 4);
  EXPECT_EQ(fc2.backward_gemms.front().chunks, 8);  // input gradient beside the gradient's all-gather
  EXPECT_EQ(fc2.backward_gemms.back().chunks, 1);   // weight gradient
  EXPECT_EQ(layer.find("mlp_fc1")->forward_gemms.front().chunks, 8);
  EXPECT_EQ(layer.find("attention_output_projection")->forward_gemms.front().chunks, 4);
  // The split keeps the GEMM: same shape, same FLOPs.
  const Workload plain = transformerLayer(model, shard(1, 2048, 8, true));
  EXPECT_EQ(plain.find("mlp_fc2")->forward_gemms.front().chunks, 1);
  EXPECT_EQ(plain.find("mlp_fc2")->forward_gemms.front().m, fc2.forward_gemms.front().m);
  EXPECT_DOUBLE_EQ(plain.find("mlp_fc2")->forward.flops, fc2.forward.flops);
}

TEST(TransformerWorkload, Fp8HalvesGemmOperandBytes) {
  const ModelSpec model = llama3_8bModel();
  const Op bf16 = *transformerLayer(model, shard(1, 4096)).find("mlp_fc2");
  const Op fp8 = *transformerLayer(model, shard(1, 4096, 1, false, 1, 1, topology::Precision::kFp8)).find("mlp_fc2");
  EXPECT_LT(fp8.forward.bytes, bf16.forward.bytes);
  EXPECT_DOUBLE_EQ(fp8.forward.flops, bf16.forward.flops);
}

}  // namespace
}  // namespace trainsim::parallelism
