// Whether the GPU name a measurement prints ("A100-SXM4-40GB", "NVIDIA H100 80GB HBM3") looks
// like a catalog GPU: the first word of the catalog key ("a100" of "a100-sxm-40gb") is one of
// the name's words, case-insensitively. `trainsim calibrate` only notes a mismatch: the
// --cluster's GPU is the one the calibration is for.
#pragma once

#include <string>

#include "topology/gpu_spec.h"

namespace trainsim::calibrate {

[[nodiscard]] bool gpuNameMatches(const std::string& measured_name, const topology::GpuSpec& gpu);

}  // namespace trainsim::calibrate
