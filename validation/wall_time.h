// Wall time of the suites and fits, for their progress lines and reports.
#pragma once

#include <chrono>

namespace trainsim::validation {

[[nodiscard]] inline double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace trainsim::validation
