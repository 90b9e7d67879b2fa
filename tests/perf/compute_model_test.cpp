// The compute model (perf/compute_model.h): predicted GEMM TFLOP/s against published cuBLASLt
// measurements, the MAMF ceiling, memory-bound and attention kernels, monotonicity, overrides.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "perf/attention_tiles.h"
#include "perf/compute_model.h"
#include "perf/compute_parameters.h"
#include "sim/sim_time.h"
#include "tests/shipped_defaults.h"
#include "topology/gpu_catalog.h"
#include "topology/gpu_spec.h"

namespace trainsim::perf {
namespace {

using topology::GpuCatalog;
using topology::GpuSpec;
using topology::Precision;

const GpuCatalog& catalog() {
  static const GpuCatalog loaded = [] {
    auto result = GpuCatalog::load(std::string(TRAINSIM_CONFIG_DIR_FOR_TESTS) + "/gpus.yaml");
    EXPECT_TRUE(result.ok()) << (result.ok() ? "" : result.error().toString());
    return std::move(result).value();
  }();
  return loaded;
}

const GpuSpec& gpu(const std::string& key) {
  const GpuSpec* spec = catalog().find(key);
  EXPECT_NE(spec, nullptr) << key;
  return *spec;
}

// The kernel-level model: these tests check the kernels at their microbenchmark rates, with
// no training-rate fraction (TrainingRateFraction* below test that).
const ComputeParameters kKernelRates = shippedCompute().atKernelRates();

double gemmBytes(const GemmShape& s, double input_bytes, double output_bytes) {
  const auto m = static_cast<double>(s.m), n = static_cast<double>(s.n), k = static_cast<double>(s.k);
  return (m * k + k * n) * input_bytes + m * n * output_bytes;
}

// Published cuBLASLt throughput (Azure) is the GEMM suite's:
// tests/validation/gemm_accuracy_test.cpp.

TEST(ComputeModel, GemmEpilogueAddsOnAmpereAndHidesOnHopper) {
  const GemmShape shape{802816, 192, 768};
  const double output = 802816.0 * 192.0 * 2.0;
  const double bytes = gemmBytes(shape, 2.0, 2.0);
  // A100: the output tiles are stored after each tile's k-loop (CUTLASS-2-style kernels).
  const ComputeModel a100(gpu("a100-sxm-80gb"), Precision::kFp16, kKernelRates);
  EXPECT_DOUBLE_EQ(a100.gemmEpilogueExposed(), 1.0);
  EXPECT_NEAR(a100.gemmTime(shape, bytes, output) - a100.gemmTime(shape, bytes), output / a100.achievableBandwidth(),
              1e-12);
  // H100: persistent ping-pong kernels overlap one tile's epilogue with the next's math.
  const ComputeModel h100(gpu("h100-sxm"), Precision::kBf16, kKernelRates);
  EXPECT_DOUBLE_EQ(h100.gemmEpilogueExposed(), 0.0);
  EXPECT_DOUBLE_EQ(h100.gemmTime(shape, bytes, output), h100.gemmTime(shape, bytes));
}

TEST(ComputeModel, SixteenBitGemmsOfAnFp8RunRunAtTheSixteenBitRate) {
  // Megatron's output layer stays bf16 in an fp8 run: the fp8 model times it as bf16 does.
  const GemmShape shape{8192, 128256, 4096};
  const double bytes = gemmBytes(shape, 2.0, 2.0);
  const ComputeModel fp8(gpu("h100-sxm"), Precision::kFp8, kKernelRates);
  const ComputeModel bf16(gpu("h100-sxm"), Precision::kBf16, kKernelRates);
  EXPECT_DOUBLE_EQ(fp8.gemmTime(shape, bytes, 0.0, GemmPrecision::kSixteenBit), bf16.gemmTime(shape, bytes));
  EXPECT_LT(fp8.gemmTime(shape, bytes), 0.6 * bf16.gemmTime(shape, bytes));
  // At a 16-bit training precision both rates are the same.
  EXPECT_DOUBLE_EQ(bf16.gemmTime(shape, bytes, 0.0, GemmPrecision::kSixteenBit), bf16.gemmTime(shape, bytes));
}

TEST(ComputeModel, CeilingsAreSteadyStateRatesWherePublishedElseMamf) {
  // Azure cuBLASLt steady state (best row per GPU and precision) where published, else the
  // stas00/ml-engineering MAMF table, against the catalog peaks.
  EXPECT_NEAR(ComputeModel(gpu("a100-sxm-80gb"), Precision::kBf16, kKernelRates).matmulCeiling(), 256.5 / 312.0, 1e-9);
  EXPECT_NEAR(ComputeModel(gpu("a100-sxm-80gb"), Precision::kFp16, kKernelRates).matmulCeiling(), 256.5 / 312.0, 1e-9);
  EXPECT_NEAR(ComputeModel(gpu("h100-sxm"), Precision::kBf16, kKernelRates).matmulCeiling(), 794.5 / 989.4, 1e-9);
  EXPECT_NEAR(ComputeModel(gpu("h100-sxm"), Precision::kFp8, kKernelRates).matmulCeiling(), 1382.2 / 1978.9, 1e-9);
  EXPECT_NEAR(ComputeModel(gpu("h200"), Precision::kFp8, kKernelRates).matmulCeiling(), 1366.3 / 1978.9, 1e-9);
  EXPECT_NEAR(ComputeModel(gpu("mi300x"), Precision::kBf16, kKernelRates).matmulCeiling(), 668.4 / 1307.4, 1e-9);
  EXPECT_NEAR(ComputeModel(gpu("gaudi2"), Precision::kBf16, kKernelRates).matmulCeiling(), 418.7 / 432.0, 1e-9);
  // No fp8 row for MI300X: its bf16 fraction. No row at all for the L40S: the default.
  EXPECT_NEAR(ComputeModel(gpu("mi300x"), Precision::kFp8, kKernelRates).matmulCeiling(), 668.4 / 1307.4, 1e-9);
  EXPECT_DOUBLE_EQ(ComputeModel(gpu("l40s"), Precision::kBf16, kKernelRates).matmulCeiling(),
                   shippedCompute().matmul_ceiling_default);
}

TEST(ComputeModel, EfficiencyNeverExceedsTheCeiling) {
  const std::vector<int64_t> sizes = {1, 7, 64, 100, 128, 192, 255, 256, 1000, 1024, 2145, 4096, 5120, 12288, 65536};
  for (const std::string& key : catalog().keys()) {
    const GpuSpec& spec = gpu(key);
    for (Precision precision : topology::kAllPrecisions) {
      if (!spec.peakTflops(precision)) continue;
      const ComputeModel model(spec, precision, shippedCompute());
      ASSERT_GT(model.matmulCeiling(), 0.0);
      ASSERT_LE(model.matmulCeiling(), 1.0);
      for (int64_t m : sizes) {
        for (int64_t n : sizes) {
          for (int64_t k : {int64_t{1}, int64_t{64}, int64_t{4096}, int64_t{1} << 20}) {
            const double efficiency = model.gemmEfficiency({m, n, k});
            ASSERT_GT(efficiency, 0.0) << key << " " << m << "x" << n << "x" << k;
            ASSERT_LE(efficiency, model.matmulCeiling() * (1.0 + 1e-12)) << key << " " << m << "x" << n << "x" << k;
          }
        }
      }
    }
  }
}

TEST(ComputeModel, CollectivesBesideComputeHoldTheirSms) {
  // NVIDIA/nccl #689: 16 SMs on DGX A100; 24 on H100 (ComputeParameters::collective_sms).
  EXPECT_DOUBLE_EQ(ComputeModel(gpu("a100-sxm-80gb"), Precision::kFp16, kKernelRates).collectiveComputeShare(),
                   16.0 / 108.0);
  EXPECT_DOUBLE_EQ(ComputeModel(gpu("h100-sxm"), Precision::kBf16, kKernelRates).collectiveComputeShare(),
                   24.0 / 132.0);
  // Unmeasured GPUs get DGX A100's share; Gaudi and TPUs move collective data on other engines.
  EXPECT_DOUBLE_EQ(ComputeModel(gpu("mi300x"), Precision::kBf16, kKernelRates).collectiveComputeShare(), 16.0 / 108.0);
  EXPECT_EQ(ComputeModel(gpu("gaudi3"), Precision::kBf16, kKernelRates).collectiveComputeShare(), 0.0);
  EXPECT_EQ(ComputeModel(gpu("tpu-v5e"), Precision::kBf16, kKernelRates).collectiveComputeShare(), 0.0);
  // A collective may not hold every SM.
  ComputeParameters parameters = kKernelRates;
  parameters.collective_sms = {{"h100-sxm", 132.0}};
  const auto model = ComputeModel::create(gpu("h100-sxm"), Precision::kBf16, parameters);
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.error().toString().find("collective SMs"), std::string::npos);
}

TEST(ComputeModel, LargeGemmsApproachTheCeiling) {
  const ComputeModel model(gpu("h100-sxm"), Precision::kBf16, kKernelRates);
  const GemmPlan plan = model.gemmPlan({32768, 32768, 32768});
  EXPECT_GT(plan.efficiency, 0.97 * model.matmulCeiling());
  EXPECT_EQ(plan.tile.m * plan.tile.n, 256 * 128);
  EXPECT_EQ(plan.tiles, (32768 / 256) * (32768 / 128));
  EXPECT_EQ(plan.waves, (plan.tiles + 131) / 132);
}

TEST(ComputeModel, WaveQuantization) {
  // 108 SMs: 108 tiles of 256x128 fill one wave; a 109th tile needs a second wave of the
  // largest tile, or smaller tiles: either way the time jumps well above 109/108.
  const ComputeModel model(gpu("a100-sxm-80gb"), Precision::kBf16, kKernelRates);
  const GemmShape one_wave{256 * 12, 128 * 9, 8192};  // 12 x 9 = 108 tiles
  const GemmPlan full = model.gemmPlan(one_wave);
  EXPECT_EQ(full.tiles, 108);
  EXPECT_EQ(full.waves, 1);
  const GemmShape one_more{256 * 12 + 1, 128 * 9, 8192};
  EXPECT_GT(model.gemmPlan(one_more).seconds, 1.2 * full.seconds);
  // Tile quantization: padding m up to the tile costs as much as the padded shape.
  EXPECT_DOUBLE_EQ(model.gemmPlan({256 * 12 - 100, 128 * 9, 8192}).seconds, full.seconds);
}

// Planned for fewer SMs (cuBLASLt's SM count target, beside an overlapped collective), a
// GEMM spreads its tiles over those in more waves: the 132 tiles of 256 x 128 that fill one
// wave of an H100 take two on 116 SMs; smaller tiles do better, but still worse than the
// proportional 132/116.
TEST(ComputeModel, GemmPlannedForFewerSmsTakesTheirWaves) {
  const ComputeModel model(gpu("h100-sxm"), Precision::kBf16, kKernelRates);
  const GemmShape one_wave{256 * 12, 128 * 11, 8192};  // 12 x 11 = 132 tiles of 256 x 128
  const GemmPlan all = model.gemmPlan(one_wave);
  ASSERT_EQ(all.tiles, 132);
  ASSERT_EQ(all.waves, 1);
  EXPECT_EQ(model.gemmPlan(one_wave, GemmPrecision::kTraining, 132).seconds, all.seconds);  // all of them
  const GemmPlan fewer = model.gemmPlan(one_wave, GemmPrecision::kTraining, 116);
  EXPECT_GT(fewer.seconds, 132.0 / 116.0 * all.seconds * 1.2);
  EXPECT_LE(fewer.seconds, 2.0 * all.seconds);
  // A GEMM of many waves slows about in proportion.
  const GemmShape big{16384, 16384, 8192};
  const double ratio = model.gemmPlan(big, GemmPrecision::kTraining, 116).seconds / model.gemmPlan(big).seconds;
  EXPECT_NEAR(ratio, 132.0 / 116.0, 0.02);
  EXPECT_GT(model.gemmTime(big, 0.0, 0.0, GemmPrecision::kTraining, 116), model.gemmTime(big, 0.0));
}

TEST(ComputeModel, SmallKPaysThePipelineFill) {
  const ComputeModel model(gpu("h100-sxm"), Precision::kFp8, kKernelRates);
  const double deep = model.gemmEfficiency({8192, 8192, 16384});
  const double shallow = model.gemmEfficiency({8192, 8192, 256});
  EXPECT_LT(shallow, 0.6 * deep);
}

TEST(ComputeModel, BiggerGemmNeverTakesLessTime) {
  const std::vector<int64_t> sizes = {1,    50,   64,   127,  128,  129,  200,  256,   257,  1000,
                                      1024, 1500, 2048, 3000, 4096, 5000, 8192, 12288, 16384};
  for (const char* key : {"a100-sxm-80gb", "h100-sxm", "mi300x", "b200"}) {
    const ComputeModel model(gpu(key), Precision::kBf16, kKernelRates);
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      for (std::size_t j = 0; j < sizes.size(); ++j) {
        for (int64_t k : {int64_t{64}, int64_t{1024}, int64_t{8192}}) {
          const GemmShape base{sizes[i], sizes[j], k};
          const double bytes = gemmBytes(base, 2.0, 2.0);
          const double t = model.gemmTime(base, bytes);
          if (i + 1 < sizes.size()) {
            const GemmShape bigger{sizes[i + 1], sizes[j], k};
            ASSERT_GE(model.gemmTime(bigger, gemmBytes(bigger, 2.0, 2.0)), t) << key;
          }
          if (j + 1 < sizes.size()) {
            const GemmShape bigger{sizes[i], sizes[j + 1], k};
            ASSERT_GE(model.gemmTime(bigger, gemmBytes(bigger, 2.0, 2.0)), t) << key;
          }
          const GemmShape deeper{sizes[i], sizes[j], k * 2};
          ASSERT_GE(model.gemmTime(deeper, gemmBytes(deeper, 2.0, 2.0)), t) << key;
          const GemmShape batched{sizes[i], sizes[j], k, 3};
          ASSERT_GE(model.gemmTime(batched, gemmBytes(batched, 2.0, 2.0)), t) << key;
        }
      }
    }
  }
}

