// The op-by-op compute profile (parallelism/op_profile.h): it adds up to the compute the event
// simulation runs, and recomputation reruns the transformer layers only (Megatron
// checkpoints inside the transformer block: the embedding, logits and loss run once).
#include "parallelism/op_profile.h"

#include <gtest/gtest.h>

#include <string>

#include "parallelism/experiment_loader.h"
#include "parallelism/iteration_simulation.h"
#include "tests/shipped_simulation_options.h"

namespace trainsim::parallelism {
namespace {

// A small GPT (4 layers, h 1024) on one DGX H100 GPU, or on two as a 2-stage pipeline.
Experiment experiment(const std::string& recompute, int pp = 1, bool flash = true) {
  const std::string yaml =
      "model: {name: small, architecture: gpt, layers: 4, hidden_size: 1024, attention_heads: 16, vocab_size: "
      "32000}\ncluster: dgx-h100\ntraining: {seq_len: 2048, global_batch_size: 4, micro_batch_size: 1, "
      "flash_attention: " +
      std::string(flash ? "true" : "false") + "}\nparallelism: {gpus: " + std::to_string(pp) +
      ", tp: 1, pp: " + std::to_string(pp) + ", dp: 1, recompute: " + recompute + "}\n";
  auto loaded = loadExperimentNode(parseConfigText(yaml, "test.yaml"), ConfigPaths{TRAINSIM_CONFIG_DIR_FOR_TESTS});
  if (!loaded.ok()) throw std::runtime_error(loaded.error().toString());
  return std::move(loaded).value();
}

OpProfile profileOf(const Experiment& e) {
  auto profile = computeOpProfile(e, shippedSimulationOptions());
  if (!profile.ok()) throw std::runtime_error(profile.error().toString());
  return std::move(profile).value();
}

const OpProfileRow& row(const OpProfile& profile, const std::string& name) {
  for (const auto& r : profile.rows) {
    if (r.name == name) return r;
  }
  throw std::runtime_error("no op " + name);
}

TEST(OpProfileTest, AddsUpToTheSimulatedComputeOfOneGpu) {
  for (const char* recompute : {"none", "selective", "full"}) {
    const Experiment e = experiment(recompute);
    SimulationOptions options = shippedSimulationOptions();
    options.every_microbatch = true;
    const auto result = simulateIteration(e, options);
    ASSERT_TRUE(result.ok()) << result.error().toString();
    const OpProfile profile = profileOf(e);
    EXPECT_EQ(profile.microbatches, 4);
    EXPECT_NEAR(profile.total_s(), result->breakdown.compute, 1e-9 * result->breakdown.compute) << recompute;
    EXPECT_GT(profile.optimizer_s, 0.0);
  }
}

TEST(OpProfileTest, FullRecomputeRerunsTheLayersNotTheEmbeddingOrTheLoss) {
  const OpProfile none = profileOf(experiment("none"));
  const OpProfile full = profileOf(experiment("full"));
  for (const char* layer_op : {"qkv_projection", "flash_attention", "mlp_fc1", "mlp_gelu", "input_norm"}) {
    EXPECT_DOUBLE_EQ(row(full, layer_op).recompute_s, row(full, layer_op).forward_s) << layer_op;
    EXPECT_DOUBLE_EQ(row(none, layer_op).recompute_s, 0.0) << layer_op;
  }
  for (const char* once : {"logits", "cross_entropy_loss", "final_norm", "token_embedding", "position_embedding"}) {
    EXPECT_DOUBLE_EQ(row(full, once).recompute_s, 0.0) << once;
    EXPECT_DOUBLE_EQ(row(full, once).total_s(), row(none, once).total_s()) << once;
  }
}

TEST(OpProfileTest, SelectiveRecomputeRerunsTheCoreAttentionOnly) {
  const OpProfile unfused = profileOf(experiment("selective", 1, false));
  for (const char* core : {"attention_scores", "attention_softmax", "attention_dropout", "attention_context"}) {
    EXPECT_DOUBLE_EQ(row(unfused, core).recompute_s, row(unfused, core).forward_s) << core;
  }
  for (const char* other : {"qkv_projection", "mlp_fc1", "logits"}) {
    EXPECT_DOUBLE_EQ(row(unfused, other).recompute_s, 0.0) << other;
  }
  const OpProfile fused = profileOf(experiment("selective"));
  EXPECT_DOUBLE_EQ(row(fused, "flash_attention").recompute_s, row(fused, "flash_attention").forward_s);
}

TEST(OpProfileTest, RowsAreSortedAndCountMatmulFlops) {
  const OpProfile profile = profileOf(experiment("none"));
  for (std::size_t i = 1; i < profile.rows.size(); ++i) {
    EXPECT_GE(profile.rows[i - 1].total_s(), profile.rows[i].total_s());
  }
  // mlp_fc1 per micro-batch: forward 2 t h f, backward twice that; 4 layers, 4 micro-batches.
  const double t = 2048.0, h = 1024.0, f = 4096.0;
  EXPECT_DOUBLE_EQ(row(profile, "mlp_fc1").flops, 4.0 * 4.0 * 3.0 * 2.0 * t * h * f);
}

TEST(OpProfileTest, PicksTheBusiestStage) {
  const Experiment e = experiment("none", 2);
  const OpProfile busiest = profileOf(e);
  ASSERT_EQ(busiest.microbatches, 4);
  // The last stage also runs the logits and the loss over a 32,000-word vocabulary.
  EXPECT_EQ(busiest.stage, 1);
  EXPECT_NO_THROW(row(busiest, "logits"));
  EXPECT_THROW(row(busiest, "token_embedding"), std::runtime_error);
}

}  // namespace
}  // namespace trainsim::parallelism
