// Running one trainsim command line: parses it (CLI11), runs the command, and is the single
// place where errors become exit codes (SPEC.md). main() and the Python module (python/) both
// run commands through it, so that both give the same results, messages and exit codes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/error.h"

namespace trainsim::cli {

struct CommandLineResult {
  int exit_code = 0;
  // The input error the command reported, when it reported one (its message is on stderr
  // too); command-line parse errors (an unknown option) have only their message.
  std::optional<Error> error;
};

// Runs `args` (args[0] is the program's name, as argv) with output on std::cout and messages
// on std::cerr; a caller may redirect both. Not reentrant: one command line at a time per
// process (the logger and the streams are the process's).
CommandLineResult runCommandLine(const std::vector<std::string>& args);

}  // namespace trainsim::cli
