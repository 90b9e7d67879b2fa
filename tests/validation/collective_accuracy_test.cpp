// The collective model's accuracy goals, checked against the published curves.
#include "validation/collective_accuracy.h"
#include "tests/shipped_defaults.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace trainsim::validation {
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

// The systems whose bus bandwidth the shipped presets predict within the 8% (sizes
// >= 1 MiB, no calibration); docs/collectives.md has every system's figure.
TEST(CollectiveAccuracyTest, SystemsWithinEightPercentStayThere) {
  const std::vector<std::string> within = {"Azure ND A100 v4",
                                           "Azure ND H100 v5",
                                           "AWS p5en.48xlarge, EFA 16x200G",
                                           "AMD Accelerator Cloud AAC11 (MI325X), RoCE",
                                           "AMD Accelerator Cloud AAC14 (MI355X), Pollara 400 x8",
                                           "OCI MI355X, Pollara 400 x8"};
  const auto systems = summarizeSystems(results());
  for (const std::string& name : within) {
    const auto found = std::find_if(systems.begin(), systems.end(),
                                    [&](const SystemAccuracy& system) { return system.system == name; });
    ASSERT_NE(found, systems.end()) << name;
    EXPECT_LT(found->mape, 0.08) << name;
    EXPECT_GT(found->scored_points, 0) << name;
  }
}

TEST(CollectiveAccuracyTest, SystemSummaryLeavesReferenceCurvesOut) {
  const auto systems = summarizeSystems(results());
  for (const auto& system : systems) {
    for (const std::string& id : system.curves) EXPECT_TRUE(curve(id).curve.accuracy_target) << id;
  }
  // Every op of the published tables is compared.
  EXPECT_EQ(curve("oci-gb200-16n-alltoall").curve.op, perf::CollectiveOp::kAllToAll);
  EXPECT_EQ(curve("oci-gb200-16n-alltoall").points.front().algorithm, "direct");
  EXPECT_EQ(curve("gcp-a3mega-2n-allgather").points.back().algorithm, "ring");
}

TEST(CollectiveAccuracyTest, TunerPicksNvlsForLargeMessagesOnH100AndRingOnA100) {
  EXPECT_EQ(curve("azure-nd-h100-v5-8").points.back().algorithm, "nvls");
  EXPECT_EQ(curve("azure-nd-a100-v4-8").points.back().algorithm, "ring");
  EXPECT_EQ(curve("azure-nd-a100-v4-8").points.back().protocol, "Simple");
}

}  // namespace
}  // namespace trainsim::validation
