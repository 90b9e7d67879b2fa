// `trainsim calibrate [--nccl-tests LOG ...] [--harness RESULTS ...] [--attention CSV ...]
// [--training-step EXPERIMENT=SECONDS ...] --cluster C --out calib.yaml`: fits communication and compute parameters to
// measurements of a cluster (calibrate/calibrator.h), prints the fit quality and writes calib.yaml
// (docs/calibration.md).
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/command_context.h"

namespace trainsim::cli {

struct CalibrateOptions {
  std::vector<std::string> nccl_tests_logs;
  std::vector<std::string> harness_files;
  std::vector<std::string> attention_files;  // cudnn-frontend sdpa benchmark CSVs
  std::vector<std::string> training_steps;   // EXPERIMENT=SECONDS: measured training steps
  std::string cluster;
  std::vector<std::string> overrides;
  std::string out;
  std::string op_hint;                  // for nccl-tests runs whose log does not say
  std::vector<std::string> parameters;  // --fit: the communication parameters to fit
  std::string min_bytes;                // --fit-min-bytes
};

void addCalibrateCommand(CLI::App& app, CalibrateOptions& options);
int runCalibrate(const CalibrateOptions& options, const CommandContext& context);

}  // namespace trainsim::cli
