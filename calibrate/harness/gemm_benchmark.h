// Times one GEMM shape with cuBLASLt at a training precision: C[m x n] = A[m x k] B[k x n]
// (`batch` strided products), laid out as PyTorch's Linear runs it (weights transposed: the
// "TN" layout cuBLASLt requires for fp8), fp32 accumulation, the algorithm cuBLASLt's
// heuristic ranks first for the given workspace. Operands hold uniform random values in
// [-1, 1] (all-zero inputs run faster than real ones on power-limited parts).
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <optional>
#include <string>

#include "topology/gpu_spec.h"

namespace trainsim::harness {

void checkCublas(cublasStatus_t status, const char* call);
#define TRAINSIM_CUBLAS_CHECK(call) ::trainsim::harness::checkCublas((call), #call)

// bytes of device memory one shape needs: A, B and C of every batch entry.
[[nodiscard]] int64_t gemmOperandBytes(topology::Precision precision, int64_t m, int64_t n, int64_t k, int64_t batch);

class GemmBenchmark {
 public:
  // Throws HarnessFailure when `precision` has no cuBLASLt path here (fp64) or a call fails.
  GemmBenchmark(topology::Precision precision, int64_t workspace_bytes, cudaStream_t stream);
  ~GemmBenchmark();
  GemmBenchmark(const GemmBenchmark&) = delete;
  GemmBenchmark& operator=(const GemmBenchmark&) = delete;

  // Median time of `iterations` timed runs after `warmup` untimed ones, in microseconds;
  // nullopt (with `why` set) when cuBLASLt has no algorithm for the shape at this precision.
  [[nodiscard]] std::optional<double> medianTimeUs(int64_t m, int64_t n, int64_t k, int64_t batch, int warmup,
                                                   int iterations, std::string& why);

 private:
  void fillRandom(void* device, int64_t elements, cudaDataType type);

  topology::Precision precision_;
  cudaStream_t stream_;
  cublasLtHandle_t handle_ = nullptr;
  void* workspace_ = nullptr;
  int64_t workspace_bytes_ = 0;
  uint64_t seed_ = 0x7261696e73696dULL;
};

}  // namespace trainsim::harness
