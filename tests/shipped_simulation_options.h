// Simulation options with the models' shipped defaults (parallelism::defaultSimulationOptions),
// for tests of modules that link trainsim::parallelism.
#pragma once

#include "parallelism/iteration_simulation.h"
#include "tests/shipped_defaults.h"

namespace trainsim {

inline parallelism::SimulationOptions shippedSimulationOptions() {
  static const parallelism::SimulationOptions options =
      valueOrThrow(parallelism::defaultSimulationOptions(shippedConfigPaths()));
  return options;
}

// The iteration time of `experiment` as the commands simulate it: the shipped defaults, then
// its stack (a no-op without one). Throws on a simulation error.
inline double shippedIterationSeconds(const parallelism::Experiment& experiment) {
  parallelism::SimulationOptions options = shippedSimulationOptions();
  parallelism::applySoftwareStack(experiment, options);
  return valueOrThrow(parallelism::simulateIteration(experiment, options)).iteration_time_s;
}

}  // namespace trainsim
