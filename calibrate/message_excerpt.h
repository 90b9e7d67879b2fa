// How a reader of measurement files quotes the text it refuses: at most 100 characters, so
// that a runaway line or cell does not make a runaway message.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace trainsim::calibrate {

[[nodiscard]] inline std::string messageExcerpt(std::string_view text) {
  constexpr std::size_t kMaxShown = 100;
  if (text.size() <= kMaxShown) return std::string(text);
  return std::string(text.substr(0, kMaxShown)) + fmt::format("... ({} characters)", text.size());
}

}  // namespace trainsim::calibrate
