#include "calibrate/harness/gemm_benchmark.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "calibrate/harness/cuda_support.h"
#include "calibrate/harness/harness_results.h"

namespace trainsim::harness {

namespace {

struct GemmTypes {
  cudaDataType operands;  // A and B
  cudaDataType output;    // C and D
  cublasComputeType_t compute;
};

GemmTypes gemmTypes(topology::Precision precision) {
  switch (precision) {
    case topology::Precision::kFp32: return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F};
    case topology::Precision::kTf32: return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32};
    case topology::Precision::kFp16: return {CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F};
    case topology::Precision::kBf16: return {CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F};
    // Transformer Engine's fp8 GEMMs: e4m3 operands, bf16 output, fp32 accumulation.
    case topology::Precision::kFp8: return {CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F};
    case topology::Precision::kFp64: break;
  }
  throw HarnessFailure(fmt::format("no cuBLASLt GEMM at precision {}", topology::precisionName(precision)));
}

int64_t elementBytes(cudaDataType type) {
  switch (type) {
    case CUDA_R_32F: return 4;
    case CUDA_R_16F:
    case CUDA_R_16BF: return 2;
    case CUDA_R_8F_E4M3: return 1;
    default: throw HarnessFailure("unexpected cudaDataType");
  }
}

// Owns a device allocation.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(int64_t bytes) {
    TRAINSIM_CUDA_CHECK(cudaMalloc(&pointer_, static_cast<std::size_t>(std::max<int64_t>(bytes, 1))));
  }
  ~DeviceBuffer() { cudaFree(pointer_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  [[nodiscard]] void* get() const { return pointer_; }

 private:
  void* pointer_ = nullptr;
};

// Destroys a cuBLASLt descriptor at scope exit.
template <class Handle, cublasStatus_t (*Destroy)(Handle)>
class LtDescriptor {
 public:
  LtDescriptor() = default;
  ~LtDescriptor() {
    if (handle_ != nullptr) Destroy(handle_);
  }
  LtDescriptor(const LtDescriptor&) = delete;
  LtDescriptor& operator=(const LtDescriptor&) = delete;
  Handle* out() { return &handle_; }
  [[nodiscard]] Handle get() const { return handle_; }

 private:
  Handle handle_ = nullptr;
};
using MatmulDesc = LtDescriptor<cublasLtMatmulDesc_t, cublasLtMatmulDescDestroy>;
using LayoutDesc = LtDescriptor<cublasLtMatrixLayout_t, cublasLtMatrixLayoutDestroy>;
using PreferenceDesc = LtDescriptor<cublasLtMatmulPreference_t, cublasLtMatmulPreferenceDestroy>;

// A column-major rows x cols matrix (leading dimension rows), `batch` of them back to back.
void createLayout(LayoutDesc& layout, cudaDataType type, int64_t rows, int64_t cols, int64_t batch) {
  TRAINSIM_CUBLAS_CHECK(
      cublasLtMatrixLayoutCreate(layout.out(), type, static_cast<uint64_t>(rows), static_cast<uint64_t>(cols), rows));
  if (batch == 1) return;
  const auto count = static_cast<int32_t>(batch);
  const int64_t stride = rows * cols;
  TRAINSIM_CUBLAS_CHECK(
      cublasLtMatrixLayoutSetAttribute(layout.get(), CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)));
  TRAINSIM_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(layout.get(), CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                         &stride, sizeof(stride)));
}

}  // namespace

void checkCublas(cublasStatus_t status, const char* call) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  throw HarnessFailure(
      fmt::format("{} failed: {} ({})", call, cublasLtGetStatusString(status), cublasLtGetStatusName(status)));
}

int64_t gemmOperandBytes(topology::Precision precision, int64_t m, int64_t n, int64_t k, int64_t batch) {
  const GemmTypes types = gemmTypes(precision);
  return batch * (elementBytes(types.operands) * (m * k + k * n) + elementBytes(types.output) * m * n);
}

GemmBenchmark::GemmBenchmark(topology::Precision precision, int64_t workspace_bytes, cudaStream_t stream)
    : precision_(precision), stream_(stream), workspace_bytes_(workspace_bytes) {
  (void)gemmTypes(precision);  // fails early on a precision without a GEMM
  TRAINSIM_CUBLAS_CHECK(cublasLtCreate(&handle_));
  TRAINSIM_CUDA_CHECK(cudaMalloc(&workspace_, static_cast<std::size_t>(workspace_bytes_)));
}

GemmBenchmark::~GemmBenchmark() {
  cudaFree(workspace_);
  if (handle_ != nullptr) cublasLtDestroy(handle_);
}

