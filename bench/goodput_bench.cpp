// The goodput model at issue 38's speed goals, on the shipped Llama 3 405B experiment
// (16,384 H100, 15.6T tokens) at its simulated iteration time:
//   the analytic estimate (interruptions, checkpoints, restarts)   goal < 1 s
//   10,000 Monte Carlo draws of the run                            goal < 10 s
// The iteration is simulated once, outside the timed loops (symmetric mode). Counters: the
// expected goodput, the time to train with failures and the draws' p50 and p90 in days.
//   ./build/goodput_bench
#include <benchmark/benchmark.h>

#include <stdexcept>
#include <string>

#include "base/config_paths.h"
#include "goodput/goodput_report.h"
#include "parallelism/experiment_loader.h"
#include "parallelism/iteration_simulation.h"
#include "tests/shipped_simulation_options.h"
#include "topology/reliability_spec.h"

namespace {

using namespace trainsim;

struct Llama3Run {
  parallelism::Experiment experiment;
  topology::ReliabilitySpec reliability;
  double iteration_time_s = 0.0;
};

const Llama3Run& llama3Run() {
  static const Llama3Run run = [] {
    const ConfigPaths paths{TRAINSIM_CONFIG_DIR_FOR_TESTS};
    auto experiment = parallelism::loadExperiment("llama3-405b-16k-h100", paths);
    if (!experiment) throw std::runtime_error(experiment.error().toString());
    parallelism::SimulationOptions options = shippedSimulationOptions();
    options.iteration.symmetric = true;
    auto simulated = parallelism::simulateIteration(experiment.value(), options);
    if (!simulated) throw std::runtime_error(simulated.error().toString());
    auto reliability = topology::clusterReliability(experiment->cluster, paths);
    if (!reliability) throw std::runtime_error(reliability.error().toString());
    return Llama3Run{experiment.value(), reliability.value(), simulated->iteration_time_s};
  }();
  return run;
}

void goodput(benchmark::State& state, int64_t draws) {
  const Llama3Run& run = llama3Run();
  std::optional<goodput::GoodputReport> report;
  for (auto _ : state) {
    report = goodput::goodputAt(run.experiment, run.reliability, run.iteration_time_s, {draws, 1, false});
    benchmark::DoNotOptimize(report);
  }
  if (!report || !report->estimate) throw std::runtime_error("no goodput estimate");
  state.counters["goodput"] = report->estimate->goodput;
  state.counters["days"] = report->estimate->wall_s / 86400.0;
  if (report->monte_carlo) {
    state.counters["p50_days"] = report->monte_carlo->wall_p50_s / 86400.0;
    state.counters["p90_days"] = report->monte_carlo->wall_p90_s / 86400.0;
  }
}

void BM_Llama3_405B_Goodput_Analytic(benchmark::State& state) { goodput(state, 0); }
void BM_Llama3_405B_Goodput_MonteCarlo10k(benchmark::State& state) { goodput(state, 10'000); }

BENCHMARK(BM_Llama3_405B_Goodput_Analytic)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Llama3_405B_Goodput_MonteCarlo10k)->Unit(benchmark::kSecond)->Iterations(1)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