TEST(ComputeModel, MemoryBoundKernelRunsAtAchievableBandwidth) {
  // Azure STREAM-like HBM bandwidth, mid-points: A100 1.68 of 2.039 TB/s, H100 3.04 of 3.35,
  // H200 4.24 of 4.8.
  const double bytes = 1.0e9;
  struct Case {
    const char* key;
    double fraction;
  };
  // B200: 6.55-6.72 of 7.7 TB/s (nvbench DeviceTransform); GB200: the default.
  for (const Case& c : {Case{"a100-sxm-80gb", 0.824}, Case{"h100-sxm", 0.907}, Case{"h200", 0.883}, Case{"b200", 0.862},
                        Case{"gb200", shippedCompute().memory_efficiency_default},
                        Case{"l40s", shippedCompute().memory_efficiency_default}}) {
    const GpuSpec& spec = gpu(c.key);
    const ComputeModel model(spec, Precision::kBf16, kKernelRates);
    const double bandwidth = spec.memory_bandwidth_GBps * 1e9 * c.fraction;
    EXPECT_DOUBLE_EQ(model.achievableBandwidth(), bandwidth) << c.key;
    const double expected = bytes / bandwidth + model.launchOverhead();
    EXPECT_DOUBLE_EQ(model.elementwiseTime(bytes), expected) << c.key;
    EXPECT_DOUBLE_EQ(model.time(KernelCost{0.0, bytes}), expected) << c.key;
    // A few FLOPs per byte (LayerNorm-like) do not change it.
    EXPECT_DOUBLE_EQ(model.elementwiseTime(bytes, 4.0 * bytes), expected) << c.key;
  }
  // A memory-bound GEMM shape (matrix-vector) is limited by its bytes too.
  const ComputeModel h100(gpu("h100-sxm"), Precision::kBf16, kKernelRates);
  const GemmShape gemv{16384, 1, 16384};
  const double gemv_bytes = gemmBytes(gemv, 2.0, 2.0);
  EXPECT_DOUBLE_EQ(h100.gemmTime(gemv, gemv_bytes), gemv_bytes / h100.achievableBandwidth() + h100.launchOverhead());
}

