// trainsim-calib-gemm: cuBLASLt GEMMs of an experiment's per-GPU workload and of a reference
// set, plus device memory bandwidth, on one GPU at the training precision; writes the
// results file that `trainsim calibrate --harness` reads (docs/harness.md). Everything that
// needs no GPU (options, shape list, results file) lives in the trainsim::harness library.
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <exception>
#include <iostream>

#include "calibrate/harness/cuda_support.h"
#include "calibrate/harness/gemm_benchmark.h"
#include "calibrate/harness/gemm_harness_plan.h"
#include "calibrate/harness/harness_options.h"
#include "calibrate/harness/harness_results_writer.h"

namespace {

using namespace trainsim;
using namespace trainsim::harness;

constexpr const char* kProgram = "trainsim-calib-gemm";

// Leave this much device memory free (the CUDA context, cuBLASLt's own allocations).
constexpr double kUsableMemoryFraction = 0.9;

int64_t freeDeviceMemory() {
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  TRAINSIM_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  return static_cast<int64_t>(static_cast<double>(free_bytes) * kUsableMemoryFraction);
}

void measureGemms(const GemmHarnessOptions& options, const GemmHarnessPlan& plan, cudaStream_t stream,
                  GemmResults& results) {
  GemmBenchmark benchmark(plan.precision, options.workspace_bytes, stream);
  for (const HarnessGemmShape& shape : plan.shapes) {
    const std::string label =
        fmt::format("m={} n={} k={} batch={} ({})", shape.m, shape.n, shape.k, shape.batch, shape.source);
    const int64_t needed = gemmOperandBytes(plan.precision, shape.m, shape.n, shape.k, shape.batch);
    if (needed > freeDeviceMemory()) {
      std::cerr << fmt::format("{}: skipped {}: needs {:.1f} GiB of device memory\n", kProgram, label,
                               static_cast<double>(needed) / (1 << 30));
      continue;
    }
    std::string why;
    const auto time_us =
        benchmark.medianTimeUs(shape.m, shape.n, shape.k, shape.batch, options.warmup, options.iterations, why);
    if (!time_us) {
      std::cerr << fmt::format("{}: skipped {}: cuBLASLt: {}\n", kProgram, label, why);
      continue;
    }
    results.gemm.push_back(gemmSample(shape.m, shape.n, shape.k, shape.batch, *time_us, shape.source));
    std::cerr << fmt::format("{}: {} {:.1f} us {:.1f} TFLOP/s\n", kProgram, label, *time_us,
                             results.gemm.back().tflops);
  }
}

// cudaMemcpyAsync device to device: each copied byte is read once and written once.
void measureMemoryBandwidth(const GemmHarnessOptions& options, const GemmHarnessPlan& plan, cudaStream_t stream,
                            GemmResults& results) {
  if (plan.memory_bytes.empty()) return;
  int64_t largest = 0;
  for (const int64_t bytes : plan.memory_bytes) {
    if (2 * bytes <= freeDeviceMemory()) largest = std::max(largest, bytes);
  }
  if (largest == 0) {
    std::cerr << fmt::format("{}: memory-bandwidth test skipped: not enough free device memory\n", kProgram);
    return;
  }
  void* source = nullptr;
  void* target = nullptr;
  TRAINSIM_CUDA_CHECK(cudaMalloc(&source, static_cast<std::size_t>(largest)));
  TRAINSIM_CUDA_CHECK(cudaMalloc(&target, static_cast<std::size_t>(largest)));
  try {
    TRAINSIM_CUDA_CHECK(cudaMemset(source, 0x5a, static_cast<std::size_t>(largest)));
    for (const int64_t bytes : plan.memory_bytes) {
      if (bytes > largest) {
        std::cerr << fmt::format("{}: skipped the {} B copy: not enough free device memory\n", kProgram, bytes);
        continue;
      }
      const auto size = static_cast<std::size_t>(bytes);
      for (int i = 0; i < options.warmup; ++i) {
        TRAINSIM_CUDA_CHECK(cudaMemcpyAsync(target, source, size, cudaMemcpyDeviceToDevice, stream));
      }
      EventSeries events(options.iterations);
      for (int i = 0; i < options.iterations; ++i) {
        events.mark(i, stream);
        TRAINSIM_CUDA_CHECK(cudaMemcpyAsync(target, source, size, cudaMemcpyDeviceToDevice, stream));
      }
      events.mark(options.iterations, stream);
      results.memory_bandwidth.push_back(memoryBandwidthSample(bytes, median(events.durationsUs())));
      std::cerr << fmt::format("{}: copy {} B {:.1f} GB/s (read + write)\n", kProgram, bytes,
                               results.memory_bandwidth.back().GBps);
    }
  } catch (...) {
    cudaFree(source);
    cudaFree(target);
    throw;
  }
  TRAINSIM_CUDA_CHECK(cudaFree(source));
  TRAINSIM_CUDA_CHECK(cudaFree(target));
}

int run(const GemmHarnessOptions& options, const GemmHarnessPlan& plan) {
  (void)cudaDeviceCountOrFail();
  TRAINSIM_CUDA_CHECK(cudaSetDevice(0));
  GemmResults results;
  results.gpu = cudaDeviceName(0);
  results.cuda_runtime = cudaRuntimeVersion();
  results.precision = plan.precision;
  cudaStream_t stream = nullptr;
  TRAINSIM_CUDA_CHECK(cudaStreamCreate(&stream));
  std::cerr << fmt::format("{}: {} GEMM shapes at {} on {}\n", kProgram, plan.shapes.size(),
                           topology::precisionName(plan.precision), results.gpu);
  measureGemms(options, plan, stream, results);
  measureMemoryBandwidth(options, plan, stream, results);
  TRAINSIM_CUDA_CHECK(cudaStreamDestroy(stream));
  if (results.gemm.empty()) throw HarnessFailure("no GEMM shape could be measured");
  if (auto error = writeResultsFile(options.out, gemmResultsYaml(results))) {
    std::cerr << kProgram << ": error: " << error->toString() << "\n";
    return static_cast<int>(error->code);
  }
  if (options.out != "-") std::cerr << fmt::format("{}: wrote {}\n", kProgram, options.out);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  auto command_line = parseGemmHarnessArguments(argumentList(argc, argv));
  if (!command_line.ok()) {
    std::cerr << kProgram << ": error: " << command_line.error().toString() << "\n";
    return static_cast<int>(command_line.error().code);
  }
  if (command_line->help) {
    std::cout << *command_line->help;
    return 0;
  }
  const GemmHarnessOptions& options = command_line->options;
  auto plan = planGemmHarness(options, TRAINSIM_DEFAULT_CONFIG_DIR);
  if (!plan.ok()) {
    std::cerr << kProgram << ": error: " << plan.error().toString() << "\n";
    return static_cast<int>(plan.error().code);
  }
  if (options.dry_run) {
    std::cout << describeGemmPlan(*plan);
    return 0;
  }
  try {
    return run(options, *plan);
  } catch (const std::exception& error) {
    std::cerr << kProgram << ": error: " << error.what() << "\n";
    return static_cast<int>(ExitCode::kInternal);
  }
}
