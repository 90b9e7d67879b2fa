// Engine throughput: events per second with a steady population of pending events, and
// TaskExecutor throughput on compute-only task graphs.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "sim/engine.h"
#include "sim/flow_network.h"
#include "sim/task_executor.h"
#include "sim/task_graph.h"

namespace trainsim::sim {
namespace {

// Each event reschedules itself a pseudo-random delay later, so the queue holds a constant
// number of pending events (the benchmark argument).
struct Churn {
  Engine* engine = nullptr;
  HandlerId self = 0;
  void onEvent(uint64_t state) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;  // LCG step
    engine->scheduleAfter(static_cast<SimTime>((state >> 40) % 1'000'000), self, state);
  }
};

void BM_EngineEvents(benchmark::State& state) {
  const auto pending = static_cast<uint64_t>(state.range(0));
  Engine engine;
  Churn churn{&engine, 0};
  churn.self = engine.addHandler<&Churn::onEvent>(&churn);
  engine.reserveEvents(pending + 1);
  for (uint64_t i = 0; i < pending; ++i) engine.schedule(static_cast<SimTime>(i), churn.self, i * 7919 + 1);
  constexpr int kBatch = 1000;
  for (auto _ : state) {
    for (int i = 0; i < kBatch; ++i) engine.step();
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
  state.counters["events/s"] =
      benchmark::Counter(static_cast<double>(state.iterations() * kBatch), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_EngineEvents)->Arg(16)->Arg(1 << 10)->Arg(1 << 16)->Arg(1 << 20);

// The same with std::function callbacks (allocating), for comparison.
void BM_EngineCallbackEvents(benchmark::State& state) {
  const auto pending = static_cast<uint64_t>(state.range(0));
  Engine engine;
  uint64_t lcg = 1;
  std::function<void()> tick = [&] {
    lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
    engine.after(static_cast<SimTime>((lcg >> 40) % 1'000'000), tick);
  };
  for (uint64_t i = 0; i < pending; ++i) engine.at(static_cast<SimTime>(i), tick);
  constexpr int kBatch = 1000;
  for (auto _ : state) {
    for (int i = 0; i < kBatch; ++i) engine.step();
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
  state.counters["events/s"] =
      benchmark::Counter(static_cast<double>(state.iterations() * kBatch), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_EngineCallbackEvents)->Arg(1 << 10)->Arg(1 << 16);

// Building and executing a graph of compute tasks: `streams` streams of 1F1B-like chains
// with a cross-stream dependency every few tasks.
void BM_TaskExecutorCompute(benchmark::State& state) {
  const auto tasks = static_cast<uint32_t>(state.range(0));
  const uint32_t streams = 64;
  for (auto _ : state) {
    Engine engine;
    FlowNetwork network(engine, {1e9});
    TaskGraph graph;
    graph.reserve(tasks, tasks * 2);
    std::vector<StreamId> stream_ids;
    for (uint32_t s = 0; s < streams; ++s) stream_ids.push_back(graph.addStream(static_cast<int32_t>(s), "compute"));
    for (uint32_t t = 0; t < tasks; ++t) {
      const uint32_t s = t % streams;
      if (t >= streams && t % 4 == 0) {
        const TaskId other = s == 0 ? t - streams + 1 : t - streams - 1;  // the previous round, next stream
        graph.addCompute(1000 + t % 97, {other}, {.stream = stream_ids[s]});
      } else {
        graph.addCompute(1000 + t % 97, {}, {.stream = stream_ids[s]});
      }
    }
    TaskExecutor executor(engine, network, graph);
    benchmark::DoNotOptimize(executor.run());
  }
  state.SetItemsProcessed(state.iterations() * tasks);
  state.counters["tasks/s"] =
      benchmark::Counter(static_cast<double>(state.iterations() * tasks), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_TaskExecutorCompute)->Arg(1 << 16)->Arg(1 << 20)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace trainsim::sim

BENCHMARK_MAIN();
