// Text for HTML and SVG markup: names come from files (an experiment's `name:`, a model's, a
// path), so every piece of user text is escaped before it meets markup.
#pragma once

#include <string>
#include <string_view>

#include "base/utf8.h"

namespace trainsim::cli {

// `<`, `>`, `&`, `"` and `'` as character references, safe in element content and in quoted
// attribute values alike; bytes that are not UTF-8 (a name from a path may hold any) as
// U+FFFD, as the JSON outputs write them, since the page declares UTF-8.
[[nodiscard]] inline std::string escapeHtml(std::string_view text) {
  std::string escaped;
  escaped.reserve(text.size());
  while (!text.empty()) {
    const auto invalid = firstInvalidUtf8(text);
    for (char c : text.substr(0, invalid.value_or(text.size()))) {
      switch (c) {
        case '&': escaped += "&amp;"; break;
        case '<': escaped += "&lt;"; break;
        case '>': escaped += "&gt;"; break;
        case '"': escaped += "&quot;"; break;
        case '\'': escaped += "&#39;"; break;
        default: escaped += c;
      }
    }
    if (!invalid) break;
    escaped += "\xEF\xBF\xBD";
    text.remove_prefix(*invalid + 1);
  }
  return escaped;
}

}  // namespace trainsim::cli
