// `trainsim validate [SUITE]`: predicted vs published measurements.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/command_context.h"

namespace trainsim::cli {

struct ValidateOptions {
  std::string suite = "all";
  std::string json_file;
  bool include_slow = false;       // training: --all
  std::vector<std::string> rows;   // training: --row
  std::string calibration_file;    // --calibration calib.yaml
  bool print_experiment = false;   // training: --print-experiment
  bool fit_rate_fraction = false;  // training: --fit-rate-fraction
  bool scale_transfer = false;     // collectives: --scale-transfer
};

void addValidateCommand(CLI::App& app, ValidateOptions& options);
int runValidate(const ValidateOptions& options, const CommandContext& context);

}  // namespace trainsim::cli
