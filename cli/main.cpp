// trainsim: the command-line entry point (cli/command_line.h runs the command).
#include <string>
#include <vector>

#include "cli/command_line.h"

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv, argv + argc);
  return trainsim::cli::runCommandLine(args).exit_code;
}
