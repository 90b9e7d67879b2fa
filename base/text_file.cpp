#include "base/text_file.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace trainsim {

Expected<std::string> readTextFile(const std::string& path, std::string_view what) {
  std::error_code ignored;
  if (std::filesystem::is_directory(path, ignored)) {
    return Error{ExitCode::kInvalidInput, path, "", fmt::format("is a directory, expected {}", what)};
  }
  const Error unreadable{ExitCode::kInvalidInput, path, "", fmt::format("cannot read {}", what)};
  std::ifstream stream(path, std::ios::binary);
  if (!stream) return unreadable;
  std::ostringstream text;
  // An empty file leaves failbit set with nothing read; badbit is a read error.
  if (stream.peek() != std::ifstream::traits_type::eof()) text << stream.rdbuf();
  if (stream.bad() || !text) return unreadable;
  return text.str();
}

}  // namespace trainsim