TEST(ComputeModel, AttentionUsesTheFlashAttentionEfficiency) {
  // FlashAttention-2 forward on the Azure pages: A100 179.5, H100 327.9, H200 329.3 TFLOP/s.
  const ComputeModel a100(gpu("a100-sxm-80gb"), Precision::kBf16, kKernelRates);
  EXPECT_NEAR(a100.attentionEfficiency(), 179.5 / 312.0, 1e-9);
  const ComputeModel h100(gpu("h100-sxm"), Precision::kBf16, kKernelRates);
  EXPECT_NEAR(h100.attentionEfficiency(), 327.9 / 989.4, 1e-9);
  const double flops = 1.0e13;
  EXPECT_DOUBLE_EQ(h100.attentionTime(flops, 1.0e6), flops / 327.9e12 + h100.launchOverhead());
  EXPECT_DOUBLE_EQ(h100.time(KernelCost::attention(flops, 1.0e6)), h100.attentionTime(flops, 1.0e6));
  // An FP8 run keeps attention in 16 bits: same time as the bf16 model.
  const ComputeModel h100_fp8(gpu("h100-sxm"), Precision::kFp8, kKernelRates);
  EXPECT_DOUBLE_EQ(h100_fp8.attentionPeakFlops(), 989.4e12);
  EXPECT_DOUBLE_EQ(h100_fp8.attentionTime(flops, 1.0e6), h100.attentionTime(flops, 1.0e6));
  EXPECT_NEAR(ComputeModel(gpu("h200"), Precision::kFp8, kKernelRates).attentionEfficiency(), 329.3 / 989.4, 1e-9);
  // No measurement: half of the GPU's matmul ceiling.
  const ComputeModel mi300x(gpu("mi300x"), Precision::kBf16, kKernelRates);
  EXPECT_NEAR(mi300x.attentionEfficiency(), 0.5 * 668.4 / 1307.4, 1e-9);
}

