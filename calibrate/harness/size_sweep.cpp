#include "calibrate/harness/size_sweep.h"

#include <cmath>
#include <limits>

namespace trainsim::harness {

namespace {

Error optionError(const std::string& option, const std::string& message) {
  return Error{ExitCode::kInvalidInput, option, "", message};
}

}  // namespace

Expected<int64_t> parseByteSize(const std::string& text, const std::string& option) {
  const std::string expected = "expected a size such as 8, 64K, 32M or 1G, found \"" + text + "\"";
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0 || digits > 15) return optionError(option, expected);
  const std::string suffix = text.substr(digits);
  int shift = 0;
  if (suffix == "K" || suffix == "k") {
    shift = 10;
  } else if (suffix == "M" || suffix == "m") {
    shift = 20;
  } else if (suffix == "G" || suffix == "g") {
    shift = 30;
  } else if (!suffix.empty()) {
    return optionError(option, expected);
  }
  const int64_t value = std::stoll(text.substr(0, digits));
  if (value < 1) return optionError(option, "expected at least 1 byte, found \"" + text + "\"");
  if (value > (std::numeric_limits<int64_t>::max() >> (shift + 1))) {
    return optionError(option, "size too large: \"" + text + "\"");
  }
  return value << shift;
}

Expected<std::vector<int64_t>> sizeSweep(int64_t min_bytes, int64_t max_bytes, double factor) {
  if (min_bytes < 1) return optionError("-b/--min-bytes", "expected at least 1 byte");
  if (max_bytes < min_bytes) return optionError("-e/--max-bytes", "must be at least the minimum size");
  if (!(factor > 1.0) || !std::isfinite(factor)) return optionError("-f/--step-factor", "expected a factor > 1");
  std::vector<int64_t> sizes;
  for (int64_t size = min_bytes; size <= max_bytes;) {
    sizes.push_back(size);
    const double next = std::floor(static_cast<double>(size) * factor);
    if (next >= static_cast<double>(max_bytes) + 1.0) break;
    size = std::max(size + 1, static_cast<int64_t>(next));
  }
  return sizes;
}

}  // namespace trainsim::harness
