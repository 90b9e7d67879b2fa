// How far to trust a prediction: the out-of-sample error of the training validation suite
// for the run's software stack and GPU type (configs/validation/expected_error.yaml, taken
// from `trainsim validate training --fit-rate-fraction`: each source's rows predicted with the
// in-step kernel-rate fraction fitted without that source). `simulate` and `sweep` state it
// beside every answer.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/config_paths.h"
#include "base/expected.h"

namespace trainsim::validation {

// One group's held-out accuracy: rows of `stack` ("" = no stack named: the defaults' own
// sources) on GPU type `gpu`; with `moe`, the mixture-of-experts rows on `gpu`, whatever their
// stack (validation-only sources, so every row is out of sample).
struct HeldOutAccuracy {
  std::string stack;
  std::string gpu;
  int sources = 0;
  int rows = 0;
  // Of the predicted iteration time: mean |predicted / measured step - 1| of the rows, each
  // source held out, and the mean signed error (positive: predicted slower than measured).
  double mape = 0.0;
  double bias = 0.0;
  bool moe = false;
};

struct ExpectedErrorTable {
  std::string command;  // what produced the figures
  // The stacks the suite's rows without a stack were run with (the defaults were fitted on
  // them): a run naming one of these takes those rows' accuracy.
  std::vector<std::string> default_stacks;
  std::vector<HeldOutAccuracy> groups;
};

// The error a run of `stack` on `gpu` should expect, and what it rests on.
struct ExpectedError {
  double mape = 0.0;
  double bias = 0.0;
  int sources = 0;
  int rows = 0;
  // "this stack on this GPU", "this stack on other GPUs (worst)", "the defaults' sources on
  // this GPU: no published run of this stack", ...
  std::string basis;
  // The rows were never fitted (the mixture-of-experts groups), rather than held out of a fit.
  bool never_fitted = false;
};

// Reads <config_dir>/validation/expected_error.yaml (strict: file:line:col errors).
[[nodiscard]] Expected<ExpectedErrorTable> loadExpectedErrorTable(const ConfigPaths& paths);

// The group that matches. A dense model: the stack on the GPU (a default stack: the rows
// without one); else the stack's worst group on another GPU; else the rows without a stack on
// the GPU (for a stack with no published run: a floor, said so in the basis). A
// mixture-of-experts model (`moe`): the MoE rows on the GPU; else the worst MoE group on
// another GPU; else as a dense model, said so in the basis. nullopt when none applies; for a
// mixture-of-experts model the fallbacks only where the GPU has a dense group of the stack or
// of the defaults (a GPU without any published run stays unknown).
[[nodiscard]] std::optional<ExpectedError> expectedError(const ExpectedErrorTable& table, const std::string& stack,
                                                         const std::string& gpu, bool moe);

}  // namespace trainsim::validation
