// What every command gets from main(): where presets live, and how to report errors.
#pragma once

#include <iostream>
#include <string>

#include "base/config_paths.h"
#include "base/error.h"

namespace trainsim::cli {

struct CommandContext {
  ConfigPaths paths;
};

// Prints "trainsim: <error>" on stderr and returns the error's exit code.
inline int reportError(const Error& error) {
  std::cerr << "trainsim: error: " << error.toString() << "\n";
  return static_cast<int>(error.code);
}

}  // namespace trainsim::cli