TEST(ComputeModel, AttentionBackwardRunsAtItsOwnMeasuredRate) {
  // cudnn-frontend's sdpa benchmark, BF16 causal, head dim 128, seq 8192: B200 forward
  // 1,384.2 and backward 994.9 TFLOP/s (cuDNN 9.13.1); GB200 1,584 and 1,211 (cuDNN 9.17).
  const double flops = 1.0e13;
  const ComputeModel b200(gpu("b200"), Precision::kFp8, kKernelRates);
  EXPECT_NEAR(b200.attentionEfficiency(AttentionPass::kForward), 1384.2 / 2250.0, 1e-9);
  EXPECT_NEAR(b200.attentionEfficiency(AttentionPass::kBackward), 994.9 / 2250.0, 1e-9);
  EXPECT_NEAR(b200.attentionTime(flops, 1.0e6, AttentionPass::kBackward), flops / 994.9e12 + b200.launchOverhead(),
              1e-12);
  EXPECT_DOUBLE_EQ(b200.time(KernelCost::attention(flops, 1.0e6, AttentionPass::kBackward)),
                   b200.attentionTime(flops, 1.0e6, AttentionPass::kBackward));
  EXPECT_DOUBLE_EQ(b200.time(KernelCost::attention(flops, 1.0e6)), b200.attentionTime(flops, 1.0e6));
  const ComputeModel gb200(gpu("gb200"), Precision::kFp8, kKernelRates);
  EXPECT_NEAR(gb200.attentionEfficiency(AttentionPass::kForward), 1584.0 / 2500.0, 1e-9);
  EXPECT_NEAR(gb200.attentionEfficiency(AttentionPass::kBackward), 1211.0 / 2500.0, 1e-9);
  // One published figure (Azure's FA2) serves both passes on Hopper.
  const ComputeModel h100(gpu("h100-sxm"), Precision::kBf16, kKernelRates);
  EXPECT_DOUBLE_EQ(h100.attentionEfficiency(AttentionPass::kBackward), h100.attentionEfficiency());
  // Rates must be positive in both directions.
  ComputeParameters bad = kKernelRates;
  bad.attention_rates = {{"b200", Precision::kBf16, 1384.2, 0.0}};
  EXPECT_FALSE(ComputeModel::create(gpu("b200"), Precision::kBf16, bad).ok());
}

