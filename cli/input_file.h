// A check on a file argument before a loader opens it.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "base/config_paths.h"
#include "base/error.h"

namespace trainsim::cli {

// A reference that is a path to a directory is an error (exit 2) naming it. On Linux a
// directory opens as a stream and fails only when read, deep inside the YAML reader, with
// an internal error ("basic_filebuf::underflow"). Preset names are left to the loader.
inline void requireNotDirectory(const std::string& reference, std::string_view expected) {
  std::error_code ignored;
  if (looksLikePath(reference) && std::filesystem::is_directory(reference, ignored)) {
    throwInputError(reference, "", "is a directory, expected " + std::string(expected));
  }
}

}  // namespace trainsim::cli
