// One Megatron-Core MoE layer on one 8 x H100 node, forward and backward, against NVIDIA's
// own measurements (configs/validation/moe-layer/megatron-moe-perf-h100.yaml, which says what
// the harness runs and how trainsim reads a case). trainsim's side: the MoE ops of a
// one-layer experiment's op profile (router, top-k, permute, experts, shared expert,
// unpermute) plus its expert-parallel all-to-alls (the breakdown's exposed expert-parallel
// time, two calls in each pass). Never fitted to. The table is printed by
//   ./build/validation_tests --gtest_filter='MoeLayerTimeTest.*'
// and the errors it measured are docs/moe.md's ("One MoE layer against Megatron-Core's
// measurements").
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <map>
#include <string>

#include <fmt/format.h>

#include "base/config_node.h"
#include "parallelism/experiment_loader.h"
#include "parallelism/iteration_simulation.h"
#include "parallelism/op_profile.h"
#include "tests/shipped_simulation_options.h"

namespace trainsim::validation {
namespace {

const ConfigPaths kPaths{TRAINSIM_CONFIG_DIR_FOR_TESTS};

struct LayerTimes {
  double forward_ms = 0.0;
  double backward_ms = 0.0;
};

bool isMoeOp(const std::string& name) { return name.starts_with("moe_") || name.starts_with("shared_expert"); }

// The case's one-layer experiment: a transformer layer whose MLP is the case's MoE layer, on
// one node of `cluster` at ep 8, one micro-batch of the case's tokens per GPU. The gradient
// reduction waits for the backward (no overlap), so that the exposed expert-parallel time
// holds the all-to-alls alone.
std::string experimentYaml(const std::string& cluster, const ConfigNode& model, const ConfigNode& measured) {
  const int64_t hidden = model.child("hidden_size").asPositiveInteger();
  const int64_t ffn = model.child("moe_ffn_hidden_size").asPositiveInteger();
  std::string moe =
      fmt::format("{{experts: {}, top_k: {}, ffn_hidden_size: {}", model.child("experts").asPositiveInteger(),
                  model.child("top_k").asPositiveInteger(), ffn);
  if (auto shared = model.optionalChild("shared_expert_size")) {
    if (shared->asPositiveInteger() % ffn != 0) shared->failExpected("a multiple of moe_ffn_hidden_size");
    moe += fmt::format(", shared_experts: {}", shared->asPositiveInteger() / ffn);
  }
  if (auto groups = model.optionalChild("router_groups")) {
    moe += fmt::format(", router_bias: true, router_groups: {}, router_group_top_k: {}", groups->asPositiveInteger(),
                       model.child("router_group_top_k").asPositiveInteger());
  }
  moe += "}";
  const std::string precision = measured.child("precision").asString();
  // DeepEP and HybridEP are Megatron-Core's flex dispatcher.
  const std::string dispatcher =
      measured.enumeration("dispatcher", {"alltoall", "deepep", "hybridep"}, "alltoall") == "alltoall" ? "alltoall"
                                                                                                       : "flex";
  return fmt::format(R"(
name: moe-layer
model: {{name: moe-layer, architecture: llama, layers: 1, hidden_size: {0}, ffn_hidden_size: {1},
        attention_heads: 8, kv_heads: 8, vocab_size: 256, tied_embeddings: false, moe: {2}}}
cluster: {7}
training: {{seq_len: {3}, global_batch_size: 8, micro_batch_size: 1, precision: {4}{5}, optimizer: adam,
           flash_attention: true}}
parallelism: {{gpus: 8, tp: 1, pp: 1, dp: 8, ep: 8, zero: 1, moe_dispatcher: {6}, overlap_grad_reduce: false}}
)",
                     hidden, ffn, moe, model.child("seq_len").asPositiveInteger(), precision,
                     precision == "fp8" ? ", fp8_recipe: blockwise" : "", dispatcher, cluster);
}

LayerTimes predicted(const std::string& yaml) {
  const parallelism::Experiment experiment = valueOrThrow(parallelism::loadExperimentNode(
      parseConfigText(yaml, "moe-layer.yaml"), kPaths, {parseOverride("cluster.nodes=1")}));
  const parallelism::SimulationOptions options = shippedSimulationOptions();
  const parallelism::IterationResult result = valueOrThrow(parallelism::simulateIteration(experiment, options));
  const parallelism::OpProfile profile = valueOrThrow(parallelism::computeOpProfile(experiment, options));
  LayerTimes times;
  for (const parallelism::OpProfileRow& row : profile.rows) {
    if (!isMoeOp(row.name)) continue;
    times.forward_ms += 1e3 * row.forward_s;
    times.backward_ms += 1e3 * row.backward_s;
  }
  // tp = cp = 1: the exposed tensor/context/expert-parallel time is the all-to-alls', the same
  // two calls in each pass.
  times.forward_ms += 0.5e3 * result.breakdown.tp_comm_exposed;
  times.backward_ms += 0.5e3 * result.breakdown.tp_comm_exposed;
  return times;
}

TEST(MoeLayerTimeTest, MegatronCoresMeasuredMoeLayersStayNearTheirLastMeasuredErrors) {
  // Errors of the time (predicted / measured - 1: positive, predicted slower; forward,
  // backward) as docs/moe.md gives them; each stays within 3 points.
  const std::map<std::string, std::pair<double, double>> documented = {
      {"mixtral_a2a_tp1ep8_bf16", {0.204, 0.299}},       {"mixtral_deepep_tp1ep8_bf16", {0.124, 0.271}},
      {"mixtral_hybridep_tp1ep8_bf16", {0.199, 0.289}},  {"mixtral_a2a_tp1ep8_fp8", {-0.034, 0.025}},
      {"mixtral_deepep_tp1ep8_fp8", {-0.108, -0.007}},   {"mixtral_hybridep_tp1ep8_fp8", {-0.011, 0.032}},
      {"deepseek_a2a_tp1ep8_bf16", {0.253, 0.347}},      {"deepseek_deepep_tp1ep8_bf16", {0.249, 0.359}},
      {"deepseek_hybridep_tp1ep8_bf16", {0.317, 0.399}}, {"deepseek_a2a_tp1ep8_fp8", {-0.020, 0.062}},
      {"deepseek_deepep_tp1ep8_fp8", {-0.067, 0.038}},   {"deepseek_hybridep_tp1ep8_fp8", {0.095, 0.161}},
  };

  const ConfigNode root = loadConfigFile(kPaths.config_dir + "/validation/moe-layer/megatron-moe-perf-h100.yaml");
  const ConfigNode models = root.child("models");
  double sum_abs = 0.0;
  double sum = 0.0;
  int count = 0;
  std::string table =
      "case                            measured fwd / bwd ms   predicted fwd / bwd ms   error fwd / bwd\n";
  for (const ConfigNode& measured : root.child("cases").elements()) {
    const std::string name = measured.child("name").asString();
    const ConfigNode model = models.child(measured.child("model").asString());
    const LayerTimes times = predicted(experimentYaml(root.child("cluster").asString(), model, measured));
    const double forward = measured.child("forward_ms").asNumber();
    const double backward = measured.child("backward_ms").asNumber();
    const double forward_error = times.forward_ms / forward - 1.0;
    const double backward_error = times.backward_ms / backward - 1.0;
    table += fmt::format("{:<31} {:>8.2f} / {:>6.2f}        {:>8.2f} / {:>6.2f}        {:+6.1f}% / {:+6.1f}%\n", name,
                         forward, backward, times.forward_ms, times.backward_ms, 100.0 * forward_error,
                         100.0 * backward_error);
    for (const double error : {forward_error, backward_error}) {
      sum_abs += std::abs(error);
      sum += error;
      ++count;
    }
    ASSERT_TRUE(documented.contains(name)) << name;
    EXPECT_NEAR(forward_error, documented.at(name).first, 0.03) << name;
    EXPECT_NEAR(backward_error, documented.at(name).second, 0.03) << name;
  }
  table +=
      fmt::format("MAPE {:.1f}%, bias {:+.1f}%, over {} passes\n", 100.0 * sum_abs / count, 100.0 * sum / count, count);
  std::cout << table;
  EXPECT_EQ(count, 24);
}

}  // namespace
}  // namespace trainsim::validation
