// `trainsim sweep` at the scale of the issue: GPT-3 175B on 1,024 A100s (gpt3-175b-selene,
// global batch 1,536) over the whole default space. Counters: plans enumerated, screened
// (fit in memory), event-simulated, and plans per second over the whole search.
//   ./build/sweep_bench                                   # both cases
//   ./build/sweep_bench --benchmark_filter=Screen         # enumeration + memory + screen only
#include <benchmark/benchmark.h>

#include <thread>

#include "base/config_paths.h"
#include "sweep/process_group.h"
#include "sweep/sweep.h"
#include "sweep/sweep_target.h"
#include "tests/shipped_simulation_options.h"

namespace {

using namespace trainsim;

std::vector<sweep::SweepTarget> gpt3Targets() {
  sweep::SweepTargetRequest request;
  request.experiment = "gpt3-175b-selene";
  auto targets = sweep::loadSweepTargets(request, ConfigPaths{TRAINSIM_CONFIG_DIR_FOR_TESTS});
  if (!targets) throw std::runtime_error(targets.error().toString());
  return std::move(targets).value();
}

void runGpt3Sweep(benchmark::State& state, std::size_t max_simulations) {
  sweep::SweepSettings settings;
  settings.simulation = shippedSimulationOptions();
  settings.threads = static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  settings.max_simulations = max_simulations;
  settings.simulation.iteration.symmetric = true;
  auto group = sweep::singleProcess();
  sweep::SweepCounts counts;
  for (auto _ : state) {
    const sweep::SweepResult result = sweep::runSweep(gpt3Targets(), sweep::PlanSpace{}, settings, *group);
    counts = result.counts;
    benchmark::DoNotOptimize(result.order.data());
  }
  state.counters["enumerated"] = static_cast<double>(counts.enumerated);
  state.counters["invalid"] = static_cast<double>(counts.invalid);
  state.counters["pruned_memory"] = static_cast<double>(counts.pruned_memory);
  state.counters["fit"] = static_cast<double>(counts.fitting);
  state.counters["simulated"] = static_cast<double>(counts.simulated);
  state.counters["simulation_runs"] = static_cast<double>(counts.simulation_runs);
  state.counters["plans_per_s"] =
      benchmark::Counter(static_cast<double>(counts.enumerated) * state.iterations(), benchmark::Counter::kIsRate);
  state.counters["threads"] = settings.threads;
}

// Enumeration, validation, memory model and analytical screen of every plan; one simulation.
void BM_SweepGpt3Screen(benchmark::State& state) { runGpt3Sweep(state, 1); }
BENCHMARK(BM_SweepGpt3Screen)->Unit(benchmark::kSecond)->Iterations(1)->UseRealTime();

// The whole search, as `trainsim sweep gpt3-175b-selene` runs it.
void BM_SweepGpt3Full(benchmark::State& state) { runGpt3Sweep(state, 0); }
BENCHMARK(BM_SweepGpt3Full)->Unit(benchmark::kSecond)->Iterations(1)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
