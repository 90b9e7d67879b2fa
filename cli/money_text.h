// Amounts of money as the text reports print them: "$1.25M", "$830.0k", "$412".
#pragma once

#include <fmt/format.h>

#include <string>

namespace trainsim::cli {

[[nodiscard]] inline std::string dollarsText(double usd) {
  if (usd >= 1e6) return fmt::format("${:.2f}M", usd / 1e6);
  if (usd >= 1e3) return fmt::format("${:.1f}k", usd / 1e3);
  return fmt::format("${:.0f}", usd);
}

}  // namespace trainsim::cli
