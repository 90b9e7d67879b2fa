// Calibrating on a system's runs on at most two nodes and predicting its larger runs.
#include "validation/collective_transfer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "tests/shipped_defaults.h"

namespace trainsim::validation {
namespace {

// One run of the whole report (about 12 s on one core) for every check.
TEST(CollectiveTransferTest, FitsTheSmallRunsOfEverySystemAndPredictsItsLargeOnes) {
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
  EXPECT_EQ(mi325x->held_out_preset.points, 6);
  EXPECT_EQ(mi325x->fitted_preset.points, 6);
  EXPECT_TRUE(mi325x->not_calibrated.empty());
  EXPECT_FALSE(mi325x->values.empty());
  // The 4- and 8-node runs stay within the 8% after calibrating on 1 and 2 nodes.
  EXPECT_LT(mi325x->held_out_calibrated.mape, 0.08);
  // The fit does not make the runs it was fitted on worse.
  EXPECT_LE(mi325x->fitted_calibrated.mape, mi325x->fitted_preset.mape);
  for (const ScaleTransfer& transfer : *transfers) {
    EXPECT_FALSE(transfer.fitted_curves.empty()) << transfer.system;
    EXPECT_EQ(transfer.held_out_curves.empty(), transfer.held_out_preset.points == 0) << transfer.system;
    EXPECT_TRUE(std::isfinite(transfer.fitted_preset.mape) && std::isfinite(transfer.fitted_calibrated.mape))
        << transfer.system;
    // A value is flagged at the bound exactly when it stopped two decades from its start (the
    // log-mapped parameters) or at an efficiency's limit.
    for (const calibrate::FittedValue& value : transfer.values) {
      const double ratio = value.after / value.before;
      const bool efficiency = value.name.find("efficiency") != std::string::npos;
      const bool at_limit =
          value.after != value.before && (efficiency ? (value.after >= 0.999 - 1e-9 || value.after <= 0.001 + 1e-9)
                                                     : (ratio >= 100.0 * (1.0 - 1e-9) || ratio <= 0.01 * (1.0 + 1e-9)));
      EXPECT_EQ(value.at_bound, at_limit) << transfer.system << " " << value.name << " " << value.after;
    }
  }
  // Systems measured on one or two nodes only are calibrated and scored in sample.
  const auto nebius = std::find_if(transfers->begin(), transfers->end(), [](const ScaleTransfer& transfer) {
    return transfer.system == "Nebius H100, InfiniBand 8x400G";
  });
  ASSERT_NE(nebius, transfers->end());
  EXPECT_TRUE(nebius->held_out_curves.empty());
  EXPECT_TRUE(nebius->not_calibrated.empty());
  EXPECT_EQ(nebius->fitted_preset.points, 14);
  EXPECT_LT(nebius->fitted_calibrated.mape, nebius->fitted_preset.mape);
  // One published size cannot constrain three parameters: reported, not skipped, not fitted.
  const auto mi300x = std::find_if(transfers->begin(), transfers->end(), [](const ScaleTransfer& transfer) {
    return transfer.system == "OCI BM.GPU.MI300X.8, RoCE";
  });
  ASSERT_NE(mi300x, transfers->end());
  EXPECT_EQ(mi300x->not_calibrated, "1 published size(s) of at least 1 MiB for 3 parameters");
  EXPECT_TRUE(mi300x->values.empty());
  EXPECT_EQ(mi300x->fitted_preset.points, 1);
}

}  // namespace
}  // namespace trainsim::validation
