// Simulated time: a signed 64-bit count of picoseconds since the start of the simulation.
//
// Integer time keeps runs bit-for-bit reproducible (no floating-point clock drift) and
// matches topology::Link::latency_ps. The clock runs to kTimeLimit, about 46 days of
// simulated time, far more than one training iteration (a full training run is
// extrapolated, not simulated event by event); what would pass it is reported
// (Engine::overflowed), not wrapped around.
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

// The clock's range. Under half of int64's, so that a time plus a duration, each within it,
// never overflows: 4e18 ps, about 46.3 days.
inline constexpr SimTime kTimeLimit = 4'000'000'000'000'000'000;
// What a conversion returns for a duration past kTimeLimit (or +infinity): scheduling it
// trips the engine's check, so a run that needs it fails with an error instead of wrapping.
inline constexpr SimTime kTimeOverflow = kTimeLimit + 1;

// Picoseconds per second as a double (exactly representable, so dividing by it is exact
// whenever the true quotient is representable).
inline constexpr double kPicosecondsPerSecond = 1e12;

// Picoseconds (a double) -> SimTime, rounded to the nearest, saturating at +-kTimeOverflow.
[[nodiscard]] inline SimTime roundPicoseconds(double ps) {
  assert(!std::isnan(ps));
  constexpr auto kLimit = static_cast<double>(kTimeLimit);
  if (ps > kLimit) return kTimeOverflow;
  if (ps < -kLimit) return -kTimeOverflow;
  return static_cast<SimTime>(std::llround(ps));
}

// Seconds (or us, ns) -> SimTime, rounded to the nearest picosecond.
[[nodiscard]] inline SimTime secondsToSimTime(double seconds) {
  return roundPicoseconds(seconds * kPicosecondsPerSecond);
}
[[nodiscard]] inline SimTime microsecondsToSimTime(double us) { return roundPicoseconds(us * 1e6); }
[[nodiscard]] inline SimTime nanosecondsToSimTime(double ns) { return roundPicoseconds(ns * 1e3); }

// `count` times the duration `t`, saturating at kTimeOverflow.
[[nodiscard]] inline SimTime scaledDuration(SimTime t, int64_t count) {
  assert(t >= 0 && count >= 0);
  SimTime product = 0;
  if (__builtin_mul_overflow(t, count, &product) || product > kTimeLimit) return kTimeOverflow;
  return product;
}

[[nodiscard]] constexpr double simTimeToSeconds(SimTime t) { return static_cast<double>(t) / kPicosecondsPerSecond; }
[[nodiscard]] constexpr double simTimeToMicroseconds(SimTime t) { return static_cast<double>(t) / 1e6; }

// Rounds a non-negative duration in (fractional) picoseconds UP to the next whole
// picosecond. A value that exceeds an integer only by floating-point noise (a relative
// 1e-12) counts as that integer, so that an exact quotient computed with rounding error
// (1e6 B at 1e9 B/s) does not gain a spurious picosecond.
// Past kTimeLimit: kTimeOverflow.
[[nodiscard]] inline SimTime ceilPicoseconds(double ps) {
  assert(ps >= 0.0);
  if (!(ps <= static_cast<double>(kTimeLimit))) return kTimeOverflow;
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
