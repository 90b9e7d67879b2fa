// Topology scale: load + build time and peak memory of large clusters, route query rate.
// Goal (issue "Foundation"): a 16,384-GPU H100 rail-optimized cluster loads in < 5 s and < 2 GB.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <random>

#include "topology/cluster.h"
#include "topology/cluster_loader.h"
#include "topology/cluster_metrics.h"
#include "topology/router.h"

namespace {

using namespace trainsim;
using namespace trainsim::topology;

double peakResidentMegabytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

Cluster buildSuperpod(int nodes) {
  const ConfigPaths paths{TRAINSIM_CONFIG_DIR_FOR_TESTS};
  auto spec = loadClusterFile("h100-superpod-16k", paths, {parseOverride("nodes=" + std::to_string(nodes))});
  if (!spec.ok()) throw std::runtime_error(spec.error().toString());
  auto cluster = Cluster::build(spec.value());
  if (!cluster.ok()) throw std::runtime_error(cluster.error().toString());
  return std::move(cluster).value();
}

// Load the YAML preset and expand it into the device graph.
void BM_LoadAndBuildRailOptimizedH100(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  int64_t devices = 0;
  for (auto _ : state) {
    Cluster cluster = buildSuperpod(nodes);
    devices = static_cast<int64_t>(cluster.devices().size());
    benchmark::DoNotOptimize(cluster);
  }
  state.counters["gpus"] = nodes * 8.0;
  state.counters["devices"] = static_cast<double>(devices);
  state.counters["peak_rss_MB"] = peakResidentMegabytes();
}
BENCHMARK(BM_LoadAndBuildRailOptimizedH100)->Arg(256)->Arg(2048)->Arg(12500)->Unit(benchmark::kMillisecond);

// Uncached GPU-to-GPU route computations between random GPUs (a fresh Router each batch).
void BM_RouteRandomPairs(benchmark::State& state) {
  const Cluster cluster = buildSuperpod(static_cast<int>(state.range(0)));
  std::mt19937_64 random(42);
  std::uniform_int_distribution<int64_t> rank(0, cluster.acceleratorCount() - 1);
  int64_t routes = 0;
  for (auto _ : state) {
    Router router(cluster);
    for (int i = 0; i < 1000; ++i) {
      benchmark::DoNotOptimize(router.route(cluster.accelerator(rank(random)), cluster.accelerator(rank(random))));
    }
    routes += 1000;
  }
  state.counters["routes_per_s"] = benchmark::Counter(static_cast<double>(routes), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_RouteRandomPairs)->Arg(2048)->Arg(12500)->Unit(benchmark::kMillisecond);

void BM_BisectionMaxFlow(benchmark::State& state) {
  const Cluster cluster = buildSuperpod(static_cast<int>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(bisectionBandwidth(cluster));
  state.counters["peak_rss_MB"] = peakResidentMegabytes();
}
BENCHMARK(BM_BisectionMaxFlow)->Arg(2048)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
