// `trainsim simulate` at the scale of issue 4's speed goals, loading the shipped experiments:
//   GPT-3 175B on 1,024 A100 (gpt3-175b-selene)          goal 2 s
//   Llama 3 405B on 16,384 H100 (llama3-405b-16k-h100)   goals 60 s and 8 GB full, 2 s symmetric
//   DeepSeek-V3 671B on 2,048 H100 (deepseek-v3-h100 at dp 128, the all-to-all overlapped)
//                                                        goal 10 s full (issue 36)
// Each case loads the experiment, builds the cluster and the iteration's task graph and
// simulates it, as the command does (its steady-state runs side by side on every hardware
// thread, SimulationOptions::threads; the OneThread case one after another). Counters: tasks and events simulated, the
// predicted iteration time, and the process's peak resident memory so far (getrusage; the cases are registered from the
// smallest to the largest, so each figure is that case's own peak).
//   ./build/simulate_bench
//   ./build/simulate_bench --benchmark_filter=Llama
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "base/config_paths.h"
#include "parallelism/experiment_loader.h"
#include "parallelism/iteration_simulation.h"
#include "tests/shipped_simulation_options.h"

namespace {

using namespace trainsim;

double peakResidentMiB() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

void simulate(benchmark::State& state, const std::string& experiment_name, bool symmetric, bool every_microbatch,
              const std::vector<std::string>& settings = {},
              int threads = static_cast<int>(std::max(1U, std::thread::hardware_concurrency()))) {
  parallelism::IterationResult result;
  std::vector<Override> overrides;
  for (const auto& text : settings) overrides.push_back(parseOverride(text));
  for (auto _ : state) {
    auto experiment =
        parallelism::loadExperiment(experiment_name, ConfigPaths{TRAINSIM_CONFIG_DIR_FOR_TESTS}, overrides);
    if (!experiment) throw std::runtime_error(experiment.error().toString());
    parallelism::SimulationOptions options = shippedSimulationOptions();
    options.iteration.symmetric = symmetric;
    options.every_microbatch = every_microbatch;
    options.threads = threads;
    auto simulated = parallelism::simulateIteration(experiment.value(), options);
    if (!simulated) throw std::runtime_error(simulated.error().toString());
    result = std::move(simulated).value();
    benchmark::DoNotOptimize(result.iteration_time_s);
  }
  state.counters["tasks"] = static_cast<double>(result.tasks);
  state.counters["events"] = static_cast<double>(result.events);
  state.counters["iteration_s"] = result.iteration_time_s;
  state.counters["peak_rss_MiB"] = peakResidentMiB();
}

void BM_Gpt3_175B_1024xA100_Symmetric(benchmark::State& state) { simulate(state, "gpt3-175b-selene", true, false); }
void BM_Gpt3_175B_1024xA100_Full(benchmark::State& state) { simulate(state, "gpt3-175b-selene", false, false); }
void BM_Gpt3_175B_1024xA100_FullEveryMicrobatch(benchmark::State& state) {
  simulate(state, "gpt3-175b-selene", false, true);
}
void BM_Llama3_405B_16384xH100_Symmetric(benchmark::State& state) {
  simulate(state, "llama3-405b-16k-h100", true, false);
}
void BM_Llama3_405B_16384xH100_Full(benchmark::State& state) { simulate(state, "llama3-405b-16k-h100", false, false); }
const std::vector<std::string> kDeepseek2048 = {"parallelism.gpus=2048", "parallelism.dp=128",
                                                "parallelism.moe_a2a_overlap=true"};
void BM_DeepseekV3_2048xH100_Symmetric(benchmark::State& state) {
  simulate(state, "deepseek-v3-h100", true, false, kDeepseek2048);
}
void BM_DeepseekV3_2048xH100_Full(benchmark::State& state) {
  simulate(state, "deepseek-v3-h100", false, false, kDeepseek2048);
}
void BM_DeepseekV3_2048xH100_FullOneThread(benchmark::State& state) {
  simulate(state, "deepseek-v3-h100", false, false, kDeepseek2048, 1);
}

BENCHMARK(BM_Gpt3_175B_1024xA100_Symmetric)->Unit(benchmark::kSecond)->Iterations(1)->UseRealTime();
BENCHMARK(BM_Gpt3_175B_1024xA100_Full)->Unit(benchmark::kSecond)->Iterations(1)->UseRealTime();
BENCHMARK(BM_Llama3_405B_16384xH100_Symmetric)->Unit(benchmark::kSecond)->Iterations(1)->UseRealTime();
BENCHMARK(BM_Gpt3_175B_1024xA100_FullEveryMicrobatch)->Unit(benchmark::kSecond)->Iterations(1)->UseRealTime();
BENCHMARK(BM_Llama3_405B_16384xH100_Full)->Unit(benchmark::kSecond)->Iterations(1)->UseRealTime();
BENCHMARK(BM_DeepseekV3_2048xH100_Symmetric)->Unit(benchmark::kSecond)->Iterations(1)->UseRealTime();
BENCHMARK(BM_DeepseekV3_2048xH100_Full)->Unit(benchmark::kSecond)->Iterations(1)->UseRealTime();
BENCHMARK(BM_DeepseekV3_2048xH100_FullOneThread)->Unit(benchmark::kSecond)->Iterations(1)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
