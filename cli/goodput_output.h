// The goodput part of `simulate`'s answer (goodput/goodput_report.h), as JSON ("goodput" in
// SPEC "Result JSON") and as text lines.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "goodput/goodput_report.h"

namespace trainsim::cli {

// The "goodput" object; null when the run has no training.tokens.
[[nodiscard]] nlohmann::ordered_json goodputJson(const std::optional<goodput::GoodputReport>& report,
                                                 const goodput::GoodputOptions& options);

// "goodput ..." and "time w/ failures ..." lines; empty without a report.
[[nodiscard]] std::string goodputText(const std::optional<goodput::GoodputReport>& report);

// "12.3 days", "4.5 h", "0.250 s".
[[nodiscard]] std::string durationText(double seconds);

}  // namespace trainsim::cli
