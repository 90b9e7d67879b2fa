#include "sim/sim_time.h"

#include <gtest/gtest.h>

#include <limits>

namespace trainsim::sim {
namespace {

TEST(SimTimeTest, ConvertsUnits) {
  EXPECT_EQ(secondsToSimTime(1.0), kSecond);
  EXPECT_EQ(secondsToSimTime(2.5e-6), 2'500'000);
  EXPECT_EQ(microsecondsToSimTime(1.5), 1'500'000);
  EXPECT_EQ(nanosecondsToSimTime(0.7), 700);
  EXPECT_DOUBLE_EQ(simTimeToSeconds(3 * kMillisecond), 3e-3);
  EXPECT_DOUBLE_EQ(simTimeToMicroseconds(2 * kMicrosecond), 2.0);
}

TEST(SimTimeTest, TransferDurationRoundsUpToThePicosecond) {
  // 1 MB at 1 GB/s: exactly 1 ms, no spurious extra picosecond.
  EXPECT_EQ(transferDuration(1e6, 1e9), kMillisecond);
  // 1000 B at 3 GB/s = 333333.33 ps -> 333334 ps.
  EXPECT_EQ(transferDuration(1000.0, 3e9), 333'334);
  // 1 B at 1e13 B/s = 0.1 ps -> 1 ps.
  EXPECT_EQ(transferDuration(1.0, 1e13), 1);
  EXPECT_EQ(transferDuration(0.0, 1e9), 0);
  // 25 GB/s (200 Gb/s NIC), 64 MiB: 2684354.56 ns -> 2684354560 ps exactly.
  EXPECT_EQ(transferDuration(64.0 * 1024 * 1024, 25e9), 2'684'354'560);
}

TEST(SimTimeTest, CeilPicosecondsToleratesRoundingNoise) {
  EXPECT_EQ(ceilPicoseconds(10.0), 10);
  EXPECT_EQ(ceilPicoseconds(10.0 + 1e-14), 10);
  EXPECT_EQ(ceilPicoseconds(10.001), 11);
  EXPECT_EQ(ceilPicoseconds(0.0), 0);
}

// Durations past the clock's range saturate at kTimeOverflow (which the engine refuses to
// schedule) instead of wrapping around or overflowing a later sum.
TEST(SimTimeTest, ConversionsSaturatePastTheClocksRange) {
  EXPECT_EQ(secondsToSimTime(4e6), kTimeLimit);  // 4e18 ps, 46.3 days: still on the clock
  EXPECT_EQ(secondsToSimTime(5e6), kTimeOverflow);
  EXPECT_EQ(secondsToSimTime(1e300), kTimeOverflow);
  EXPECT_EQ(secondsToSimTime(std::numeric_limits<double>::infinity()), kTimeOverflow);
  EXPECT_EQ(secondsToSimTime(-1e300), -kTimeOverflow);
  EXPECT_EQ(microsecondsToSimTime(1e13), kTimeOverflow);
  EXPECT_EQ(nanosecondsToSimTime(1e16), kTimeOverflow);
  EXPECT_EQ(ceilPicoseconds(9.5e18), kTimeOverflow);
  EXPECT_EQ(transferDuration(1e15, 1.0), kTimeOverflow);  // 1 PB at 1 B/s
  // The sum of two times each within range does not overflow int64.
  EXPECT_GT(kTimeOverflow + kTimeOverflow, kTimeOverflow);
}

TEST(SimTimeTest, ScaledDurationSaturates) {
  EXPECT_EQ(scaledDuration(7, 6), 42);
  EXPECT_EQ(scaledDuration(kTimeLimit / 2, 2), kTimeLimit);
  EXPECT_EQ(scaledDuration(kTimeLimit / 2 + 1, 2), kTimeOverflow);
  EXPECT_EQ(scaledDuration(kTimeOverflow, 1'000'000), kTimeOverflow);
}

}  // namespace
}  // namespace trainsim::sim
