// The results file of the calibration harness (docs/harness.md, format "trainsim-harness-1"):
// one YAML document, written by rank 0 of trainsim-calib-nccl or by trainsim-calib-gemm, read
// by `trainsim calibrate --harness`. Numbers are written in plain decimal notation (no
// exponent), six significant digits, so that any YAML 1.1 or 1.2 reader takes them as numbers.
#pragma once

#include <optional>
#include <string>

#include "base/error.h"
#include "calibrate/harness/harness_results.h"

namespace trainsim::harness {

[[nodiscard]] std::string ncclResultsYaml(const NcclResults& results);
[[nodiscard]] std::string gemmResultsYaml(const GemmResults& results);

// `value` with `significant` significant digits in plain decimal notation, trailing zeros
// dropped: 12.3, 0.000083, 1234570 (not 1.23457e+06). Asserts a finite value.
[[nodiscard]] std::string formatDecimal(double value, int significant = 6);

// Writes `text` to `path` ("-" = stdout); an error naming the file when it cannot.
[[nodiscard]] std::optional<Error> writeResultsFile(const std::string& path, const std::string& text);

}  // namespace trainsim::harness
