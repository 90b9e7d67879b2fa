#include "calibrate/nccl_version.h"

namespace trainsim::calibrate {

std::optional<double> ncclVersionCode(std::string_view release) {
  int parts[3] = {0, 0, 0};
  std::size_t position = 0;
  for (int i = 0; i < 3; ++i) {
    const std::size_t start = position;
    while (position < release.size() && release[position] >= '0' && release[position] <= '9' && position - start < 3) {
      parts[i] = parts[i] * 10 + (release[position] - '0');
      ++position;
    }
    if (position == start) return std::nullopt;
    if (i < 2) {
      if (position >= release.size() || release[position] != '.') return std::nullopt;
      ++position;
    }
  }
  if (position != release.size() || parts[1] > 99 || parts[2] > 99) return std::nullopt;
  return parts[0] * 10000.0 + parts[1] * 100.0 + parts[2];
}

std::optional<double> ncclVersionCodeFromLibrary(int64_t code) {
  // nccl.h: NCCL_VERSION(X,Y,Z) is X*1000 + Y*100 + Z before 2.9 (minor and patch one digit
  // each at most in that scheme: 2.8.4 is 2804), X*10000 + Y*100 + Z from 2.9.
  if (code >= 20900 && code < 1000000) return static_cast<double>(code);
  if (code >= 1000 && code < 2900) {
    const int64_t major = code / 1000;
    const int64_t minor = (code % 1000) / 100;
    const int64_t patch = code % 100;
    return static_cast<double>(major * 10000 + minor * 100 + patch);
  }
  return std::nullopt;
}

}  // namespace trainsim::calibrate