// Rates measured over sequence length (cudnn-frontend's B200 file, cuDNN 9.13.1): a problem at
// a measured length runs at that row's rate, one between two at the geometric interpolation of
// both rows scaled to it by the tile model, one beyond them at the nearest's; the order the rows
// are listed in names only the reference row.
TEST(ComputeModel, AttentionRatesOverSequenceLengthInterpolate) {
  ComputeParameters parameters = kKernelRates;
  parameters.launch_overhead_us = 0.0;
  const auto at = [](double seq) { return AttentionShape{128.0, seq, seq}; };
  parameters.attention_rates = {{"b200", Precision::kBf16, 1384.2, 994.9, at(8192)},
                                {"b200", Precision::kBf16, 1514.8, 1180.3, at(32768)},
                                {"b200", Precision::kBf16, 1421.9, 1127.7, at(131072)}};
  const ComputeModel model(gpu("b200"), Precision::kBf16, parameters);
  const double flops = 1.0e13;
  const double peak = 2250.0e12;
  const auto rate = [&](const AttentionShape& shape, AttentionPass pass) {
    return flops / model.attentionTime(flops, 0.0, pass, shape) / 1e12;
  };
  EXPECT_NEAR(rate(at(32768), AttentionPass::kForward), 1514.8, 1e-6);
  EXPECT_NEAR(rate(at(131072), AttentionPass::kBackward), 1127.7, 1e-6);
  EXPECT_NEAR(model.attentionEfficiency(AttentionPass::kForward), 1384.2e12 / peak, 1e-12);
  const AttentionTileOverhead overhead = kKernelRates.attentionTileOverhead("b200");
  const auto tiles = [&](const AttentionShape& shape) {
    return attentionTileEfficiency(shape, AttentionPass::kForward, 148, overhead.forward);
  };
  // 16,384 lies halfway (in log length) between 8,192 and 32,768.
  const AttentionShape between = at(16384);
  const double from_low = 1384.2 * tiles(between) / tiles(at(8192));
  const double from_high = 1514.8 * tiles(between) / tiles(at(32768));
  EXPECT_NEAR(rate(between, AttentionPass::kForward), std::sqrt(from_low * from_high), 1e-6);
  // Beyond the rows: the nearest, scaled (fewer heads, a longer sequence).
  const AttentionShape longer{8.0, 262144.0, 262144.0};
  EXPECT_NEAR(rate(longer, AttentionPass::kForward), 1421.9 * tiles(longer) / tiles(at(131072)), 1e-6);
  const AttentionShape shorter{8.0, 2048.0, 2048.0};
  EXPECT_NEAR(rate(shorter, AttentionPass::kForward), 1384.2 * tiles(shorter) / tiles(at(8192)), 1e-6);
  // Listed in another order: the same rates, another reference.
  std::swap(parameters.attention_rates[0], parameters.attention_rates[2]);
  const ComputeModel reordered(gpu("b200"), Precision::kBf16, parameters);
  EXPECT_DOUBLE_EQ(reordered.attentionTime(flops, 0.0, AttentionPass::kForward, between),
                   model.attentionTime(flops, 0.0, AttentionPass::kForward, between));
  EXPECT_NEAR(reordered.attentionEfficiency(AttentionPass::kForward), 1421.9e12 / peak, 1e-12);
  // Two rows at one length, or one without its problem, say nothing over sequence length.
  parameters.attention_rates.push_back({"b200", Precision::kBf16, 1500.0, 1100.0, at(32768)});
  EXPECT_FALSE(ComputeModel::create(gpu("b200"), Precision::kBf16, parameters).ok());
  parameters.attention_rates.back() = {"b200", Precision::kBf16, 1500.0, 1100.0};
  EXPECT_FALSE(ComputeModel::create(gpu("b200"), Precision::kBf16, parameters).ok());
}

