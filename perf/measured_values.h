// Rows of the model's per-GPU parameter tables (perf::ComputeParameters,
// perf::CommunicationParameters), keyed by the catalog key of configs/gpus.yaml (GpuSpec::key).
#pragma once

#include <string>

#include "topology/gpu_spec.h"

namespace trainsim::perf {

// A measured rate of one GPU at one precision, TFLOP/s (10^12 FLOP/s).
struct MeasuredRate {
  std::string gpu_key;
  topology::Precision precision;
  double tflops;
};

// A measured fraction of one GPU's peak (memory bandwidth, link bandwidth, ...).
struct MeasuredFraction {
  std::string gpu_key;
  double fraction;
};

// A measured count of one GPU (SMs).
struct MeasuredCount {
  std::string gpu_key;
  double count;
};

// A measured time of one GPU, microseconds.
struct MeasuredMicroseconds {
  std::string gpu_key;
  double us;
};

}  // namespace trainsim::perf
