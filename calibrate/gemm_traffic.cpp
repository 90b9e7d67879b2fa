#include "calibrate/gemm_traffic.h"

namespace trainsim::calibrate {

using topology::Precision;

GemmElementBytes gemmElementBytes(Precision precision) {
  if (precision == Precision::kFp8) return {1.0, 2.0};
  if (precision == Precision::kFp64) return {8.0, 8.0};
  if (precision == Precision::kFp32 || precision == Precision::kTf32) return {4.0, 4.0};
  return {2.0, 2.0};
}

GemmTraffic gemmTraffic(int64_t m, int64_t n, int64_t k, int64_t batch, Precision precision) {
  const GemmElementBytes element = gemmElementBytes(precision);
  const auto products = static_cast<double>(batch);
  const double output = static_cast<double>(m) * static_cast<double>(n) * element.output * products;
  const double inputs = (static_cast<double>(m) + static_cast<double>(n)) * static_cast<double>(k) * element.input;
  return {inputs * products + output, output};
}

}  // namespace trainsim::calibrate
