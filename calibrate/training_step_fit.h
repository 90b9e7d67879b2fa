// Fitting the rate a GPU's kernels reach inside a training step to measured step times
// (`trainsim calibrate --training-step`): the one compute parameter that a measured run of
// the user's own software stack pins down and no microbenchmark does.
//
// Each measured step is an experiment (model, cluster, plan) and the seconds one training
// step of it took. The fit finds the fraction f of perf::ComputeParameters::
// training_rate_fraction (every compute kernel's time divided by f, communication as it
// is) that makes the simulated steps match: the root of the mean log ratio
// simulated / measured over the steps, which falls as f grows (faster kernels, shorter
// steps). Found by the Illinois variant of regula falsi on log f over [0.25, 4], a handful of
// simulations per step. One step is matched exactly; several get the fraction that leaves
// their errors balanced in the log (what a multiplicative model can do for all of them).
#pragma once

#include <string>
#include <vector>

#include "base/expected.h"
#include "calibrate/calibration.h"
#include "parallelism/experiment.h"
#include "parallelism/iteration_simulation.h"

namespace trainsim::calibrate {

struct MeasuredTrainingStep {
  parallelism::Experiment experiment;
  double seconds = 0.0;  // one measured training step (iteration)
  std::string source;    // where it came from, for reports ("llama.yaml=9.31")
};

struct TrainingStepPrediction {
  std::string source;
  double measured_s = 0.0;
  double before_s = 0.0;  // simulated with the starting parameters
  double after_s = 0.0;   // simulated with the fitted fraction
};

struct TrainingStepFit {
  std::string gpu_key;
  double fraction = 1.0;
  int simulations = 0;
  std::vector<TrainingStepPrediction> steps;
  double rms_relative_error_before = 0.0;  // RMS of simulated / measured - 1
  double rms_relative_error_after = 0.0;
};

// Every step must run on GPUs of one kind (the calibrated cluster's). Each step is simulated
// as `simulate --calibration` runs it: `defaults` (the shipped parameters, no stack applied),
// the step's software stack, then `in_force` (whatever the rest of the calibration fitted),
// whose values win over the stack's; the GPU's fraction is then the one tried. The "before"
// times are at the fraction in force that way (the stack's or the GPU's default). An error
// names the step when its measured time lies outside what fractions of 0.25 to 4 can simulate.
[[nodiscard]] Expected<TrainingStepFit> fitTrainingRateFraction(const std::vector<MeasuredTrainingStep>& steps,
                                                                const parallelism::SimulationOptions& defaults,
                                                                const Calibration& in_force = {});

}  // namespace trainsim::calibrate
