// Unit conventions of SPEC.md: GB/s = 1e9 bytes/s per direction, Gb/s = 1e9 bits/s,
// GiB = 2^30 bytes, TFLOP/s = 1e12 FLOP/s dense.
#pragma once

#include <cstdint>

namespace trainsim::units {

inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
inline constexpr double kMiB = 1024.0 * 1024.0;
inline constexpr double kGB = 1e9;
inline constexpr double kTera = 1e12;
inline constexpr double kFp32Bytes = 4.0;  // one single-precision value

[[nodiscard]] constexpr double gigabytesPerSecond(double GBps) { return GBps * 1e9; }
[[nodiscard]] constexpr double gigabitsPerSecond(double Gbps) { return Gbps * 1e9 / 8.0; }
[[nodiscard]] constexpr double toGigabytesPerSecond(double bytes_per_s) { return bytes_per_s / 1e9; }
[[nodiscard]] constexpr int64_t microsecondsToNanoseconds(double us) { return static_cast<int64_t>(us * 1e3 + 0.5); }

}  // namespace trainsim::units
