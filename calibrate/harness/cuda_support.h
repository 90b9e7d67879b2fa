// What the two GPU programs share on the CUDA side, and nothing more: return-code checks
// that turn a failed CUDA call into a HarnessFailure naming the call, the device lookup
// (a clean "no CUDA device" when there is none) and per-repetition CUDA event timing.
// Built only into trainsim-calib-gemm / trainsim-calib-nccl (needs the CUDA runtime).
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace trainsim::harness {

// A CUDA, cuBLAS, NCCL or MPI call failed: the message names the call and the library's reason.
class HarnessFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

void checkCuda(cudaError_t status, const char* call);
#define TRAINSIM_CUDA_CHECK(call) ::trainsim::harness::checkCuda((call), #call)

// The number of CUDA devices; throws HarnessFailure("no CUDA device ...") when there is none
// or no driver to reach them.
[[nodiscard]] int cudaDeviceCountOrFail();
[[nodiscard]] std::string cudaDeviceName(int device);
// "13.0": the CUDA runtime the program runs with (cudaRuntimeGetVersion).
[[nodiscard]] std::string cudaRuntimeVersion();

// Times `repetitions` back-to-back launches on one stream: mark(i) before repetition i,
// mark(repetitions) after the last; durations() are the gaps, in microseconds.
class EventSeries {
 public:
  explicit EventSeries(int repetitions);
  ~EventSeries();
  EventSeries(const EventSeries&) = delete;
  EventSeries& operator=(const EventSeries&) = delete;

  void mark(int index, cudaStream_t stream);
  // Waits for the last event.
  [[nodiscard]] std::vector<double> durationsUs();

 private:
  std::vector<cudaEvent_t> events_;
};

}  // namespace trainsim::harness
