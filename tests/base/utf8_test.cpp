#include "base/utf8.h"

#include <gtest/gtest.h>

#include <string>

namespace trainsim {
namespace {

TEST(FirstInvalidUtf8, WellFormedTextHasNone) {
  EXPECT_EQ(firstInvalidUtf8(""), std::nullopt);
  EXPECT_EQ(firstInvalidUtf8("plain ascii, tabs\tand\nnewlines"), std::nullopt);
  EXPECT_EQ(firstInvalidUtf8(std::string("nul\0inside", 10)), std::nullopt);
  // 2, 3 and 4 bytes, and the largest code point U+10FFFF.
  EXPECT_EQ(firstInvalidUtf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x9A\x80 \xF4\x8F\xBF\xBF"), std::nullopt);
}

TEST(FirstInvalidUtf8, FindsTheFirstBadByte) {
  EXPECT_EQ(firstInvalidUtf8("ab\xFF"), 2u);                  // never valid
  EXPECT_EQ(firstInvalidUtf8("a\x80"), 1u);                   // a continuation byte alone
  EXPECT_EQ(firstInvalidUtf8("\xC3"), 0u);                    // cut short at the end
  EXPECT_EQ(firstInvalidUtf8("\xE2\x82x"), 0u);               // cut short before ASCII
  EXPECT_EQ(firstInvalidUtf8("x\xC0\xAF"), 1u);               // overlong '/'
  EXPECT_EQ(firstInvalidUtf8("\xE0\x80\xAF"), 0u);            // overlong, 3 bytes
  EXPECT_EQ(firstInvalidUtf8("\xED\xA0\x80"), 0u);            // a UTF-16 surrogate
  EXPECT_EQ(firstInvalidUtf8("\xF4\x90\x80\x80"), 0u);        // above U+10FFFF
  EXPECT_EQ(firstInvalidUtf8("ok \xC3\xA9 then \xE9"), 11u);  // Latin-1 after valid UTF-8
}

TEST(InvalidUtf8Message, NamesTheByte) { EXPECT_EQ(invalidUtf8Message("a\xFE", 1), "not UTF-8 text (byte 0xFE)"); }

TEST(PositionOf, CountsLinesAndBytes) {
  EXPECT_EQ(positionOf("abc", 0).line, 1u);
  EXPECT_EQ(positionOf("abc", 2).column, 3u);
  const TextPosition position = positionOf("a\nb\xC3\xA9x", 5);
  EXPECT_EQ(position.line, 2u);
  EXPECT_EQ(position.column, 4u);
}

}  // namespace
}  // namespace trainsim
