// Wall time of the suites and fits, for their progress lines and reports.
#pragma once

#include <chrono>

namespace trainsim::validate {

[[nodiscard]] inline double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace trainsim::validate
