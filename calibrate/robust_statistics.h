// What the robust fits share (Huber's M-estimator with a MAD scale: Huber, "Robust
// Estimation of a Location Parameter", 1964): its constants and the median.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace trainsim::calibrate {

// Huber's tuning constant: 95% efficiency under Gaussian noise.
inline constexpr double kHuberK = 1.345;
// Median absolute deviation to standard deviation under Gaussian noise.
inline constexpr double kMadToSigma = 1.4826;

// The median of `values` (the mean of the two middle ones for an even count); not empty.
[[nodiscard]] inline double median(std::vector<double> values) {
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), middle, values.end());
  if (values.size() % 2 == 1) return *middle;
  return 0.5 * (*middle + *std::max_element(values.begin(), middle));
}

}  // namespace trainsim::calibrate
