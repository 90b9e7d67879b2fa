// Fitting the rate fraction of a GPU's kernels inside a training step to measured step
// times: round trips through steps the test simulates with a known fraction, the range and
// GPU checks, and calib.yaml.
#include <gtest/gtest.h>

#include <cmath>

#include "base/config_paths.h"
#include "calibrate/calibration_file.h"
#include "calibrate/calibrator.h"
#include "calibrate/training_step_fit.h"
#include "parallelism/experiment_loader.h"
#include "tests/calibrate/shipped_calibration_options.h"
#include "tests/shipped_simulation_options.h"
#include "topology/cluster_loader.h"

namespace trainsim::calibrate {
namespace {

const ConfigPaths kPaths{TRAINSIM_CONFIG_DIR_FOR_TESTS};

// The shipped Llama 3 8B experiment on one DGX H100 (8 GPUs), with a plan of its own.
parallelism::Experiment llama(const std::vector<Override>& plan = {}) {
  std::vector<Override> overrides = {parseOverride("training.global_batch_size=32")};
  overrides.insert(overrides.end(), plan.begin(), plan.end());
  return valueOrThrow(parallelism::loadExperiment("llama3-8b-dgx-h100", kPaths, overrides));
}

parallelism::SimulationOptions withFraction(const std::string& gpu, double fraction) {
  parallelism::SimulationOptions options = shippedSimulationOptions();
  options.compute.training_rate_fraction = {{gpu, fraction}};
  return options;
}

double stepSeconds(const parallelism::Experiment& experiment,
                   const parallelism::SimulationOptions& options = shippedSimulationOptions()) {
  return valueOrThrow(parallelism::simulateIteration(experiment, options)).iteration_time_s;
}

TEST(TrainingStepFitTest, RecoversTheFractionAStepWasSimulatedWith) {
  const auto experiment = llama();
  const double measured = stepSeconds(experiment, withFraction("h100-sxm", 0.75));
  const auto fit =
      valueOrThrow(fitTrainingRateFraction({{experiment, measured, "llama=measured"}}, shippedSimulationOptions()));
  EXPECT_EQ(fit.gpu_key, "h100-sxm");
  EXPECT_NEAR(fit.fraction, 0.75, 1e-3);
  ASSERT_EQ(fit.steps.size(), 1U);
  // Before: the H100 default, 0.883; the kernels' share of the step is 0.883 / 0.75 slower.
  EXPECT_GT(fit.rms_relative_error_before, 0.1);
  EXPECT_LT(fit.rms_relative_error_after, 2e-4);
  EXPECT_NEAR(fit.steps[0].after_s, measured, 2e-4 * measured);
  EXPECT_LT(fit.simulations, 20);
}

TEST(TrainingStepFitTest, SeveralStepsBalanceTheirLogErrors) {
  const auto tp1 = llama();
  const auto tp2 = llama({parseOverride("parallelism.tp=2"), parseOverride("parallelism.dp=2")});
  // One plan measured at 0.8 of the kernels' rates, the other at 0.9: the fit lies between,
  // the first step simulated fast and the second slow by the same log ratio.
  const double first = stepSeconds(tp1, withFraction("h100-sxm", 0.8));
  const double second = stepSeconds(tp2, withFraction("h100-sxm", 0.9));
  const auto fit =
      valueOrThrow(fitTrainingRateFraction({{tp1, first, "tp1"}, {tp2, second, "tp2"}}, shippedSimulationOptions()));
  EXPECT_GT(fit.fraction, 0.8);
  EXPECT_LT(fit.fraction, 0.9);
  const double log_first = std::log(fit.steps[0].after_s / first);
  const double log_second = std::log(fit.steps[1].after_s / second);
  EXPECT_LT(log_first, 0.0);
  EXPECT_GT(log_second, 0.0);
  EXPECT_NEAR(log_first + log_second, 0.0, 2e-4);
}

TEST(TrainingStepFitTest, AStepNoFractionCanReachIsAnErrorThatNamesIt) {
  const auto experiment = llama();
  const double simulated = stepSeconds(experiment);
  auto slow = fitTrainingRateFraction({{experiment, 10.0 * simulated, "llama=slow"}}, shippedSimulationOptions());
  ASSERT_FALSE(slow.ok());
  EXPECT_EQ(slow.error().where, "llama=slow");
  EXPECT_NE(slow.error().message.find("slower than the model"), std::string::npos) << slow.error().message;
  auto fast = fitTrainingRateFraction({{experiment, 0.1 * simulated, "llama=fast"}}, shippedSimulationOptions());
  ASSERT_FALSE(fast.ok());
  EXPECT_NE(fast.error().message.find("faster than the model"), std::string::npos) << fast.error().message;
  auto negative = fitTrainingRateFraction({{experiment, -1.0, "llama=-1"}}, shippedSimulationOptions());
  ASSERT_FALSE(negative.ok());
  EXPECT_NE(negative.error().message.find("positive"), std::string::npos);
}

TEST(TrainingStepFitTest, StepsOfAnotherGpuThanTheCalibratedClusterAreRejected) {
  auto spec = valueOrThrow(topology::loadClusterFile("dgx-a100", kPaths, {}));
  const auto cluster = valueOrThrow(topology::Cluster::build(spec));
  CalibrationInputs inputs;
  inputs.training_steps.push_back({llama(), 1.0, "llama=1"});
  auto result = runCalibration(cluster, inputs, shippedCalibrationOptions());
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message.find("h100-sxm"), std::string::npos) << result.error().message;
}

TEST(TrainingStepFitTest, TheCalibrationFileCarriesTheFractionAndReproducesTheStep) {
  const auto experiment = llama();
  const double measured = stepSeconds(experiment, withFraction("h100-sxm", 0.9));
  auto spec = valueOrThrow(topology::loadClusterFile("dgx-h100", kPaths, {}));
  const auto cluster = valueOrThrow(topology::Cluster::build(spec));
  CalibrationInputs inputs;
  inputs.training_steps.push_back({experiment, measured, "llama=measured"});
  const auto result = valueOrThrow(runCalibration(cluster, inputs, shippedCalibrationOptions()));
  ASSERT_TRUE(result.training_step_fit.has_value());
  const std::string yaml = calibrationYaml(result.calibration);
  EXPECT_NE(yaml.find("training_rate_fraction:"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("training_step_fit:"), std::string::npos) << yaml;
  const auto read = valueOrThrow(parseCalibration(yaml, "calib.yaml"));
  ASSERT_EQ(read.compute.training_rate_fraction.size(), 1U);
  EXPECT_EQ(read.compute.training_rate_fraction[0].fraction, result.training_step_fit->fraction);
  ASSERT_TRUE(read.training_step_fit.has_value());
  EXPECT_EQ(read.training_step_fit->steps, 1);
  parallelism::SimulationOptions options = shippedSimulationOptions();
  applyCalibration(read, options);
  EXPECT_NEAR(stepSeconds(experiment, options), measured, 2e-4 * measured);
}

// A step of a software stack: its "before" is what `simulate` gives without a calibration
// (the stack's fraction, pytorch-fsdp's 0.739 on H100, not the GPU's default 0.883), and a
// calibrated value wins over the stack's as it does in `simulate --calibration`.
TEST(TrainingStepFitTest, StepsRunTheirStackUnderTheCalibrationAsSimulateDoes) {
  const auto experiment =
      llama({parseOverride("training.stack=pytorch-fsdp"),
             parseOverride("training.stack_overrides.compute.memory_efficiency=[{gpu: h100-sxm, fraction: 0.5}]")});
  Calibration calibration;
  calibration.compute.memory_efficiency = {{"h100-sxm", 0.9}};
  // As `simulate --calibration` runs it: the defaults, the stack, the calibration, and the
  // fraction the step was "measured" at.
  parallelism::SimulationOptions as_simulated = shippedSimulationOptions();
  parallelism::applySoftwareStack(experiment, as_simulated);
  applyCalibration(calibration, as_simulated);
  const double before = stepSeconds(experiment, as_simulated);
  as_simulated.compute.training_rate_fraction = {{"h100-sxm", 0.8}};
  const double measured = stepSeconds(experiment, as_simulated);

  const auto fit = valueOrThrow(
      fitTrainingRateFraction({{experiment, measured, "fsdp=measured"}}, shippedSimulationOptions(), calibration));
  EXPECT_NEAR(fit.fraction, 0.8, 1e-3);
  ASSERT_EQ(fit.steps.size(), 1U);
  EXPECT_DOUBLE_EQ(fit.steps[0].before_s, before);
  EXPECT_NEAR(fit.steps[0].after_s, measured, 2e-4 * measured);
  // Without the calibration the stack's memory efficiency is in force: another step time.
  parallelism::SimulationOptions stack_only = shippedSimulationOptions();
  parallelism::applySoftwareStack(experiment, stack_only);
  EXPECT_GT(stepSeconds(experiment, stack_only), before * 1.001);
}

TEST(TrainingStepFitTest, AFractionOutsideItsRangeInTheFileIsAnErrorAtItsPosition) {
  const std::string text =
      "format: trainsim-calibration-1\n"
      "cluster: dgx-h100\n"
      "gpu: h100-sxm\n"
      "compute:\n"
      "  training_rate_fraction:\n"
      "    - {gpu: h100-sxm, fraction: 5}\n";
  auto read = parseCalibration(text, "calib.yaml");
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.error().where.find("calib.yaml:6:"), std::string::npos) << read.error().where;
}

}  // namespace
}  // namespace trainsim::calibrate
