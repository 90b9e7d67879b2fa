// calib.yaml: writing a Calibration and reading it back strictly (schema in
// docs/calibration.md; `format: trainsim-calibration-1`). Unknown keys, values out of range
// and unknown parameter names are errors at file:line:col (exit 2).
#pragma once

#include <string>

#include "base/expected.h"
#include "calibrate/calibration.h"

namespace trainsim::calibrate {

inline constexpr const char* kCalibrationFormat = "trainsim-calibration-1";

// The YAML text of `calibration` (its `file` member is not written).
[[nodiscard]] std::string calibrationYaml(const Calibration& calibration);

// Parses calib.yaml text; `name` is shown as the file in messages and kept as Calibration::file.
[[nodiscard]] Expected<Calibration> parseCalibration(const std::string& text, const std::string& name);
[[nodiscard]] Expected<Calibration> loadCalibrationFile(const std::string& path);

}  // namespace trainsim::calibrate
