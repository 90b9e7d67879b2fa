#include "validate/gemm_measurements.h"

namespace trainsim::validate {
namespace {

using topology::Precision;

// Azure/AI-benchmarking-guide, Azure_Results/ND_*_results.md, "GEMM CuBLASLt" (Sep 2024):
// cuBLASLt TFLOP/s with random inputs after 10,000 warm-up iterations, on ND A100 v4 (A100
// SXM 80GB, FP16), ND H100 v5 (H100 SXM, FP8) and ND H200 v5 (H200, FP8). The A100 row at
// 32768^3 is not published. The best large FP8 rows (H100 32768^3, H200 16384^3) and the A100
// 16384^3 row are the steady-state ceilings of sim::ComputeParameters::matmul_ceilings; the
// other rows are independent of the model's parameters.
MeasuredGemmSource azureCublasLt() {
  MeasuredGemmSource source{"azure-cublaslt",
                            "Azure AI-benchmarking-guide cuBLASLt GEMM (A100 FP16, H100 / H200 FP8)",
                            "Azure/AI-benchmarking-guide Azure_Results/ND_*_results.md, \"GEMM CuBLASLt\" (Sep 2024)",
                            true,
                            {}};
  struct Row {
    int64_t m, n, k;
    double a100_fp16, h100_fp8, h200_fp8;  // 0: not published
  };
  constexpr Row kRows[] = {
      {1024, 1024, 1024, 119.4, 274.1, 290.8},      {2048, 2048, 2048, 221.8, 1011.3, 1013.4},
      {4096, 4096, 4096, 228.0, 1216.9, 1249.1},    {8192, 8192, 8192, 253.7, 1290.1, 1300.6},
      {16384, 16384, 16384, 256.5, 1377.3, 1366.3}, {32768, 32768, 32768, 0.0, 1382.2, 1349.5},
      {1024, 2145, 1024, 132.8, 410.7, 407.9},      {6144, 12288, 12288, 250.8, 1351.4, 1318.0},
      {802816, 192, 768, 157.8, 663.8, 717.5},
  };
  for (const Row& row : kRows) {
    if (row.a100_fp16 > 0.0)
      source.rows.push_back({"a100-sxm-80gb", Precision::kFp16, row.m, row.n, row.k, row.a100_fp16});
  }
  for (const Row& row : kRows) source.rows.push_back({"h100-sxm", Precision::kFp8, row.m, row.n, row.k, row.h100_fp8});
  for (const Row& row : kRows) source.rows.push_back({"h200", Precision::kFp8, row.m, row.n, row.k, row.h200_fp8});
  return source;
}

// The same Azure table for ND GB200 v6 (Azure_Results/ND_GB200_v6_results.md: GB200, FP8,
// CUDA 12.8, driver 570.133.20), kept apart from the Ampere/Hopper rows: Blackwell's kernels
// (tensor-memory accumulators, 2-SM tiles) are the ones the tile/wave model fits least. Its
// 16384^3 row is GB200's FP8 ceiling; the 4096^3 and larger rows set Blackwell's tile overhead
// (sim::ComputeParameters::tile_fixed_overhead); the short-k rows are independent.
MeasuredGemmSource azureCublasLtGb200() {
  MeasuredGemmSource source{"azure-cublaslt-gb200",
                            "Azure AI-benchmarking-guide cuBLASLt GEMM (GB200 FP8)",
                            "Azure/AI-benchmarking-guide Azure_Results/ND_GB200_v6_results.md, \"GEMM CuBLASLt (FP8)\"",
                            false,
                            {}};
  constexpr double kRows[][4] = {
      {1024, 1024, 1024, 489.2},  {2048, 2048, 2048, 2243.6},    {4096, 4096, 4096, 2834.6},
      {8192, 8192, 8192, 2876.6}, {16384, 16384, 16384, 2906.9}, {32768, 32768, 32768, 2825.6},
      {1024, 2145, 1024, 1022.2}, {6144, 12288, 12288, 2895.6},  {802816, 192, 768, 1459.5},
  };
  for (const auto& row : kRows) {
    source.rows.push_back({"gb200", Precision::kFp8, static_cast<int64_t>(row[0]), static_cast<int64_t>(row[1]),
                           static_cast<int64_t>(row[2]), row[3]});
  }
  return source;
}

// stas00/ml-engineering compute/accelerator/README.md, "Maximum Achievable Matmul FLOPS
// comparison table" (snapshot 2026-08): the best torch.matmul rate over a shape sweep (mean
// of 100 iterations after 50 warm-up) and the shape that reached it, for the accelerators of
// the GPU catalog. Most of the model's ceilings are these figures, so this source checks that
// the tile/wave model reaches its ceiling at the best shape (the author also warns that the
// rows come from different software versions).
MeasuredGemmSource mamf() {
  return {"mamf",
          "Maximum Achievable Matmul FLOPS (ml-engineering), best shape per accelerator",
          "stas00/ml-engineering compute/accelerator/README.md, \"Maximum Achievable Matmul FLOPS comparison table\"",
          false,
          {
              {"a100-sxm-80gb", Precision::kBf16, 1024, 10240, 5120, 271.2},
              {"a100-pcie-80gb", Precision::kBf16, 2048, 5120, 6144, 252.9},
              {"h100-sxm", Precision::kBf16, 2048, 2048, 13312, 794.5},
              {"h100-sxm", Precision::kFp8, 1024, 9216, 14336, 1402.6},
              {"h200", Precision::kFp8, 1280, 4096, 12032, 1453.4},
              {"gh200", Precision::kBf16, 1024, 15360, 4096, 828.6},
              {"gh200", Precision::kFp8, 1024, 14336, 14336, 1535.0},
              {"b200", Precision::kBf16, 1792, 16128, 3072, 1745.0},
              {"b200", Precision::kFp8, 15360, 4096, 3072, 3432.5},
              {"gb200", Precision::kBf16, 4096, 9728, 2048, 1822.0},
              {"gb200", Precision::kFp8, 19456, 5120, 1536, 3615.6},
              {"mi300x", Precision::kBf16, 10240, 15360, 8192, 668.4},
              {"gaudi2", Precision::kBf16, 14336, 15360, 2048, 418.7},
              {"gaudi3", Precision::kBf16, 16384, 4096, 768, 1243.0},
          }};
}

}  // namespace

GemmElementBytes gemmElementBytes(Precision precision) {
  if (precision == Precision::kFp8) return {1.0, 2.0};
  if (precision == Precision::kFp64) return {8.0, 8.0};
  if (precision == Precision::kFp32 || precision == Precision::kTf32) return {4.0, 4.0};
  return {2.0, 2.0};
}

const std::vector<MeasuredGemmSource>& measuredGemmSources() {
  static const std::vector<MeasuredGemmSource> sources = {azureCublasLt(), azureCublasLtGb200(), mamf()};
  return sources;
}

}  // namespace trainsim::validate
