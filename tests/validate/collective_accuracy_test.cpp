// The collective model's accuracy goals, checked against the published curves.
#include "validate/collective_accuracy.h"
#include "tests/shipped_defaults.h"

#include <gtest/gtest.h>

#include <cmath>

namespace trainsim::validate {
namespace {

const std::vector<CurveAccuracy>& results() {
  static const std::vector<CurveAccuracy> cached = [] {
    auto computed = compareCollectiveCurves(ConfigPaths{TRAINSIM_CONFIG_DIR_FOR_TESTS}, shippedCommunication());
    if (!computed.ok()) throw std::runtime_error(computed.error().toString());
    return std::move(computed).value();
  }();
  return cached;
}

const CurveAccuracy& curve(const std::string& id) {
  for (const auto& accuracy : results()) {
    if (accuracy.curve.id == id) return accuracy;
  }
  throw std::runtime_error("no curve " + id);
}

// The curves of the first accuracy goals: 2x DGX A100 and single 8-GPU NVSwitch nodes.
const std::vector<std::string> kFirstGoalCurves = {"deepops-2x-dgx-a100", "azure-nd-a100-v4-8", "azure-nd-h100-v5-8",
                                                   "azure-nd-h200-v5-8"};

TEST(CollectiveAccuracyTest, LargeMessageBusBandwidthWithinTenPercent) {
  for (const std::string& id : kFirstGoalCurves) {
    const CurveAccuracy& accuracy = curve(id);
    EXPECT_LT(std::fabs(accuracy.large_message_error), 0.10) << accuracy.curve.id;
    for (const auto& point : accuracy.points) {
      if (point.bytes < (int64_t{256} << 20)) continue;
      EXPECT_NEAR(point.predicted_busbw_GBps / point.measured_busbw_GBps, 1.0, 0.10)
          << accuracy.curve.id << " at " << point.bytes << " B";
    }
  }
}

TEST(CollectiveAccuracyTest, CurveReachesHalfOfPeakWithinAFactorOfTwoInSize) {
  for (const std::string& id : kFirstGoalCurves) {
    const CurveAccuracy& accuracy = curve(id);
    const double ratio = accuracy.predicted_half_peak_bytes / accuracy.measured_half_peak_bytes;
    EXPECT_GT(ratio, 0.5) << accuracy.curve.id;
    EXPECT_LT(ratio, 2.0) << accuracy.curve.id;
  }
}

TEST(CollectiveAccuracyTest, SmallMessageLatencyWithinThirtyPercent) {
  // The Azure ND A100 v4 guide's 1 KiB figure (0.04 GB/s, i.e. 40-51 us) disagrees with a
  // raw nccl-tests log of the same VM type (31 us at 8 B); the model follows the raw log.
  for (const char* id : {"deepops-2x-dgx-a100", "azure-nd-h100-v5-8", "azure-nd-h200-v5-8", "echo-azure-a100-8"}) {
    const auto& accuracy = curve(id);
    EXPECT_NEAR(accuracy.predicted_small_latency_us / accuracy.measured_small_latency_us, 1.0, 0.30) << id;
  }
}

TEST(CollectiveAccuracyTest, TunerPicksNvlsForLargeMessagesOnH100AndRingOnA100) {
  EXPECT_EQ(curve("azure-nd-h100-v5-8").points.back().algorithm, "nvls");
  EXPECT_EQ(curve("azure-nd-a100-v4-8").points.back().algorithm, "ring");
  EXPECT_EQ(curve("azure-nd-a100-v4-8").points.back().protocol, "Simple");
}

}  // namespace
}  // namespace trainsim::validate
