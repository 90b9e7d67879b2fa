// What every command gets from the command-line runner: where presets live, and how to
// report errors.
#pragma once

#include <iostream>
#include <optional>
#include <string>

#include "base/config_paths.h"
#include "base/error.h"

namespace trainsim::cli {

struct CommandContext {
  ConfigPaths paths;
  // The input error the command reported (reportError), for an in-process caller that turns
  // it into its own error type (the Python module); the message on stderr is the same.
  mutable std::optional<Error> reported_error;
};

// Prints "trainsim: error: <error>" on stderr, records it in the context and returns the
// error's exit code.
inline int reportError(const Error& error, const CommandContext& context) {
  std::cerr << "trainsim: error: " << error.toString() << "\n";
  context.reported_error = error;
  return static_cast<int>(error.code);
}

}  // namespace trainsim::cli
