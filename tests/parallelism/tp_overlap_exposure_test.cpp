// What tensor-parallel communication overlap leaves exposed beside each GEMM
// (parallelism/tp_overlap_exposure.h), and which GEMM each collective is bound to.
#include "parallelism/tp_overlap_exposure.h"

#include <gtest/gtest.h>

#include "tests/parallelism/model_builders.h"

namespace trainsim::parallelism {
namespace {

using testing::gpt3Model;
using testing::shard;

TEST(TpOverlapExposure, BulkShowsOnlyWhatOutlastsTheGemm) {
  EXPECT_DOUBLE_EQ(overlapExposedSeconds(TpOverlapMethod::kBulk, 1, 3.0, 1.0), 0.0);
  EXPECT_DOUBLE_EQ(overlapExposedSeconds(TpOverlapMethod::kBulk, 1, 1.0, 3.0), 2.0);
}

TEST(TpOverlapExposure, PipelineShowsTheLastChunksReduceScatterAtLeast) {
  // GEMM 4 in 4 chunks of 1, reduce-scatter 2 in chunks of 0.5: the last chunk's follows.
  EXPECT_DOUBLE_EQ(overlapExposedSeconds(TpOverlapMethod::kPipeline, 4, 4.0, 2.0), 0.5);
  // Reduce-scatter 4 after a first GEMM chunk of 0.25: 4.25 against the GEMM's 1.
  EXPECT_DOUBLE_EQ(overlapExposedSeconds(TpOverlapMethod::kPipeline, 4, 1.0, 4.0), 3.25);
}

TEST(TpOverlapExposure, RingExchangeShowsTheLastSlicesGemmAfterTheLastCopy) {
  // The copies (2) end well before the 8 slices' GEMMs (8): nothing shows.
  EXPECT_DOUBLE_EQ(overlapExposedSeconds(TpOverlapMethod::kRingExchange, 8, 8.0, 2.0), 0.0);
  // The copies take 2, then the last slice's GEMM 1/8: 2.125 against the GEMM's 1.
  EXPECT_DOUBLE_EQ(overlapExposedSeconds(TpOverlapMethod::kRingExchange, 8, 1.0, 2.0), 1.125);
}

TEST(TpOverlapExposure, EachCollectiveIsBoundToTheGemmTransformerEngineRunsItBeside) {
  FlopsOptions options;
  options.tp_comm_overlap = true;
  const Workload layer = transformerLayer(gpt3Model(), shard(1, 2048, 8, true), options);
  auto index = [&](std::string_view name) { return static_cast<std::size_t>(layer.find(name) - layer.ops.data()); };
  auto beside = [&](std::string_view name) {
    for (const Communication& comm : layer.communications) {
      if (comm.name == name) return comm.beside;
    }
    ADD_FAILURE() << "no communication " << name;
    return std::optional<GemmOverlap>{};
  };
  using enum TpOverlapMethod;
  const auto gather = beside("attention_input_all_gather");
  ASSERT_TRUE(gather);
  EXPECT_EQ(gather->op, index("qkv_projection"));
  EXPECT_EQ(gather->gemm, 0U);
  EXPECT_EQ(gather->method, kRingExchange);
  EXPECT_EQ(gather->chunks, 8);
  const auto reduce = beside("mlp_output_reduce_scatter");
  ASSERT_TRUE(reduce);
  EXPECT_EQ(reduce->op, index("mlp_fc2"));
  EXPECT_EQ(reduce->method, kPipeline);
  EXPECT_EQ(reduce->chunks, 4);
  const auto gradient_gather = beside("attention_output_grad_all_gather");
  ASSERT_TRUE(gradient_gather);
  EXPECT_EQ(gradient_gather->op, index("attention_output_projection"));
  EXPECT_EQ(gradient_gather->gemm, 0U);  // the input gradient
  EXPECT_EQ(gradient_gather->method, kRingExchange);
  const auto regather = beside("mlp_input_regather");
  ASSERT_TRUE(regather);
  EXPECT_EQ(regather->op, index("mlp_fc1"));
  EXPECT_EQ(regather->gemm, 0U);
  EXPECT_EQ(regather->method, kBulk);
  EXPECT_EQ(regather->chunks, 1);
  const auto gradient_reduce = beside("mlp_input_grad_reduce_scatter");
  ASSERT_TRUE(gradient_reduce);
  EXPECT_EQ(gradient_reduce->gemm, 1U);  // the weight gradient
  EXPECT_EQ(gradient_reduce->method, kBulk);

  // Without the option, and outside Transformer Engine's layers (the output layer's
  // gathers, the loss), nothing is bound.
  for (const Communication& comm : transformerLayer(gpt3Model(), shard(1, 2048, 8, true)).communications) {
    EXPECT_FALSE(comm.beside) << comm.name;
  }
  for (const Communication& comm : outputLayer(gpt3Model(), shard(1, 2048, 8, true), options).communications) {
    EXPECT_FALSE(comm.beside) << comm.name;
  }
}

// Every GEMM kernel takes 1 ms (OpTimer's default shares the op's time among its GEMMs).
class MillisecondPerGemm : public OpTimer {
 public:
  [[nodiscard]] double seconds(const Op& op, PassKind pass) const override {
    return 1e-3 * static_cast<double>((pass == PassKind::kBackward ? op.backward_gemms : op.forward_gemms).size());
  }
  [[nodiscard]] double memoryBoundSeconds(double) const override { return 0.0; }
};

TEST(TpOverlapExposure, SumsTheLayersCollectivesEachAgainstItsOwnGemm) {
  FlopsOptions options;
  options.tp_comm_overlap = true;
  const Workload layer = transformerLayer(gpt3Model(), shard(1, 2048, 8, true), options);
  const MillisecondPerGemm timer;
  // Every collective takes 2 ms: longer than any single GEMM, though far shorter than the
  // layer's compute, which would have hidden them all together.
  const OverlapExposure exposure = tpOverlapExposure(
      layer, timer, [](const Communication&) { return 2e-3; }, 0.0);
  // Forward, per block: the all-gather beside the column-parallel GEMM (ring exchange, 8
  // slices: 2 + 1/8 - 1) and the reduce-scatter beside the row-parallel one (pipeline, 4
  // chunks: 2 + 1/4 - 1).
  EXPECT_NEAR(exposure.forward_s, 2.0 * (1.125e-3 + 1.25e-3), 1e-12);
  // Backward, per block: the gradient all-gather beside the row-parallel input gradient (ring
  // exchange: 1.125), the re-gather and the gradient reduce-scatter beside the column-parallel
  // input and weight gradients (bulk: 1 each).
  EXPECT_NEAR(exposure.backward_s, 2.0 * (1.125e-3 + 1e-3 + 1e-3), 1e-12);
  // Collectives shorter than their GEMMs: only the pipelines' last chunks show.
  const OverlapExposure short_ones = tpOverlapExposure(
      layer, timer, [](const Communication&) { return 0.4e-3; }, 0.0);
  EXPECT_NEAR(short_ones.forward_s, 2.0 * 0.1e-3, 1e-12);
  EXPECT_DOUBLE_EQ(short_ones.backward_s, 0.0);
}

// A reduce-scatter moved onto the ring exchange (the FP8 presets' proj / fc2 forward) sends
// each of its tp chunks' partial outputs on while the next runs: the last one shows, as in
// the pipelined method, but over tp chunks.
TEST(TpOverlapExposure, ARingExchangeReduceScatterShowsItsLastChunk) {
  FlopsOptions options;
  options.tp_comm_overlap = true;
  options.tp_overlap_config[TpOverlapGemm::kProjFprop] = {TpOverlapMethod::kRingExchange, 1, 4, true};
  options.tp_overlap_config[TpOverlapGemm::kFc2Fprop] = {TpOverlapMethod::kRingExchange, 1, 4, true};
  const Workload layer = transformerLayer(gpt3Model(), shard(1, 2048, 8, true), options);
  const MillisecondPerGemm timer;
  const OverlapExposure short_ones = tpOverlapExposure(
      layer, timer, [](const Communication&) { return 0.4e-3; }, 0.0);
  EXPECT_NEAR(short_ones.forward_s, 2.0 * 0.4e-3 / 8.0, 1e-12);
  const OverlapExposure long_ones = tpOverlapExposure(
      layer, timer, [](const Communication&) { return 2e-3; }, 0.0);
  EXPECT_NEAR(long_ones.forward_s, 2.0 * (1.125e-3 + 1.125e-3), 1e-12);
}

// A bulk overlap on few SMs is bounded by their copy rate, not by the links: the fc1 input
// re-gather on 1 SM at 20 GB/s sends 7/8 of 2048 x 12288 x 2 bytes (44 MB) in 2.2 ms, longer
// than its 1 ms GEMM, where the links alone (0.4 ms) would have hidden it.
TEST(TpOverlapExposure, FewSmsBoundASmDrivenCollective) {
  FlopsOptions options;
  options.tp_comm_overlap = true;
  options.tp_overlap_config[TpOverlapGemm::kFc1Dgrad].num_sm = 1;
  const Workload layer = transformerLayer(gpt3Model(), shard(1, 2048, 8, true), options);
  const MillisecondPerGemm timer;
  const auto links = [](const Communication&) { return 0.4e-3; };
  const double sent = 2048.0 * 12288.0 * 2.0 * 7.0 / 8.0;
  const OverlapExposure bounded = tpOverlapExposure(layer, timer, links, 20e9);
  EXPECT_NEAR(bounded.backward_s, sent / 20e9 - 1e-3, 1e-12);
  // Forward: the pipelined reduce-scatters on 16 SMs (320 GB/s: 0.14 ms) and the ring
  // exchanges (copy engines) are not bounded; the pipelines' last chunks show as before.
  EXPECT_NEAR(bounded.forward_s, 2.0 * 0.1e-3, 1e-12);
}

}  // namespace
}  // namespace trainsim::parallelism
