// `trainsim memory EXPERIMENT.yaml`: per-GPU memory of every pipeline stage, the peak, and
// whether it fits (exit 3 when it does not, SPEC.md). No simulation.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/command_context.h"

namespace trainsim::cli {

struct MemoryOptions {
  std::string experiment;
  std::vector<std::string> overrides;
  std::string json_file;
  std::string calibration_file;  // --calibration: read and reported; nothing it holds applies to memory yet
};

void addMemoryCommand(CLI::App& app, MemoryOptions& options);
int runMemory(const MemoryOptions& options, const CommandContext& context);

}  // namespace trainsim::cli
