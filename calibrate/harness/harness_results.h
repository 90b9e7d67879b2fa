// What the calibration harness measured: the contents of one results file
// (docs/harness.md, format "trainsim-harness-1"), and how timings become its rows.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "calibrate/harness/group_layouts.h"
#include "perf/collective.h"
#include "topology/gpu_spec.h"

namespace trainsim::harness {

inline constexpr const char* kResultsFormat = "trainsim-harness-1";
inline constexpr const char* kNcclToolName = "trainsim-calib-nccl";
inline constexpr const char* kGemmToolName = "trainsim-calib-gemm";

// The median of `samples` (mean of the two middle values for an even count); asserts non-empty.
[[nodiscard]] double median(std::vector<double> samples);

// One message size of one collective.
struct CollectiveSample {
  int64_t bytes = 0;  // nccl-tests' "size" column
  double time_us = 0.0;
  double algbw_GBps = 0.0;  // bytes / time
  double busbw_GBps = 0.0;  // algbw x nccl-tests' bus factor for the op and group size
};
// time_us > 0, group_size >= 2. busbw factors (nccl-tests doc/PERFORMANCE.md, perf::busBandwidthFactor):
// all_reduce 2(n-1)/n, all_gather / reduce_scatter / all_to_all (n-1)/n, send_recv 1.
[[nodiscard]] CollectiveSample collectiveSample(perf::CollectiveOp op, int64_t group_size, int64_t bytes,
                                                double time_us);

// One (op, layout) sweep.
struct CollectiveSeries {
  perf::CollectiveOp op = perf::CollectiveOp::kAllReduce;
  LayoutKind layout = LayoutKind::kWorld;
  int group_size = 0;
  int nodes = 0;          // nodes one group spans
  int gpus_per_node = 0;  // group members per node
  topology::Precision dtype = topology::Precision::kBf16;
  int warmup = 0;
  int iterations = 0;
  std::vector<CollectiveSample> results;
};

struct NcclResults {
  std::string gpu;           // cudaDeviceProp::name of rank 0's GPU
  std::string cuda_runtime;  // "13.0"
  std::string nccl_version;  // "2.28.9"
  int ranks = 0;
  int nodes = 0;
  int gpus_per_node = 0;
  std::vector<CollectiveSeries> collectives;
};

// One GEMM shape: C[m x n] = A[m x k] B[k x n], `batch` times.
struct GemmSample {
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  int64_t batch = 1;
  double time_us = 0.0;
  double tflops = 0.0;  // 2 m n k batch / time / 1e12
  std::string source;   // "reference" or the experiment's name
};
[[nodiscard]] GemmSample gemmSample(int64_t m, int64_t n, int64_t k, int64_t batch, double time_us, std::string source);

// One device-to-device copy of `bytes`: GBps counts the bytes read plus the bytes written.
struct MemoryBandwidthSample {
  int64_t bytes = 0;
  double time_us = 0.0;
  double GBps = 0.0;  // 2 x bytes / time / 1e9
};
[[nodiscard]] MemoryBandwidthSample memoryBandwidthSample(int64_t bytes, double time_us);

struct GemmResults {
  std::string gpu;
  std::string cuda_runtime;
  topology::Precision precision = topology::Precision::kBf16;
  std::vector<GemmSample> gemm;
  std::vector<MemoryBandwidthSample> memory_bandwidth;
};

}  // namespace trainsim::harness
