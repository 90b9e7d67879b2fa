// ComputeTimer: how the ops of the workload become kernel times on perf::ComputeModel. Here,
// the GEMMs that tp_comm_overlap splits into chunks (FlopsOptions::tp_overlap_compute_streams).
#include "parallelism/compute_timer.h"

#include <gtest/gtest.h>

#include "tests/shipped_defaults.h"
#include "topology/gpu_catalog.h"

namespace trainsim::parallelism {
namespace {

const topology::GpuSpec& h100() {
  static const auto catalog = topology::GpuCatalog::load(std::string(TRAINSIM_CONFIG_DIR_FOR_TESTS) + "/gpus.yaml");
  return *catalog->find("h100-sxm");
}

// Llama 3.1 405B's QKV projection on one tp-8 rank at cp 2: 4,096 tokens, 2,304 outputs, 16,384 inputs.
Op qkv(int64_t chunks, int64_t concurrent) {
  Op op;
  op.name = "qkv_projection";
  op.kind = OpKind::kGemm;
  op.matmul = true;
  GemmShape gemm{4096, 2304, 16384, 1};
  gemm.chunks = chunks;
  gemm.concurrent_chunks = concurrent;
  op.forward.flops = op.forward.executed_flops = gemm.flops();
  op.forward.bytes = 4096.0 * 16384 + 16384.0 * 2304 + 2.0 * 4096 * 2304;
  op.forward_gemms = {gemm};
  return op;
}

const perf::ComputeModel& b200Model() {
  static const auto catalog = topology::GpuCatalog::load(std::string(TRAINSIM_CONFIG_DIR_FOR_TESTS) + "/gpus.yaml");
  static const perf::ComputeModel model(*catalog->find("b200"), topology::Precision::kFp8,
                                        shippedCompute().atKernelRates());
  return model;
}

// A fused attention op: 1 TFLOP executed forward, 2.5 backward, on `pairs` (sequence, head)
// pairs of seq x seq.
Op flashAttention(int64_t pairs, int64_t seq) {
  Op op;
  op.name = "flash_attention";
  op.kind = OpKind::kAttention;
  op.matmul = true;
  op.forward.flops = 2.0e12;
  op.forward.executed_flops = 1.0e12;
  op.backward.flops = 4.0e12;
  op.backward.executed_flops = 2.5e12;
  op.forward_gemms = {GemmShape{seq, seq, 128, pairs}};
  op.backward_gemms = {GemmShape{seq, seq, 128, pairs}};
  return op;
}

// The fused attention kernel: its forward pass (and a recomputed forward) at the forward
// rate, its backward at the backward rate, each measured on its own (B200: cuDNN 1,384.2
// and 994.9 TFLOP/s at batch 1 x 128 heads, seq 8192, the problem given here).
TEST(ComputeTimer, FusedAttentionRunsEachPassAtItsRate) {
  const perf::ComputeModel& model = b200Model();
  const ComputeTimer timer(model);
  const Op op = flashAttention(128, 8192);
  EXPECT_NEAR(timer.seconds(op, PassKind::kForward), 1.0e12 / 1384.2e12 + model.launchOverhead(), 1e-12);
  EXPECT_NEAR(timer.seconds(op, PassKind::kBackward), 2.5e12 / 994.9e12 + model.launchOverhead(), 1e-12);
}

// The problem the kernel runs on is read from its score matmul (sequences x heads pairs of
// queries x keys): the same FLOPs on fewer pairs take longer, by the tile model's efficiency
// ratio (perf/attention_tiles.h) to the B200 row measured at its sequence length (2,048:
// cuDNN 9.13.1, 907.5 TFLOP/s forward on 128 pairs).
TEST(ComputeTimer, FusedAttentionRunsAtItsProblemsTileEfficiency) {
  const perf::ComputeModel& model = b200Model();
  const ComputeTimer timer(model);
  const perf::AttentionShape narrow{24.0, 2048.0, 2048.0};
  const perf::AttentionShape measured{128.0, 2048.0, 2048.0};
  const double overhead = model.parameters().attentionTileOverhead("b200").forward;
  const double ratio = perf::attentionTileEfficiency(narrow, perf::AttentionPass::kForward, 148, overhead) /
                       perf::attentionTileEfficiency(measured, perf::AttentionPass::kForward, 148, overhead);
  EXPECT_LT(ratio, 1.0);
  EXPECT_NEAR(timer.seconds(flashAttention(24, 2048), PassKind::kForward),
              1.0e12 / (907.5e12 * ratio) + model.launchOverhead(), 1e-12);
}

TEST(ComputeTimer, ChunkedGemmsRunAsTheirConcurrentChunksTogether) {
  const perf::ComputeModel model(h100(), topology::Precision::kFp8, shippedCompute().atKernelRates());
  const ComputeTimer timer(model);
  const double whole = timer.seconds(qkv(1, 1), PassKind::kForward);
  // All eight chunks at once fill the GPU as the whole GEMM does.
  EXPECT_NEAR(timer.seconds(qkv(8, 8), PassKind::kForward), whole, 1e-12);
  // One chunk at a time: eight GEMMs of 512 rows, each leaving SMs idle.
  const double one_at_a_time = timer.seconds(qkv(8, 1), PassKind::kForward);
  Op chunk = qkv(1, 1);
  chunk.forward_gemms.front().m = 512;
  chunk.forward.bytes /= 8.0;
  EXPECT_NEAR(one_at_a_time, 8.0 * timer.seconds(chunk, PassKind::kForward), 1e-12);
  // Transformer Engine's three streams: between the two.
  const double three = timer.seconds(qkv(8, 3), PassKind::kForward);
  EXPECT_GT(one_at_a_time, three);
  EXPECT_GT(three, whole);
}

// SMs held by an overlapped collective: with Transformer Engine's SM margin (pipeline and
// bulk overlaps) the GEMM is planned for the SMs left; without it (ring exchange) it is
// planned for the whole GPU and slowed in proportion to the SMs held.
TEST(ComputeTimer, OverlappedCollectiveSmsSlowTheGemmByMarginOrInProportion) {
  const perf::ComputeModel model(h100(), topology::Precision::kFp8, shippedCompute().atKernelRates());
  const ComputeTimer timer(model);
  Op op = qkv(1, 1);
  const double alone = timer.seconds(op, PassKind::kForward);
  GemmShape& gemm = op.forward_gemms.front();
  gemm.comm_compute_units = 16.0;
  gemm.comm_sm_margin = true;
  const double planned = model.gemmTime(perf::GemmShape{gemm.m, gemm.n, gemm.k, gemm.batch}, op.forward.bytes, 0.0,
                                        perf::GemmPrecision::kTraining, 132 - 16);
  EXPECT_DOUBLE_EQ(timer.seconds(op, PassKind::kForward), planned);
  EXPECT_GE(planned, alone);  // here the same: 288 tiles take 3 waves on 132 SMs and on 116
  gemm.comm_sm_margin = false;
  EXPECT_NEAR(timer.seconds(op, PassKind::kForward), alone * 132.0 / 116.0, 1e-15);
}

}  // namespace
}  // namespace trainsim::parallelism
