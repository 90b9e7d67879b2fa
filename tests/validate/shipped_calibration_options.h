// Calibration options that start from the models' shipped defaults, as `trainsim calibrate` does.
#pragma once

#include "tests/shipped_defaults.h"
#include "validate/calibrator.h"

namespace trainsim::validate {

inline CalibrationOptions shippedCalibrationOptions() {
  CalibrationOptions options;
  options.communication_start = shippedCommunication();
  options.compute_start = shippedCompute();
  return options;
}

}  // namespace trainsim::validate
