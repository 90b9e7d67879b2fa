// Every model and experiment preset shipped in configs/ loads and passes plan validation.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "parallelism/experiment_loader.h"
#include "parallelism/model_loader.h"

namespace trainsim::parallelism {
namespace {

std::vector<std::string> presetNames(const std::string& category) {
  std::vector<std::string> names;
  const std::filesystem::path directory = std::filesystem::path(TRAINSIM_CONFIG_DIR_FOR_TESTS) / category;
  std::error_code ignored;
  for (const auto& entry : std::filesystem::directory_iterator(directory, ignored)) {
    if (entry.path().extension() == ".yaml") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

const ConfigPaths kShippedPaths{TRAINSIM_CONFIG_DIR_FOR_TESTS};

TEST(ShippedConfigs, ModelPresetsLoad) {
  const auto names = presetNames("models");
  if (names.empty()) GTEST_SKIP() << "no model presets in " << TRAINSIM_CONFIG_DIR_FOR_TESTS;
  for (const auto& name : names) {
    auto model = loadModelFile(name, kShippedPaths);
    EXPECT_TRUE(model.ok()) << name << ": " << model.error().toString();
  }
}

TEST(ShippedConfigs, ExperimentPresetsLoad) {
  const auto names = presetNames("experiments");
  if (names.empty()) GTEST_SKIP() << "no experiment presets in " << TRAINSIM_CONFIG_DIR_FOR_TESTS;
  for (const auto& name : names) {
    auto experiment = loadExperiment(name, kShippedPaths);
    EXPECT_TRUE(experiment.ok()) << name << ": " << experiment.error().toString();
  }
}

}  // namespace
}  // namespace trainsim::parallelism
