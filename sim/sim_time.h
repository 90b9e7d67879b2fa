// Simulated time: a signed 64-bit count of picoseconds since the start of the simulation.
//
// Integer time keeps runs bit-for-bit reproducible (no floating-point clock drift) and
// matches topology::Link::latency_ps. int64 picoseconds cover about 106 days of simulated
// time, far more than one training iteration (a full training run is extrapolated, not
// simulated event by event).
#pragma once

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <limits>

namespace trainsim::sim {

using SimTime = int64_t;

inline constexpr SimTime kPicosecond = 1;
inline constexpr SimTime kNanosecond = 1'000;
inline constexpr SimTime kMicrosecond = 1'000'000;
inline constexpr SimTime kMillisecond = 1'000'000'000;
inline constexpr SimTime kSecond = 1'000'000'000'000;
// "Never": later than any real event. Not a valid event time.
inline constexpr SimTime kTimeNever = std::numeric_limits<SimTime>::max();

// Picoseconds per second as a double (exactly representable, so dividing by it is exact
// whenever the true quotient is representable).
inline constexpr double kPicosecondsPerSecond = 1e12;

// Seconds (or us, ns) -> SimTime, rounded to the nearest picosecond.
[[nodiscard]] inline SimTime secondsToSimTime(double seconds) {
  assert(std::isfinite(seconds));
  return static_cast<SimTime>(std::llround(seconds * kPicosecondsPerSecond));
}
[[nodiscard]] inline SimTime microsecondsToSimTime(double us) {
  assert(std::isfinite(us));
  return static_cast<SimTime>(std::llround(us * 1e6));
}
[[nodiscard]] inline SimTime nanosecondsToSimTime(double ns) {
  assert(std::isfinite(ns));
  return static_cast<SimTime>(std::llround(ns * 1e3));
}

[[nodiscard]] constexpr double simTimeToSeconds(SimTime t) { return static_cast<double>(t) / kPicosecondsPerSecond; }
[[nodiscard]] constexpr double simTimeToMicroseconds(SimTime t) { return static_cast<double>(t) / 1e6; }

// Rounds a non-negative duration in (fractional) picoseconds UP to the next whole
// picosecond. A value that exceeds an integer only by floating-point noise (a relative
// 1e-12) counts as that integer, so that an exact quotient computed with rounding error
// (1e6 B at 1e9 B/s) does not gain a spurious picosecond.
[[nodiscard]] inline SimTime ceilPicoseconds(double ps) {
  assert(ps >= 0.0 && ps < 9.0e18);
  const double whole = std::floor(ps);
  const double excess = ps - whole;
  if (excess <= 1e-12 * std::max(ps, 1.0)) return static_cast<SimTime>(whole);
  return static_cast<SimTime>(whole) + 1;
}

// Time to push `bytes` through a pipe of `bytes_per_second`, rounded UP to the next picosecond.
[[nodiscard]] inline SimTime transferDuration(double bytes, double bytes_per_second) {
  assert(bytes >= 0.0 && bytes_per_second > 0.0);
  return ceilPicoseconds(bytes * kPicosecondsPerSecond / bytes_per_second);
}

}  // namespace trainsim::sim