// The shipped B200 rows carry cuDNN's falloff beyond 32,768 tokens, which the tile model
// from one row does not: at 131,072 tokens the forward runs slower than at 32,768.
TEST(ComputeModel, ShippedBlackwellAttentionFallsBeyond32kTokens) {
  ComputeParameters parameters = kKernelRates;
  parameters.launch_overhead_us = 0.0;
  for (const std::string key : {"b200", "gb200"}) {
    const ComputeModel model(gpu(key), Precision::kBf16, parameters);
    const auto time = [&](double seq) {
      return model.attentionTime(1.0e13, 0.0, AttentionPass::kForward, {128.0, seq, seq});
    };
    EXPECT_GT(time(131072.0), time(32768.0)) << key;
    EXPECT_LT(time(32768.0), time(8192.0)) << key;
  }
}

TEST(ComputeModel, KernelCostDispatch) {
  const ComputeModel model(gpu("h100-sxm"), Precision::kBf16, kKernelRates);
  const GemmShape shape{4096, 4096, 4096};
  const double bytes = gemmBytes(shape, 2.0, 2.0);
  EXPECT_DOUBLE_EQ(model.time(KernelCost::gemmOf(shape, bytes)), model.gemmTime(shape, bytes));
  EXPECT_DOUBLE_EQ(model.time(KernelCost{0.0, bytes, shape}), model.gemmTime(shape, bytes));
  // Twice the stated FLOPs on the same shape (e.g. a fused pair) take twice the tensor time.
  const double single = model.gemmPlan(shape).seconds;
  EXPECT_NEAR(model.time(KernelCost{2.0 * shape.flops(), 0.0, shape}), 2.0 * single + model.launchOverhead(), 1e-15);
  // A GEMM of unknown shape runs at the ceiling.
  KernelCost unshaped{shape.flops(), 0.0, std::nullopt, KernelKind::kGemm};
  EXPECT_DOUBLE_EQ(model.time(unshaped), shape.flops() / (989.4e12 * model.matmulCeiling()) + model.launchOverhead());
  // Empty work costs the launch only; duration is the time in whole picoseconds.
  EXPECT_DOUBLE_EQ(model.gemmTime({0, 4096, 4096}, 0.0), model.launchOverhead());
  EXPECT_EQ(model.duration(KernelCost::elementwise(0.0)), sim::microsecondsToSimTime(4.0));
  EXPECT_EQ(kernelKindName(KernelKind::kAttention), "attention");
}

TEST(ComputeModel, ParametersAreOverridable) {
  ComputeParameters parameters = kKernelRates;
  parameters.launch_overhead_us = 0.0;
  parameters.tile_fixed_overhead_us = 0.0;
  parameters.matmul_ceilings = {{"h100-sxm", Precision::kBf16, 900.0}};
  parameters.memory_efficiency = {{"h100-sxm", 0.5}};
  const ComputeModel model(gpu("h100-sxm"), Precision::kBf16, parameters);
  EXPECT_NEAR(model.matmulCeiling(), 900.0 / 989.4, 1e-12);
  EXPECT_DOUBLE_EQ(model.launchOverhead(), 0.0);
  EXPECT_DOUBLE_EQ(model.elementwiseTime(1.0e9), 1.0e9 / (3350e9 * 0.5));
  // Without fixed costs a perfectly tiled GEMM runs exactly at the ceiling.
  const GemmShape exact{256 * 132, 128, 4096};  // 132 tiles of 256x128, one wave
  EXPECT_NEAR(model.gemmEfficiency(exact), model.matmulCeiling(), 1e-12);
}

