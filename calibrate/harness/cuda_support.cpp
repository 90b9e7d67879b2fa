#include "calibrate/harness/cuda_support.h"

#include <fmt/format.h>

namespace trainsim::harness {

void checkCuda(cudaError_t status, const char* call) {
  if (status == cudaSuccess) return;
  throw HarnessFailure(fmt::format("{} failed: {} ({})", call, cudaGetErrorString(status), cudaGetErrorName(status)));
}

int cudaDeviceCountOrFail() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    throw HarnessFailure(fmt::format("no CUDA device (cudaGetDeviceCount: {})", cudaGetErrorString(status)));
  }
  if (count < 1) throw HarnessFailure("no CUDA device (cudaGetDeviceCount found 0)");
  return count;
}

std::string cudaDeviceName(int device) {
  cudaDeviceProp properties{};
  TRAINSIM_CUDA_CHECK(cudaGetDeviceProperties(&properties, device));
  return properties.name;
}

std::string cudaRuntimeVersion() {
  int version = 0;
  TRAINSIM_CUDA_CHECK(cudaRuntimeGetVersion(&version));
  return fmt::format("{}.{}", version / 1000, (version % 1000) / 10);
}

EventSeries::EventSeries(int repetitions) {
  events_.reserve(static_cast<std::size_t>(repetitions) + 1);
  for (int i = 0; i <= repetitions; ++i) {
    cudaEvent_t event = nullptr;
    TRAINSIM_CUDA_CHECK(cudaEventCreate(&event));
    events_.push_back(event);
  }
}

EventSeries::~EventSeries() {
  for (cudaEvent_t event : events_) cudaEventDestroy(event);  // best effort: nothing to report from a destructor
}

void EventSeries::mark(int index, cudaStream_t stream) {
  TRAINSIM_CUDA_CHECK(cudaEventRecord(events_.at(static_cast<std::size_t>(index)), stream));
}

std::vector<double> EventSeries::durationsUs() {
  TRAINSIM_CUDA_CHECK(cudaEventSynchronize(events_.back()));
  std::vector<double> durations;
  durations.reserve(events_.size() - 1);
  for (std::size_t i = 0; i + 1 < events_.size(); ++i) {
    float ms = 0.0F;
    TRAINSIM_CUDA_CHECK(cudaEventElapsedTime(&ms, events_[i], events_[i + 1]));
    durations.push_back(static_cast<double>(ms) * 1e3);
  }
  return durations;
}

}  // namespace trainsim::harness
