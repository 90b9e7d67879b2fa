// The compute model's GEMM timing against published GEMM throughput (`trainsim validate gemm`).
#include "validation/gemm_accuracy.h"
#include "tests/shipped_defaults.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace trainsim::validation {
namespace {

const std::vector<GemmSourceAccuracy>& results() {
  static const std::vector<GemmSourceAccuracy> cached = [] {
    auto computed = compareGemms(ConfigPaths{TRAINSIM_CONFIG_DIR_FOR_TESTS}, shippedCompute());
    if (!computed.ok()) throw std::runtime_error(computed.error().toString());
    return std::move(computed).value();
  }();
  return cached;
}

const GemmSourceAccuracy& source(const std::string& id) {
  for (const auto& accuracy : results()) {
    if (accuracy.source.id == id) return accuracy;
  }
  throw std::runtime_error("no GEMM source " + id);
}

std::string describe(const GemmComparison& row) {
  const MeasuredGemm& m = row.measured;
  return m.gpu + " " + std::to_string(m.m) + "x" + std::to_string(m.n) + "x" + std::to_string(m.k) + ": published " +
         std::to_string(m.tflops) + ", predicted " + std::to_string(row.predicted_tflops);
}

// Azure's cuBLASLt table (A100 FP16, H100 and H200 FP8: 26 shapes). Large shapes (every
// dimension >= 4096) within 8% (worst 4.9%, H200 4096^3); the best large row of each column is
// also where that GPU's ceiling comes from, so for it this checks only that the tile/wave model
// reaches the ceiling on a huge square GEMM. Small or skinny shapes (a dimension < 4096) within
// 25% (worst 21.3%, A100 2048^3): there the kernel the library picks (split-k, stream-k, its own
// tiles) and launch behaviour dominate, which the tile/wave model only approximates. The
// source's MAPE is 5.1%.
TEST(GemmAccuracyTest, PredictsPublishedCublasLtThroughput) {
  const GemmSourceAccuracy& azure = source("azure-cublaslt");
  ASSERT_EQ(azure.rows.size(), 26u);
  EXPECT_TRUE(azure.source.independent);
  for (const GemmComparison& row : azure.rows) {
    const MeasuredGemm& m = row.measured;
    const bool large = std::min({m.m, m.n, m.k}) >= 4096;
    EXPECT_LT(std::abs(row.error), large ? 0.08 : 0.25) << describe(row);
    EXPECT_NEAR(row.error, row.predicted_tflops / m.tflops - 1.0, 1e-12);
  }
  EXPECT_LT(azure.mape, 0.06);
}

// Azure's GB200 FP8 rows: the rows with every dimension >= 8192 within 4% (they and 4096^3 set
// Blackwell's tile overhead, and 16384^3 its ceiling), 4096^3 within 10% (-8.9%: the 4 us
// launch floor on a 48 us kernel), the short-k and skinny rows within 32% (2048^3 -30.6%,
// 1024 x 2145 x 1024 -25.5%, 802816 x 192 x 768 +18.5%): on Blackwell the tile/wave model with
// the launch floor misses small GEMMs by more than on Hopper. MAPE 11.9%.
TEST(GemmAccuracyTest, GB200RowsWithinTheirDocumentedBounds) {
  const GemmSourceAccuracy& gb200 = source("azure-cublaslt-gb200");
  ASSERT_EQ(gb200.rows.size(), 9u);
  EXPECT_FALSE(gb200.source.independent);
  for (const GemmComparison& row : gb200.rows) {
    const MeasuredGemm& m = row.measured;
    const int64_t smallest = std::min({m.m, m.n, m.k});
    const double bound = smallest >= 8192 ? 0.04 : smallest >= 4096 ? 0.10 : 0.32;
    EXPECT_LT(std::abs(row.error), bound) << describe(row);
  }
  EXPECT_LT(gb200.mape, 0.125);
}

// The MAMF best shapes: the model's ceilings are mostly these rates, reached only at the best
// shape of a sweep, so the tile/wave model (its own tile list) may fall short of them there but
// never goes above: a prediction above the published best would mean a ceiling above it. Every
// accelerator of the table that the catalog has is timed.
TEST(GemmAccuracyTest, NeverAboveTheMaximumAchievableMatmulRate) {
  const GemmSourceAccuracy& mamf = source("mamf");
  EXPECT_FALSE(mamf.source.independent);
  EXPECT_EQ(mamf.rows.size(), 14u);
  for (const GemmComparison& row : mamf.rows) {
    EXPECT_LE(row.predicted_tflops, row.measured.tflops * 1.0001) << describe(row);
    EXPECT_GT(row.predicted_tflops, 0.0) << describe(row);
  }
}

// A calibration's compute parameters change the prediction (here: a lower ceiling for H100 FP8).
TEST(GemmAccuracyTest, UsesTheGivenComputeParameters) {
  perf::ComputeParameters lower = shippedCompute();
  for (auto& ceiling : lower.matmul_ceilings) {
    if (ceiling.gpu_key == "h100-sxm" && ceiling.precision == topology::Precision::kFp8) ceiling.tflops /= 2.0;
  }
  const auto computed = compareGemms(ConfigPaths{TRAINSIM_CONFIG_DIR_FOR_TESTS}, lower);
  ASSERT_TRUE(computed.ok()) << computed.error().toString();
  const auto& base = source("azure-cublaslt").rows;
  const auto& halved = computed.value().front().rows;
  ASSERT_EQ(base.size(), halved.size());
  for (std::size_t i = 0; i < base.size(); ++i) {
    const MeasuredGemm& m = base[i].measured;
    if (m.gpu == "h100-sxm" && std::min({m.m, m.n, m.k}) >= 8192) {
      EXPECT_LT(halved[i].predicted_tflops, 0.6 * base[i].predicted_tflops) << describe(base[i]);
    } else if (m.gpu != "h100-sxm") {
      EXPECT_DOUBLE_EQ(halved[i].predicted_tflops, base[i].predicted_tflops) << describe(base[i]);
    }
  }
}

}  // namespace
}  // namespace trainsim::validation
