// Checking that text is UTF-8. Names and strings read from user files end up in the JSON
// outputs, whose writer (nlohmann-json) throws on invalid UTF-8: such text is refused where it
// is read, at its position, instead of failing a writer after the whole computation.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace trainsim {

// Where `text` stops being UTF-8: the offset of the first byte that does not start or continue
// a well-formed sequence (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF);
// nullopt when all of it is UTF-8.
[[nodiscard]] std::optional<std::size_t> firstInvalidUtf8(std::string_view text);

// "not UTF-8 text (byte 0xFF)": the message for the byte at `offset` of `text`.
[[nodiscard]] std::string invalidUtf8Message(std::string_view text, std::size_t offset);

// The 1-based line and the 1-based column (in bytes, as yaml-cpp counts them) of `offset`.
struct TextPosition {
  std::size_t line = 1;
  std::size_t column = 1;
};
[[nodiscard]] TextPosition positionOf(std::string_view text, std::size_t offset);

}  // namespace trainsim
