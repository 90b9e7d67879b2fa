// Shared helpers for the parallelism tests: where the test configs live, and how to read an
// Expected's error as the one line the user would see.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "base/config_node.h"
#include "base/config_paths.h"
#include "base/expected.h"
#include "parallelism/experiment_loader.h"
#include "parallelism/transformer_workload.h"

namespace trainsim::parallelism::testing {

// A config directory of its own (gpus.yaml, models/, clusters/, experiments/), so that the
// tests do not depend on what the shipped presets happen to contain.
inline std::string dataDir() { return TRAINSIM_TEST_DATA_DIR "/parallelism"; }
inline ConfigPaths testPaths() { return ConfigPaths{dataDir() + "/configs"}; }

inline std::vector<Override> overrides(const std::vector<std::string>& texts) {
  std::vector<Override> result;
  for (const auto& text : texts) result.push_back(parseOverride(text));
  return result;
}

// The experiment `yaml` describes, over the shipped presets, with `sets` applied as `--set`
// would; an error throws std::runtime_error with the message the user would see.
inline Experiment shippedExperiment(const std::string& yaml, const std::vector<std::string>& sets) {
  auto experiment = loadExperimentNode(parseConfigText(yaml, "test.yaml"), ConfigPaths{TRAINSIM_CONFIG_DIR_FOR_TESTS},
                                       overrides(sets));
  if (!experiment.ok()) throw std::runtime_error(experiment.error().toString());
  return std::move(experiment).value();
}

// The error as printed, after checking it is an input error (exit code 2).
template <class T>
std::string errorText(const Expected<T>& result) {
  if (result.ok()) return "<no error>";
  EXPECT_EQ(result.error().code, ExitCode::kInvalidInput);
  return result.error().toString();
}

// The op of `workload` named `name`; throws when it has none.
inline const Op& opNamed(const Workload& workload, const std::string& name) {
  const Op* op = workload.find(name);
  if (op == nullptr) throw std::runtime_error("no op " + name);
  return *op;
}

}  // namespace trainsim::parallelism::testing
