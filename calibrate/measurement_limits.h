// Bounds on the numbers measurement files may give (nccl-tests logs, harness results,
// cudnn-frontend attention CSVs), as the cluster and GPU files have theirs
// (topology::limits): a value outside them is a typo or a broken run, and is refused at its
// file:line:col instead of moving a fit (a time of 1e300 us was taken and printed a fit
// quality of nonsense).
#pragma once

#include <cstdint>

#include "topology/cluster_loader.h"

namespace trainsim::calibrate::limits {
// One timed operation: 1 ns to one hour. Kernel launches alone take microseconds; nccl-tests
// and the harness repeat each size tens of times, so an hour per call would be days per run.
inline constexpr double kMinTimeUs = 1e-3;
inline constexpr double kMaxTimeUs = 3.6e9;
// One message or buffer: 10^15 bytes (1 PB), about the most device memory a GPU may declare
// (topology::limits::kMaxMemoryGiB, 1 PiB); nccl-tests' largest sizes are tens of GiB.
inline constexpr int64_t kMaxBytes = 1'000'000'000'000'000;
// Bandwidths and rates as the cluster and GPU files bound them: 1 MB/s to 1 PB/s, and
// 1 GFLOP/s to 1 EFLOP/s (printed bandwidths of tiny messages round to 0, so 0 is allowed).
inline constexpr double kMaxBandwidthGBps = topology::limits::kMaxBandwidthGBps;
inline constexpr double kMinTflops = topology::limits::kMinPeakTflops;
inline constexpr double kMaxTflops = topology::limits::kMaxPeakTflops;
// A matrix dimension, sequence length, batch or head count of one measured kernel: 2^24,
// the longest sequence and largest batch an experiment may give. A product of two (batch x
// heads) stays far inside int64.
inline constexpr int64_t kMaxDimension = int64_t{1} << 24;
// GPUs of one measured group, as many as a cluster may hold.
inline constexpr int64_t kMaxGpus = topology::limits::kMaxGpus;
// Warm-up and timed iterations of one measurement.
inline constexpr int64_t kMaxIterations = 1'000'000'000;
}  // namespace trainsim::calibrate::limits