// Blackwell's per-tile fixed cost is its own (tile_fixed_overhead): a one-wave GEMM of 148
// tiles of 256x128 with k = 1024 is tile-bound, and its time is k-loop + the GPU's overhead.
TEST(ComputeModel, BlackwellHasItsOwnTileOverhead) {
  ComputeParameters parameters = kKernelRates;
  parameters.launch_overhead_us = 0.0;
  const ComputeModel blackwell(gpu("gb200"), Precision::kFp8, parameters);
  const GemmShape one_wave{256 * 148, 128, 1024};
  const GemmPlan plan = blackwell.gemmPlan(one_wave);
  ASSERT_EQ(plan.waves, 1);
  const double k_loop = 2.0 * 256 * 128 * 1024 / (blackwell.peakFlops() * blackwell.matmulCeiling() / 148.0);
  EXPECT_NEAR(plan.seconds, k_loop + 0.2e-6, 1e-12);
  parameters.tile_fixed_overhead = {};
  const ComputeModel generic(gpu("gb200"), Precision::kFp8, parameters);
  EXPECT_NEAR(generic.gemmPlan(one_wave).seconds, k_loop + 2.0e-6, 1e-12);
  parameters.tile_fixed_overhead = {{"gb200", -1.0}};
  EXPECT_FALSE(ComputeModel::create(gpu("gb200"), Precision::kFp8, parameters).ok());
}

TEST(ComputeModel, CreateRejectsImpossibleArguments) {
  auto no_fp8 = ComputeModel::create(gpu("a100-sxm-80gb"), Precision::kFp8, kKernelRates);
  ASSERT_FALSE(no_fp8.ok());
  EXPECT_NE(no_fp8.error().message.find("fp8"), std::string::npos) << no_fp8.error().message;
  ComputeParameters no_tiles = kKernelRates;
  no_tiles.gemm_tiles.clear();
  EXPECT_FALSE(ComputeModel::create(gpu("h100-sxm"), Precision::kBf16, no_tiles).ok());
  ComputeParameters bad_fraction = kKernelRates;
  bad_fraction.memory_efficiency = {{"h100-sxm", 1.5}};
  EXPECT_FALSE(ComputeModel::create(gpu("h100-sxm"), Precision::kBf16, bad_fraction).ok());
  EXPECT_TRUE(ComputeModel::create(gpu("h100-sxm"), Precision::kBf16, kKernelRates).ok());
  // A GPU without a published SM count uses the fallback.
  EXPECT_EQ(ComputeModel(gpu("h100-nvl"), Precision::kBf16, kKernelRates).computeUnits(),
            shippedCompute().fallback_compute_units);
}

}  // namespace
}  // namespace trainsim::perf

