#include "calibrate/harness/harness_results.h"

#include <algorithm>
#include <cassert>

namespace trainsim::harness {

double median(std::vector<double> samples) {
  assert(!samples.empty());
  const std::size_t middle = samples.size() / 2;
  std::nth_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(middle), samples.end());
  const double upper = samples[middle];
  if (samples.size() % 2 == 1) return upper;
  const double lower = *std::max_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(middle));
  return 0.5 * (lower + upper);
}

CollectiveSample collectiveSample(perf::CollectiveOp op, int64_t group_size, int64_t bytes, double time_us) {
  assert(time_us > 0.0 && group_size >= 2);
  CollectiveSample sample;
  sample.bytes = bytes;
  sample.time_us = time_us;
  sample.algbw_GBps = static_cast<double>(bytes) / (time_us * 1e-6) / 1e9;
  sample.busbw_GBps = sample.algbw_GBps * perf::busBandwidthFactor(op, group_size);
  return sample;
}

GemmSample gemmSample(int64_t m, int64_t n, int64_t k, int64_t batch, double time_us, std::string source) {
  assert(time_us > 0.0);
  GemmSample sample{m, n, k, batch, time_us, 0.0, std::move(source)};
  const double flops =
      2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) * static_cast<double>(batch);
  sample.tflops = flops / (time_us * 1e-6) / 1e12;
  return sample;
}

MemoryBandwidthSample memoryBandwidthSample(int64_t bytes, double time_us) {
  assert(time_us > 0.0);
  return {bytes, time_us, 2.0 * static_cast<double>(bytes) / (time_us * 1e-6) / 1e9};
}

}  // namespace trainsim::harness
