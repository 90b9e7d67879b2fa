// parallelism.recompute_modules: what recompute: selective reruns, as Megatron-Core's
// --recompute-modules lists it (core_attn by default). Each listed module reruns its forward
// in the backward (its ops, and its tensor-parallel collectives) and keeps only its input.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "parallelism/chunk_workload.h"
#include "parallelism/experiment.h"
#include "parallelism/memory_model.h"
#include "parallelism/pass_work.h"
#include "parallelism/transformer_workload.h"
#include "tests/parallelism/test_support.h"
#include "tests/shipped_simulation_options.h"

namespace trainsim::parallelism {
namespace {

namespace module = recompute_module;

Experiment experiment(const std::string& model, const std::string& parallelism, const std::vector<std::string>& sets) {
  const std::string yaml = "name: recompute-modules\nmodel: " + model +
                           "\ncluster: {gpu: h100-sxm, nodes: 1, gpus_per_node: 8}\n"
                           "training: {seq_len: 4096, global_batch_size: 8, micro_batch_size: 1}\n"
                           "parallelism: " +
                           parallelism + "\n";
  return testing::shippedExperiment(yaml, sets);
}

Experiment gptOss(const std::vector<std::string>& sets) {
  return experiment("gpt-oss-120b", "{tp: 1, pp: 1, ep: 8, zero: 1, recompute: selective}", sets);
}

Experiment llama(const std::vector<std::string>& sets) {
  return experiment("llama3-8b", "{tp: 2, pp: 1, sequence_parallel: true, zero: 1, recompute: selective}", sets);
}

std::vector<std::string> rerunOps(const Workload& workload, uint32_t modules) {
  std::vector<std::string> names;
  for (const Op& op : workload.ops) {
    if (rerunShare(op, Recompute::kSelective, modules) > 0.0) names.push_back(op.name);
  }
  return names;
}

Workload layerWith(const Experiment& experiment, const std::string& op) {
  for (const ChunkPart& part : chunkWorkloads(experiment, 0, 0, FlopsOptions{})) {
    if (part.workload.find(op) != nullptr) return part.workload;
  }
  throw std::runtime_error("no layer with " + op);
}

TEST(RecomputeModules, ReadsMegatronCoresNamesAndDefaultsToTheCoreAttention) {
  EXPECT_EQ(gptOss({}).plan.recompute_modules, module::kCoreAttention);
  const Experiment listed = gptOss({"parallelism.recompute_modules=[moe_act, layernorm]"});
  EXPECT_EQ(listed.plan.recompute_modules, module::kMoeActivation | module::kLayerNorm);
  EXPECT_EQ(recomputeText(listed.plan), "selective (layernorm, moe_act)");
  EXPECT_EQ(recomputeLabel(listed.plan), "sel_mod");
  EXPECT_EQ(recomputeText(gptOss({}).plan), "selective");
  EXPECT_EQ(recomputeText(gptOss({"parallelism.recompute_modules=[]"}).plan), "selective (no modules)");
}

TEST(RecomputeModules, BadListsAreInputErrors) {
  // Only selective recomputation reads the list, as in Megatron-Core: a --set of recompute
  // needs no other change.
  const Experiment full = experiment("llama3-8b", "{tp: 1, recompute: full, recompute_modules: [mlp]}", {});
  EXPECT_EQ(recomputeText(full.plan), "full");
  try {
    gptOss({"parallelism.recompute_modules=[attention]"});
    FAIL() << "an unknown module was accepted";
  } catch (const std::runtime_error& error) {
    EXPECT_EQ(std::string(error.what()),
              "--set parallelism.recompute_modules=[attention]: parallelism.recompute_modules[0]: expected "
              "core_attn, layernorm, moe_act, mla_up_proj, mlp, shared_experts or moe, found \"attention\"");
  }
  // Parts the model lacks, and the whole MoE layer, are refused with the --set that asked.
  auto errorOf = [](const auto& load) {
    try {
      load();
    } catch (const std::runtime_error& error) {
      return std::string(error.what());
    }
    return std::string("<no error>");
  };
  EXPECT_EQ(errorOf([] { return llama({"parallelism.recompute_modules=[moe_act]"}); }),
            "--set parallelism.recompute_modules=[moe_act]: parallelism.recompute_modules: moe_act needs a "
            "mixture-of-experts model; llama3-8b has none");
  EXPECT_EQ(errorOf([] { return llama({"parallelism.recompute_modules=[mla_up_proj]"}); }),
            "--set parallelism.recompute_modules=[mla_up_proj]: parallelism.recompute_modules: mla_up_proj needs "
            "multi-head latent attention; llama3-8b has none");
  EXPECT_EQ(errorOf([] { return gptOss({"parallelism.recompute_modules=[shared_experts]"}); }),
            "--set parallelism.recompute_modules=[shared_experts]: parallelism.recompute_modules: shared_experts "
            "needs a model with shared experts; gpt-oss-120b has none");
  EXPECT_NE(errorOf([] {
              return gptOss({"parallelism.recompute_modules=[moe]"});
            }).find("moe (the whole mixture-of-experts layer, its token dispatch rerun) is not modelled"),
            std::string::npos);
  EXPECT_EQ(errorOf([] { return gptOss({"parallelism.recompute_modules=[moe_act, layernorm]"}); }), "<no error>");
  // Checked whatever recompute reads the list; Megatron-Core's FP8 rule only where it does.
  EXPECT_NE(errorOf([] {
              return gptOss({"parallelism.recompute=full", "parallelism.recompute_modules=[moe]"});
            }),
            "<no error>");
  EXPECT_EQ(errorOf([] {
              return gptOss({"training.precision=fp8", "parallelism.recompute_modules=[moe_act]"});
            }),
            "--set parallelism.recompute_modules=[moe_act]: parallelism.recompute_modules: moe_act and layernorm need "
            "an fp8_recipe other than delayed with fp8 (Megatron-Core refuses them under delayed scaling)");
  EXPECT_EQ(errorOf([] {
              return gptOss(
                  {"training.precision=fp8", "training.fp8_recipe=current", "parallelism.recompute_modules=[moe_act]"});
            }),
            "<no error>");
}

TEST(RecomputeModules, EachModuleRerunsItsOwnOps) {
  const Workload moe = layerWith(gptOss({}), "moe_router");
  using Names = std::vector<std::string>;
  EXPECT_EQ(rerunOps(moe, module::kCoreAttention), Names{"flash_attention"});
  EXPECT_EQ(rerunOps(moe, module::kMoeActivation), (Names{"moe_expert_glu_clamp", "moe_expert_swiglu"}));
  // GPT-OSS's input norm is inside the QKV LayerNormLinear; its pre-MLP norm is a module.
  EXPECT_EQ(rerunOps(moe, module::kLayerNorm), Names{"mlp_norm"});
  const Workload dense = layerWith(llama({}), "mlp_fc2");
  EXPECT_EQ(rerunOps(dense, module::kDenseMlp), (Names{"mlp_norm", "mlp_gate_up", "mlp_swiglu", "mlp_fc2"}));
  EXPECT_TRUE(rerunOps(dense, module::kLayerNorm).empty());
  const Experiment deepseek = experiment("deepseek-v3", "{tp: 1, pp: 1, ep: 8, zero: 1, recompute: selective}", {});
  const Workload latent = layerWith(deepseek, "kv_up_projection");
  // The latent norms are fused into the up projections (Transformer Engine's LayerNormLinear).
  EXPECT_EQ(rerunOps(latent, module::kLatentUpProjection),
            (Names{"q_latent_norm", "q_up_projection", "kv_latent_norm", "kv_up_projection", "rope"}));
  EXPECT_EQ(rerunOps(latent, module::kLayerNorm), Names{"input_norm"});
}

// A dense MLP's recomputation reruns its sequence-parallel all-gather and reduce-scatter.
TEST(RecomputeModules, TheDenseMlpRerunsItsCollectives) {
  const Experiment mlp = llama({"parallelism.recompute_modules=[mlp]"});
  const Experiment attention = llama({});
  class ZeroTimer : public OpTimer {
   public:
    [[nodiscard]] double seconds(const Op&, PassKind) const override { return 0.0; }
    [[nodiscard]] double memoryBoundSeconds(double) const override { return 0.0; }
  } timer;
  auto rerunCalls = [&timer](const Experiment& e) {
    int64_t calls = 0;
    for (const ChunkPart& part : chunkWorkloads(e, 0, 0, FlopsOptions{})) {
      PassWork work;
      addPassWork(
          work, part, e.plan, timer, [](const Communication&) { return 0.0; }, perf::CommunicationParameters{});
      for (const auto& collective : work.collectives) calls += collective.recomputed ? collective.count : 0;
    }
    return calls;
  };
  EXPECT_EQ(rerunCalls(attention), 0);
  EXPECT_EQ(rerunCalls(mlp), 2 * mlp.model.layers);  // the block input's all-gather, the output's reduce-scatter
}

TEST(RecomputeModules, EachModuleKeepsOnlyItsInput) {
  const Experiment base = gptOss({});
  const MicroBatchShard shard = MicroBatchShard::of(base.training, base.plan);
  const LayerKind kind = base.model.layerKind(1);
  const MemoryOptions options;
  auto kept = [&](uint32_t modules) {
    return layerActivationBytes(base.model, shard, Recompute::kSelective, options, kind, modules);
  };
  const double e = 2.0;
  const double tokens = 4096.0;
  const double slots = tokens * 4.0;
  // moe_act: the activation's output (fc2's input) and the clamp's unclamped copy go.
  EXPECT_DOUBLE_EQ(kept(module::kCoreAttention) - kept(module::kCoreAttention | module::kMoeActivation),
                   e * slots * 2880.0 + e * slots * 2.0 * 2880.0);
  // layernorm: the pre-MLP norm's output (the router's input).
  EXPECT_DOUBLE_EQ(kept(module::kCoreAttention) - kept(module::kCoreAttention | module::kLayerNorm),
                   e * tokens * 2880.0);
  // Without core_attn the attention keeps what selective recomputation drops.
  EXPECT_DOUBLE_EQ(kept(0), layerActivationBytes(base.model, shard, Recompute::kNone, options, kind));
  // mla_up_proj: the up projections' inputs (the latent norms' outputs) and Q, K, V.
  const Experiment deepseek = experiment("deepseek-v3", "{tp: 1, pp: 1, ep: 8, zero: 1, recompute: selective}", {});
  const MicroBatchShard latent_shard = MicroBatchShard::of(deepseek.training, deepseek.plan);
  auto latent_kept = [&](uint32_t modules) {
    return layerActivationBytes(deepseek.model, latent_shard, Recompute::kSelective, options,
                                deepseek.model.layerKind(0), modules);
  };
  EXPECT_DOUBLE_EQ(
      latent_kept(module::kCoreAttention) - latent_kept(module::kCoreAttention | module::kLatentUpProjection),
      e * tokens * (1536.0 + 512.0) + e * tokens * 128.0 * (2.0 * 192.0 + 128.0));
  // mlp on a dense layer: only the block input, which the layer counts as the norm's input.
  const Experiment dense = llama({});
  const MicroBatchShard dense_shard = MicroBatchShard::of(dense.training, dense.plan);
  const double width = 14336.0 / 2.0;
  const double dense_tokens = 4096.0;
  EXPECT_DOUBLE_EQ(layerActivationBytes(dense.model, dense_shard, Recompute::kSelective, options,
                                        dense.model.layerKind(0), module::kCoreAttention) -
                       layerActivationBytes(dense.model, dense_shard, Recompute::kSelective, options,
                                            dense.model.layerKind(0), module::kCoreAttention | module::kDenseMlp),
                   e * dense_tokens / 2.0 * 4096.0 + (2.0 * e + e) * dense_tokens * width);
}

TEST(RecomputeModules, RerunningMoreCostsTimeAndFlops) {
  const Experiment attention = gptOss({});
  const Experiment more = gptOss({"parallelism.recompute_modules=[core_attn, moe_act, layernorm]"});
  EXPECT_GT(shippedIterationSeconds(more), shippedIterationSeconds(attention));
  const Experiment mlp = llama({"parallelism.recompute_modules=[core_attn, mlp]"});
  const Experiment dense = llama({});
  EXPECT_GT(hardwareFlopsPerIteration(mlp.model, mlp.training, mlp.plan),
            hardwareFlopsPerIteration(dense.model, dense.training, dense.plan));
}

}  // namespace
}  // namespace trainsim::parallelism