namespace trainsim::perf {
namespace {

TEST(ComputeModelTest, TrainingRateFractionDividesEveryKernelOfItsGpuOnly) {
  ComputeParameters slower = kKernelRates;
  slower.training_rate_fraction = {{"h100-sxm", 0.8}};
  const ComputeModel base(gpu("h100-sxm"), Precision::kBf16, kKernelRates);
  const ComputeModel calibrated(gpu("h100-sxm"), Precision::kBf16, slower);
  const GemmShape shape{8192, 8192, 8192};
  const double bytes = 3.0 * 8192.0 * 8192.0 * 2.0;
  EXPECT_NEAR(calibrated.gemmTime(shape, bytes) / base.gemmTime(shape, bytes), 1.25, 1e-12);
  EXPECT_NEAR(calibrated.elementwiseTime(1e9) / base.elementwiseTime(1e9), 1.25, 1e-12);
  EXPECT_NEAR(calibrated.attentionTime(1e12, 1e8, AttentionPass::kBackward) /
                  base.attentionTime(1e12, 1e8, AttentionPass::kBackward),
              1.25, 1e-12);
  // Another GPU keeps its kernels' rates.
  const ComputeModel other(gpu("a100-sxm-80gb"), Precision::kBf16, slower);
  const ComputeModel other_base(gpu("a100-sxm-80gb"), Precision::kBf16, kKernelRates);
  EXPECT_DOUBLE_EQ(other.elementwiseTime(1e9), other_base.elementwiseTime(1e9));
}

// The defaults of validation/training_rate_fit.h's fit on the suite (docs/training-validation.md,
// change 34), one per GPU type; parts with no published run share their die's; the rest run
// at the kernels' rates. The microbenchmark comparisons drop them (atKernelRates).
TEST(ComputeModelTest, DefaultTrainingRateFractionsArePerGpuType) {
  const ComputeParameters defaults = shippedCompute();
  for (const char* a100 : {"a100-sxm-80gb", "a100-sxm-40gb", "a100-pcie-80gb"}) {
    EXPECT_DOUBLE_EQ(defaults.trainingRateFraction(a100), 0.969) << a100;
  }
  for (const char* hopper : {"h100-sxm", "h200", "gh200", "h800"}) {
    EXPECT_DOUBLE_EQ(defaults.trainingRateFraction(hopper), 0.883) << hopper;
  }
  EXPECT_DOUBLE_EQ(defaults.trainingRateFraction("b200"), 0.840);
  EXPECT_DOUBLE_EQ(defaults.trainingRateFraction("gb200"), 0.828);
  EXPECT_DOUBLE_EQ(defaults.trainingRateFraction("mi300x"), 1.0);
  EXPECT_DOUBLE_EQ(defaults.atKernelRates().trainingRateFraction("h100-sxm"), 1.0);
  const ComputeModel in_step(gpu("b200"), Precision::kBf16, shippedCompute());
  const ComputeModel kernels(gpu("b200"), Precision::kBf16, kKernelRates);
  EXPECT_NEAR(in_step.elementwiseTime(1e9) / kernels.elementwiseTime(1e9), 1.0 / 0.840, 1e-12);
}

// Under a power limit below the one its rates hold at, a GPU's math runs at (limit /
// rated)^power_clock_exponent of its clocks; memory-bound kernels keep their rate, and a limit
// above the rated one does not raise the clocks.
TEST(ComputeModelTest, APowerLimitSlowsTheMathByItsClockRatioAndNotTheMemory) {
  EXPECT_DOUBLE_EQ(kKernelRates.power_clock_exponent, 0.243);  // configs/defaults/compute.yaml
  GpuSpec capped = gpu("h100-sxm");
  ASSERT_EQ(capped.tdp_W, 700.0);
  capped.power_limit_W = 500.0;
  const double clock = std::pow(500.0 / 700.0, 0.243);
  EXPECT_NEAR(powerLimitClockRatio(capped, kKernelRates), clock, 1e-12);
  const ComputeModel base(gpu("h100-sxm"), Precision::kBf16, kKernelRates);
  const ComputeModel slow(capped, Precision::kBf16, kKernelRates);
  EXPECT_NEAR(slow.clockRatio(), clock, 1e-12);
  const GemmShape shape{8192, 8192, 8192};
  const double launch = kKernelRates.launch_overhead_us * 1e-6;
  EXPECT_NEAR((slow.gemmTime(shape, 0.0) - launch) / (base.gemmTime(shape, 0.0) - launch), 1.0 / clock, 1e-9);
  EXPECT_NEAR((slow.attentionTime(1e12, 0.0) - launch) / (base.attentionTime(1e12, 0.0) - launch), 1.0 / clock, 1e-9);
  EXPECT_DOUBLE_EQ(slow.elementwiseTime(1e9), base.elementwiseTime(1e9));
  // A GEMM's exposed epilogue traffic is memory time: it adds at its own rate, not the clocks'.
  ComputeParameters exposed = kKernelRates;
  exposed.gemm_epilogue_exposed = {{"h100-sxm", 1.0}};
  const ComputeModel base_exposed(gpu("h100-sxm"), Precision::kBf16, exposed);
  const ComputeModel slow_exposed(capped, Precision::kBf16, exposed);
  const double epilogue_bytes = 4e8;
  const double epilogue_s = epilogue_bytes / base_exposed.achievableBandwidth();
  EXPECT_NEAR(slow_exposed.gemmTime(shape, 0.0, epilogue_bytes) - launch,
              (base_exposed.gemmTime(shape, 0.0, epilogue_bytes) - launch - epilogue_s) / clock + epilogue_s, 1e-12);
  // A memory-bound GEMM (its traffic outlasts its math even at the lower clocks) keeps its time.
  const GemmShape thin{8192, 8192, 16};
  const double thin_bytes = 2e10;
  EXPECT_DOUBLE_EQ(slow.gemmTime(thin, thin_bytes), base.gemmTime(thin, thin_bytes));
  // The 500 W H100 96GB carries the H100 SXM's rates, stated at 700 W: capped at its tdp.
  EXPECT_NEAR(powerLimitClockRatio(gpu("h100-sxm-96gb"), kKernelRates), clock, 1e-12);
  // Every other shipped GPU runs at the power its rates hold at.
  EXPECT_DOUBLE_EQ(powerLimitClockRatio(gpu("b200"), kKernelRates), 1.0);
  GpuSpec raised = gpu("h100-sxm");
  raised.power_limit_W = 1000.0;
  EXPECT_DOUBLE_EQ(powerLimitClockRatio(raised, kKernelRates), 1.0);
  // Exponent 0: clocks never follow the limit.
  ComputeParameters flat = kKernelRates;
  flat.power_clock_exponent = 0.0;
  EXPECT_DOUBLE_EQ(powerLimitClockRatio(capped, flat), 1.0);
}

TEST(ComputeModelTest, TrainingRateFractionOutsideItsRangeIsRejected) {
  for (double fraction : {0.1, 5.0, std::nan("")}) {
    ComputeParameters parameters = kKernelRates;
    parameters.training_rate_fraction = {{"h100-sxm", fraction}};
    const auto model = ComputeModel::create(gpu("h100-sxm"), Precision::kBf16, parameters);
    ASSERT_FALSE(model.ok()) << fraction;
    EXPECT_NE(model.error().message.find("training rate fraction"), std::string::npos) << model.error().message;
  }
}

}  // namespace
}  // namespace trainsim::perf
