// Calibrating on a system's runs on at most two nodes and predicting its larger runs.
#include "validation/collective_transfer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "tests/shipped_defaults.h"

namespace trainsim::validation {
namespace {

TEST(CollectiveTransferTest, FitsTheSmallRunsOfASystemAndPredictsItsLargeOnes) {
  const auto transfers = collectiveScaleTransfer(ConfigPaths{TRAINSIM_CONFIG_DIR_FOR_TESTS}, shippedCommunication());
  ASSERT_TRUE(transfers.ok()) << transfers.error().toString();
  const auto mi325x = std::find_if(transfers->begin(), transfers->end(), [](const ScaleTransfer& transfer) {
    return transfer.system == "AMD Accelerator Cloud AAC11 (MI325X), RoCE";
  });
  ASSERT_NE(mi325x, transfers->end());
  EXPECT_EQ(mi325x->fitted_curves,
            (std::vector<std::string>{"aac11-mi325x-1n-allreduce", "aac11-mi325x-2n-allreduce"}));
  EXPECT_EQ(mi325x->held_out_curves,
            (std::vector<std::string>{"aac11-mi325x-4n-allreduce", "aac11-mi325x-8n-allreduce"}));
  EXPECT_EQ(mi325x->held_out_points, 6);
  EXPECT_FALSE(mi325x->values.empty());
  // The 4- and 8-node runs stay within the 8% after calibrating on 1 and 2 nodes.
  EXPECT_LT(mi325x->calibrated_mape, 0.08);
  for (const ScaleTransfer& transfer : *transfers) {
    EXPECT_FALSE(transfer.fitted_curves.empty()) << transfer.system;
    EXPECT_FALSE(transfer.held_out_curves.empty()) << transfer.system;
    EXPECT_TRUE(std::isfinite(transfer.preset_mape) && std::isfinite(transfer.calibrated_mape)) << transfer.system;
  }
}

}  // namespace
}  // namespace trainsim::validation
