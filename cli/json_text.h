// The text of a JSON output, which never fails on text that is not UTF-8.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace trainsim::cli {

// `json` as text (compact, or indented by `indent` spaces). Names read from files are UTF-8
// (checked where they are read), but a name that defaults to its file's name (an experiment
// or cluster without `name:`) comes from a path, which on Linux may hold any bytes; nlohmann-
// json's dump would throw on them after the whole computation, so they are written as U+FFFD.
template <class Json>
[[nodiscard]] std::string jsonText(const Json& json, int indent = -1) {
  return json.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace trainsim::cli
