// The device-memory bytes a GEMM moves, as the GEMM sources ran them: shared by the GEMM fit of
// calibration (calibrate/gemm_fit.h) and the GEMM suite (validation/gemm_accuracy.h).
#pragma once

#include <cstdint>

#include "topology/gpu_spec.h"

namespace trainsim::calibrate {

// Bytes per element of A and B, and of C, for a GEMM at `precision` as the sources ran it:
// 16-bit inputs and output; FP8 inputs with a 16-bit output (as FP8 training GEMMs write it).
struct GemmElementBytes {
  double input = 2.0;
  double output = 2.0;
};
[[nodiscard]] GemmElementBytes gemmElementBytes(topology::Precision precision);

// The bytes a GEMM of `batch` products moves at those sizes: A and B read and C written
// once (`total`), and C alone (`output`, the epilogue's store).
struct GemmTraffic {
  double total = 0.0;
  double output = 0.0;
};
[[nodiscard]] GemmTraffic gemmTraffic(int64_t m, int64_t n, int64_t k, int64_t batch, topology::Precision precision);

}  // namespace trainsim::calibrate
