// parallelism.tp_comm_overlap_config: Transformer Engine's per-GEMM userbuffers settings,
// read in TE's own format, and the errors a wrong one gets.
#include "parallelism/tp_overlap_config.h"

#include <gtest/gtest.h>

#include "parallelism/experiment_loader.h"
#include "tests/parallelism/test_support.h"

namespace trainsim::parallelism {
namespace {

using testing::errorText;
using testing::overrides;
using testing::testPaths;

// llama3-8b on 8 H100 at tp 8 with sequence parallelism and the overlap on.
constexpr const char* kOverlapped = R"(model: llama3-8b
cluster: {gpu: h100-sxm, nodes: 1, gpus_per_node: 8}
training:
  seq_len: 4096
  global_batch_size: 16
parallelism:
  tp: 8
  sequence_parallel: true
  tp_comm_overlap: true
)";

Expected<Experiment> load(const std::string& config, bool overlap = true) {
  std::string text = kOverlapped;
  if (!overlap) text.replace(text.find("tp_comm_overlap: true"), 21, "tp_comm_overlap: false");
  return loadExperimentNode(parseConfigText(text + config, "ub.yaml"), testPaths(), overrides({}));
}

TEST(TpOverlapConfig, DefaultsAreTransformerEngines) {
  const TpCommOverlapConfig config;
  EXPECT_EQ(config[TpOverlapGemm::kQkvFprop], (TpOverlapGemmSettings{TpOverlapMethod::kRingExchange, 1, 4, false}));
  EXPECT_EQ(config[TpOverlapGemm::kFc2Dgrad], (TpOverlapGemmSettings{TpOverlapMethod::kRingExchange, 1, 4, false}));
  EXPECT_EQ(config[TpOverlapGemm::kProjFprop], (TpOverlapGemmSettings{TpOverlapMethod::kPipeline, 16, 4, true}));
  EXPECT_EQ(config[TpOverlapGemm::kFc1Wgrad], (TpOverlapGemmSettings{TpOverlapMethod::kBulk, 16, 4, true}));
  EXPECT_EQ(tpOverlapGemmName(TpOverlapGemm::kFc1Dgrad), "fc1_dgrad");
}

// A recipe's config pasted as it is (NeMo's GPT-3 175B preset, TE's 0 / 1 flags and the keys
// the model does not use); GEMMs it leaves out keep the defaults.
TEST(TpOverlapConfig, ReadsARecipesConfig) {
  auto experiment = load(R"(  tp_comm_overlap_config:
    qkv_wgrad: {method: bulk, num_sm: 8, cga_size: 2, set_sm_margin: 0}
    fc2_dgrad: {method: ring_exchange, aggregate: 1}
    proj_fprop: {method: pipeline, num_sm: 24, cga_size: 2, num_splits: 2, set_sm_margin: 1}
    fc2_fprop: {method: ring_exchange, num_sm: 1, set_sm_margin: true}
)");
  ASSERT_TRUE(experiment.ok()) << experiment.error().toString();
  const TpCommOverlapConfig& config = experiment->plan.tp_comm_overlap_config;
  EXPECT_EQ(config[TpOverlapGemm::kQkvWgrad], (TpOverlapGemmSettings{TpOverlapMethod::kBulk, 8, 4, false}));
  EXPECT_EQ(config[TpOverlapGemm::kProjFprop], (TpOverlapGemmSettings{TpOverlapMethod::kPipeline, 24, 2, true}));
  EXPECT_EQ(config[TpOverlapGemm::kFc2Fprop], (TpOverlapGemmSettings{TpOverlapMethod::kRingExchange, 1, 4, true}));
  EXPECT_EQ(config[TpOverlapGemm::kFc2Dgrad], TpCommOverlapConfig{}[TpOverlapGemm::kFc2Dgrad]);
  EXPECT_EQ(config[TpOverlapGemm::kQkvDgrad], TpCommOverlapConfig{}[TpOverlapGemm::kQkvDgrad]);
}

TEST(TpOverlapConfig, UnknownGemm) {
  EXPECT_EQ(errorText(load("  tp_comm_overlap_config:\n    proj_wgrad: {method: bulk}\n")),
            "ub.yaml:11:5: parallelism.tp_comm_overlap_config.proj_wgrad: unknown key (did you mean 'proj_dgrad'?)");
}

TEST(TpOverlapConfig, MethodTheGemmCannotRun) {
  EXPECT_EQ(errorText(load("  tp_comm_overlap_config:\n    qkv_fprop: {method: bulk}\n")),
            "ub.yaml:11:25: parallelism.tp_comm_overlap_config.qkv_fprop.method: expected ring_exchange (what "
            "Transformer Engine can run beside qkv_fprop), found \"bulk\"");
  EXPECT_EQ(errorText(load("  tp_comm_overlap_config:\n    fc1_wgrad: {method: pipeline}\n")),
            "ub.yaml:11:25: parallelism.tp_comm_overlap_config.fc1_wgrad.method: expected bulk (what Transformer "
            "Engine can run beside fc1_wgrad), found \"pipeline\"");
}

TEST(TpOverlapConfig, NonsenseNumbersAndFlags) {
  EXPECT_NE(errorText(load("  tp_comm_overlap_config:\n    proj_fprop: {num_sm: 0}\n"))
                .find("parallelism.tp_comm_overlap_config.proj_fprop.num_sm: expected"),
            std::string::npos);
  EXPECT_NE(errorText(load("  tp_comm_overlap_config:\n    proj_fprop: {num_splits: -4}\n"))
                .find("parallelism.tp_comm_overlap_config.proj_fprop.num_splits: expected"),
            std::string::npos);
  EXPECT_EQ(errorText(load("  tp_comm_overlap_config:\n    proj_fprop: {set_sm_margin: 2}\n")),
            "ub.yaml:11:33: parallelism.tp_comm_overlap_config.proj_fprop.set_sm_margin: expected true, false, 0 or "
            "1, found \"2\"");
  EXPECT_EQ(errorText(load("  tp_comm_overlap_config:\n    proj_fprop: {num_sms: 8}\n")),
            "ub.yaml:11:18: parallelism.tp_comm_overlap_config.proj_fprop.num_sms: unknown key (did you mean "
            "'num_sm'?)");
}

// More SMs than the GPU has, and settings for an overlap that is off.
TEST(TpOverlapConfig, ChecksAgainstThePlanAndTheGpu) {
  const std::string text = errorText(load("  tp_comm_overlap_config:\n    fc1_wgrad: {num_sm: 132}\n"));
  EXPECT_NE(text.find("parallelism.tp_comm_overlap_config.fc1_wgrad.num_sm"), std::string::npos) << text;
  EXPECT_NE(text.find("expected at most 131"), std::string::npos) << text;
  const std::string off = errorText(load("  tp_comm_overlap_config:\n    fc1_wgrad: {num_sm: 4}\n", false));
  EXPECT_NE(off.find("it needs tp_comm_overlap: true"), std::string::npos) << off;
}

}  // namespace
}  // namespace trainsim::parallelism
