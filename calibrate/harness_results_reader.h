// Reading the results files of the calibration harness (calibrate/harness/: trainsim-calib-nccl and
// trainsim-calib-gemm), `format: trainsim-harness-1`. Every key of the format is required
// and unknown keys are errors at file:line:col (strict, like every trainsim input):
//
//   format: trainsim-harness-1
//   tool: trainsim-calib-nccl | trainsim-calib-gemm
//   gpu: "NVIDIA H100 80GB HBM3"
//   cuda_runtime: "13.0"
//   # trainsim-calib-nccl only
//   nccl_version: "2.27.3"
//   ranks: 16
//   nodes: 2
//   gpus_per_node: 8
//   collectives:
//     - op: all_reduce          # all_reduce | all_gather | reduce_scatter | all_to_all | send_recv
//       layout: intra_node      # intra_node | one_per_node | tp_like | dp_like | world
//       group_size: 8
//       nodes: 1                # nodes the group spans
//       gpus_per_node: 8        # group members per node
//       dtype: bf16
//       warmup: 5
//       iterations: 20
//       results:                # bytes = nccl-tests' "size" for the op
//         - {bytes: 1024, time_us: 12.3, algbw_GBps: 0.083, busbw_GBps: 0.146}
//   # trainsim-calib-gemm only
//   precision: bf16
//   gemm:
//     - {m: 8192, n: 8192, k: 8192, time_us: 1234.5, tflops: 890.1, source: reference}
//       # optional `batch: B` (default 1), which trainsim-calib-gemm writes for batched shapes
//   memory_bandwidth:           # bytes read + written
//     - {bytes: 1073741824, time_us: 700.0, GBps: 3067.0}
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "base/expected.h"
#include "calibrate/measured_collective.h"
#include "topology/gpu_spec.h"

namespace trainsim::calibrate {

inline constexpr const char* kHarnessFormat = "trainsim-harness-1";

struct GemmSample {
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  int64_t batch = 1;
  double time_us = 0.0;
  double tflops = 0.0;
  std::string source;  // what the shape stands for (the harness's label)
};

struct MemorySample {
  double bytes = 0.0;  // read + written
  double time_us = 0.0;
  double GBps = 0.0;
};

struct GemmResults {
  std::string source;    // the file's name as given
  std::string gpu_name;  // as the harness printed it
  std::string cuda_runtime;
  topology::Precision precision = topology::Precision::kBf16;
  std::vector<GemmSample> gemm;
  std::vector<MemorySample> memory;
};

struct NcclResults {
  std::string source;
  std::string gpu_name;
  std::string cuda_runtime;
  std::string nccl_version;
  int64_t ranks = 0;
  int64_t nodes = 0;
  int64_t gpus_per_node = 0;
  std::vector<MeasuredCollective> collectives;
};

using HarnessResults = std::variant<NcclResults, GemmResults>;

[[nodiscard]] Expected<HarnessResults> parseHarnessResults(const std::string& text, const std::string& name);

[[nodiscard]] Expected<HarnessResults> loadHarnessResults(const std::string& path);

}  // namespace trainsim::calibrate
