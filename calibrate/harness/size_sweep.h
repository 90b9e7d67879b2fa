// Message sizes of a collective benchmark, the way nccl-tests walks them: from -b to -e,
// multiplying by -f, with sizes written as 8, 64K, 32M, 1G (powers of 1024).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/expected.h"

namespace trainsim::harness {

// "8", "64K", "32M", "1G" (K/M/G = 2^10, 2^20, 2^30; lower case accepted) as a byte count >= 1.
// `option` names the command-line option in the error.
[[nodiscard]] Expected<int64_t> parseByteSize(const std::string& text, const std::string& option);

// min_bytes, min_bytes * factor, ... up to and including max_bytes (each step at least one
// byte larger; fractional products rounded down, as nccl-tests' size_t arithmetic does).
// Errors when min_bytes < 1, max_bytes < min_bytes or factor <= 1.
[[nodiscard]] Expected<std::vector<int64_t>> sizeSweep(int64_t min_bytes, int64_t max_bytes, double factor);

}  // namespace trainsim::harness
