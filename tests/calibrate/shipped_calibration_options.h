// Calibration options that start from the models' shipped defaults, as `trainsim calibrate` does.
#pragma once

#include "calibrate/calibrator.h"
#include "tests/shipped_defaults.h"

namespace trainsim::calibrate {

inline CalibrationOptions shippedCalibrationOptions() {
  CalibrationOptions options;
  options.communication_start = shippedCommunication();
  options.compute_start = shippedCompute();
  return options;
}

}  // namespace trainsim::calibrate