void GemmBenchmark::fillRandom(void* device, int64_t elements, cudaDataType type) {
  const int64_t bytes_per_element = elementBytes(type);
  const int64_t chunk = std::min<int64_t>(elements, int64_t{1} << 22);
  std::vector<unsigned char> host(static_cast<std::size_t>(chunk * bytes_per_element));
  std::mt19937_64 generator(seed_++);
  std::uniform_real_distribution<float> uniform(-1.0F, 1.0F);
  for (int64_t i = 0; i < chunk; ++i) {
    const float value = uniform(generator);
    unsigned char* slot = host.data() + i * bytes_per_element;
    if (type == CUDA_R_32F) {
      std::memcpy(slot, &value, sizeof(value));
    } else if (type == CUDA_R_16F) {
      const __half half = __float2half(value);
      std::memcpy(slot, &half, sizeof(half));
    } else if (type == CUDA_R_16BF) {
      const __nv_bfloat16 bf16 = __float2bfloat16(value);
      std::memcpy(slot, &bf16, sizeof(bf16));
    } else {
      const __nv_fp8_storage_t fp8 = __nv_cvt_float_to_fp8(value, __NV_SATFINITE, __NV_E4M3);
      std::memcpy(slot, &fp8, sizeof(fp8));
    }
  }
  auto* target = static_cast<unsigned char*>(device);
  for (int64_t done = 0; done < elements; done += chunk) {
    const int64_t count = std::min(chunk, elements - done);
    TRAINSIM_CUDA_CHECK(cudaMemcpy(target + done * bytes_per_element, host.data(),
                                   static_cast<std::size_t>(count * bytes_per_element), cudaMemcpyHostToDevice));
  }
}

std::optional<double> GemmBenchmark::medianTimeUs(int64_t m, int64_t n, int64_t k, int64_t batch, int warmup,
                                                  int iterations, std::string& why) {
  const GemmTypes types = gemmTypes(precision_);
  // Column-major view of the row-major C[m x n] = A[m x k] B[k x n]: D (n x m) = W^T (n x k) X (k x m),
  // the weight W stored k x n and transposed (TN), the activations X stored k x m.
  DeviceBuffer weights(batch * k * n * elementBytes(types.operands));
  DeviceBuffer activations(batch * k * m * elementBytes(types.operands));
  DeviceBuffer output(batch * n * m * elementBytes(types.output));
  fillRandom(weights.get(), batch * k * n, types.operands);
  fillRandom(activations.get(), batch * k * m, types.operands);
  TRAINSIM_CUDA_CHECK(
      cudaMemset(output.get(), 0, static_cast<std::size_t>(batch * n * m * elementBytes(types.output))));

  MatmulDesc matmul;
  TRAINSIM_CUBLAS_CHECK(cublasLtMatmulDescCreate(matmul.out(), types.compute, CUDA_R_32F));
  const cublasOperation_t transpose = CUBLAS_OP_T;
  const cublasOperation_t no_transpose = CUBLAS_OP_N;
  TRAINSIM_CUBLAS_CHECK(
      cublasLtMatmulDescSetAttribute(matmul.get(), CUBLASLT_MATMUL_DESC_TRANSA, &transpose, sizeof(transpose)));
  TRAINSIM_CUBLAS_CHECK(
      cublasLtMatmulDescSetAttribute(matmul.get(), CUBLASLT_MATMUL_DESC_TRANSB, &no_transpose, sizeof(no_transpose)));
  LayoutDesc a_layout;
  LayoutDesc b_layout;
  LayoutDesc c_layout;
  createLayout(a_layout, types.operands, k, n, batch);
  createLayout(b_layout, types.operands, k, m, batch);
  createLayout(c_layout, types.output, n, m, batch);

  PreferenceDesc preference;
  TRAINSIM_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(preference.out()));
  const auto workspace = static_cast<uint64_t>(workspace_bytes_);
  TRAINSIM_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(preference.get(), CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                             &workspace, sizeof(workspace)));
  cublasLtMatmulHeuristicResult_t heuristic{};
  int found = 0;
  const cublasStatus_t status =
      cublasLtMatmulAlgoGetHeuristic(handle_, matmul.get(), a_layout.get(), b_layout.get(), c_layout.get(),
                                     c_layout.get(), preference.get(), 1, &heuristic, &found);
  if (status != CUBLAS_STATUS_SUCCESS || found == 0) {
    why = status != CUBLAS_STATUS_SUCCESS ? cublasLtGetStatusString(status) : "no algorithm for this shape";
    return std::nullopt;
  }

  const float alpha = 1.0F;
  const float beta = 0.0F;
  auto run = [&] {
    TRAINSIM_CUBLAS_CHECK(cublasLtMatmul(handle_, matmul.get(), &alpha, weights.get(), a_layout.get(),
                                         activations.get(), b_layout.get(), &beta, output.get(), c_layout.get(),
                                         output.get(), c_layout.get(), &heuristic.algo, workspace_,
                                         static_cast<std::size_t>(workspace_bytes_), stream_));
  };
  for (int i = 0; i < warmup; ++i) run();
  EventSeries events(iterations);
  for (int i = 0; i < iterations; ++i) {
    events.mark(i, stream_);
    run();
  }
  events.mark(iterations, stream_);
  return median(events.durationsUs());
}

}  // namespace trainsim::harness
