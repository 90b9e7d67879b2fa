// Collective scale: wall time, work and memory of simulating NCCL-like collectives.
// Goals (issue "Collectives"):
//  1. one 1 GiB all_reduce over all 16,384 GPUs of h100-superpod-16k (2,048 DGX H100 nodes,
//     rail-optimized) in < 10 s, with the tuner's choice and with ring and tree forced;
//  2. 2,048 concurrent 8-GPU tensor-parallel all_reduces (64 MiB, one per node), all in one
//     TaskGraph and one engine run, in < 5 s;
//  3. contention: 8 data-parallel all_reduces (group g = GPU g of each of 16 DGX H100
//     nodes) that leave every node through its 8 NICs at the same time.
// Plus a stress case: 1 GiB all_reduce over up to 24,576 GPUs of the oversubscribed RoCE
// fat tree of meta-h100-roce-24k, where ECMP collisions give the flows many different
// rates (it took 499 s before the flow solver re-rated only the flows a finish can speed up).
//
// Each iteration does everything a caller pays for: a fresh Router (no warm route cache),
// the graph built with CollectiveBuilder, the FlowNetwork and the engine run. Counters:
//  wall_s / build_s / run_s  wall time of the whole case / of building the graph / of the run
//  sim_ms                    simulated makespan
//  tasks, flows, routes      graph size; flows = flows started in the FlowNetwork
//  events                    engine events fired
//  rate_updates, flows_rerated  the flow solver's batched updates and the flows they visited
//  peak_rss_MB               peak resident memory of the process during this case (reset
//                            before each case through /proc/self/clear_refs), loaded clusters included
//  case_MB                   peak_rss_MB less the resident memory when the case started
#include <benchmark/benchmark.h>
#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "perf/collective.h"
#include "perf/collective_builder.h"
#include "perf/collective_simulation.h"
#include "perf/communication_parameters.h"
#include "sim/engine.h"
#include "sim/flow_network.h"
#include "sim/task_executor.h"
#include "sim/task_graph.h"
#include "tests/shipped_defaults.h"
#include "topology/cluster.h"
#include "topology/cluster_loader.h"
#include "topology/router.h"

namespace {

using namespace trainsim;
using namespace trainsim::sim;
using namespace trainsim::perf;
using Clock = std::chrono::steady_clock;

double peakResidentMegabytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

double residentMegabytes() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0;
  long resident = 0;
  statm >> pages >> resident;
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

// Gives freed heap back to the system and resets the process's peak RSS to its current RSS
// (Linux >= 4.0), so that each case reports its own peak rather than the largest of the
// cases run before it. Returns the RSS the case starts from (clusters already loaded).
double resetPeakResident() {
  malloc_trim(0);
  std::ofstream clear_refs("/proc/self/clear_refs");
  if (clear_refs) clear_refs << "5";
  return residentMegabytes();
}

double secondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Clusters are built once per preset and kept for the process (building is not what is measured).
const topology::Cluster& cluster(const std::string& preset, int64_t nodes = 0) {
  static std::map<std::pair<std::string, int64_t>, topology::Cluster> clusters;
  auto found = clusters.find({preset, nodes});
  if (found != clusters.end()) return found->second;
  const ConfigPaths paths{TRAINSIM_CONFIG_DIR_FOR_TESTS};
  std::vector<Override> overrides;
  if (nodes > 0) overrides.push_back(parseOverride("nodes=" + std::to_string(nodes)));
  auto spec = topology::loadClusterFile(preset, paths, overrides);
  if (!spec.ok()) throw std::runtime_error(spec.error().toString());
  auto built = topology::Cluster::build(spec.value());
  if (!built.ok()) throw std::runtime_error(built.error().toString());
  return clusters.emplace(std::make_pair(preset, nodes), std::move(built).value()).first->second;
}

struct RunStats {
  double wall_s = 0.0;
  double build_s = 0.0;
  double run_s = 0.0;
  SimTime makespan = 0;
  std::size_t tasks = 0;
  std::size_t routes = 0;
  uint64_t events = 0;
  FlowNetwork::Counters network;
  std::vector<CollectiveChoice> choices;
};

// Simulates `requests` as concurrent collectives in one TaskGraph and one engine run, as a
// training step would issue them.
RunStats simulateTogether(const topology::Cluster& cluster, const std::vector<CollectiveRequest>& requests) {
  RunStats stats;
  const Clock::time_point start = Clock::now();
  const CommunicationParameters parameters = shippedCommunication();
  topology::Router router(cluster);
  TaskGraph graph;
  CollectiveBuilder builder(cluster, router, graph, parameters);
  for (const CollectiveRequest& request : requests) {
    Expected<CollectiveChoice> choice = builder.choose(request);
    if (!choice.ok()) throw std::runtime_error(choice.error().toString());
    builder.add(request, choice.value());
    stats.choices.push_back(choice.value());
  }
  stats.build_s = secondsSince(start);

  const Clock::time_point run_start = Clock::now();
  Engine engine;
  FlowNetwork network(engine, CollectiveBuilder::effectiveCapacities(cluster, parameters));
  TaskExecutor executor(engine, network, graph);
  stats.makespan = executor.run();
  if (!executor.allFinished()) throw std::runtime_error("collective graph did not finish");
  stats.run_s = secondsSince(run_start);
  stats.wall_s = secondsSince(start);
  stats.tasks = graph.taskCount();
  stats.routes = graph.routeCount();
  stats.events = engine.eventsProcessed();
  stats.network = network.counters();
  return stats;
}

void report(benchmark::State& state, const RunStats& stats, double start_rss_MB) {
  state.counters["wall_s"] = stats.wall_s;
  state.counters["build_s"] = stats.build_s;
  state.counters["run_s"] = stats.run_s;
  state.counters["sim_ms"] = simTimeToSeconds(stats.makespan) * 1e3;
  state.counters["tasks"] = static_cast<double>(stats.tasks);
  state.counters["flows"] = static_cast<double>(stats.network.flows_started);
  state.counters["routes"] = static_cast<double>(stats.routes);
  state.counters["events"] = static_cast<double>(stats.events);
  state.counters["rate_updates"] = static_cast<double>(stats.network.rate_updates);
  state.counters["flows_rerated"] = static_cast<double>(stats.network.flows_rerated);
  state.counters["peak_rss_MB"] = peakResidentMegabytes();
  state.counters["case_MB"] = peakResidentMegabytes() - start_rss_MB;
}

std::string choiceLabel(const CollectiveChoice& choice) {
  return std::string(algorithmName(choice.algorithm)) + "/" + std::string(protocolName(choice.protocol)) + " x" +
         std::to_string(choice.channels) + "ch";
}

std::vector<int64_t> allRanks(const topology::Cluster& cluster) {
  std::vector<int64_t> ranks(static_cast<std::size_t>(cluster.acceleratorCount()));
  for (std::size_t r = 0; r < ranks.size(); ++r) ranks[r] = static_cast<int64_t>(r);
  return ranks;
}

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kMiB = 1024.0 * 1024.0;

// Argument: 0 = the tuner's choice, 1 = ring forced, 2 = tree forced.
std::optional<CollectiveAlgorithm> forcedAlgorithm(int64_t arg) {
  if (arg == 1) return CollectiveAlgorithm::kRing;
  if (arg == 2) return CollectiveAlgorithm::kTree;
  return std::nullopt;
}

// 1. One 1 GiB all_reduce over 16,384 H100 GPUs (goal < 10 s).
void BM_AllReduce16kGpus(benchmark::State& state) {
  const topology::Cluster& superpod = cluster("h100-superpod-16k");
  const CollectiveRequest request{CollectiveOp::kAllReduce, allRanks(superpod), kGiB, forcedAlgorithm(state.range(0)),
                                  std::nullopt};
  const double start_rss = resetPeakResident();
  RunStats stats;
  for (auto _ : state) stats = simulateTogether(superpod, {request});
  report(state, stats, start_rss);
  state.counters["busbw_GBps"] = request.bytes * busBandwidthFactor(request.op, superpod.acceleratorCount()) /
                                 simTimeToSeconds(stats.makespan) / 1e9;
  state.SetLabel(choiceLabel(stats.choices.front()));
}
BENCHMARK(BM_AllReduce16kGpus)
    ->ArgName("algo(0=tuner,1=ring,2=tree)")
    ->Arg(0)
    ->Arg(1)
    ->Arg(2)
    ->Iterations(1)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// The same through CollectiveSimulator::simulate, the path `trainsim collective` takes.
void BM_AllReduce16kGpusSimulator(benchmark::State& state) {
  const topology::Cluster& superpod = cluster("h100-superpod-16k");
  const CollectiveRequest request{CollectiveOp::kAllReduce, allRanks(superpod), kGiB, std::nullopt, std::nullopt};
  const double start_rss = resetPeakResident();
  CollectiveResult result;
  for (auto _ : state) {
    CollectiveSimulator simulator(superpod, shippedCommunication());
    auto simulated = simulator.simulate(request);
    if (!simulated.ok()) throw std::runtime_error(simulated.error().toString());
    result = simulated.value();
  }
  state.counters["sim_ms"] = result.time_s * 1e3;
  state.counters["flows"] = static_cast<double>(result.flows);
  state.counters["peak_rss_MB"] = peakResidentMegabytes();
  state.counters["case_MB"] = peakResidentMegabytes() - start_rss;
  state.SetLabel(choiceLabel(result.choice));
}
BENCHMARK(BM_AllReduce16kGpusSimulator)->Iterations(1)->UseRealTime()->Unit(benchmark::kMillisecond);

// Stress: 1 GiB all_reduce over every GPU of meta-h100-roce-24k (fat tree, 1:7 oversubscribed
// aggregation tier) cut to `nodes` nodes: ECMP collisions give flows many different rates,
// so they finish at many different instants, each re-rating the flows still running.
void BM_AllReduceOversubscribedRoce(benchmark::State& state) {
  const topology::Cluster& roce = cluster("meta-h100-roce-24k", state.range(0));
  const CollectiveRequest request{CollectiveOp::kAllReduce, allRanks(roce), kGiB, forcedAlgorithm(state.range(1)),
                                  std::nullopt};
  const double start_rss = resetPeakResident();
  RunStats stats;
  for (auto _ : state) stats = simulateTogether(roce, {request});
  report(state, stats, start_rss);
  state.counters["gpus"] = static_cast<double>(roce.acceleratorCount());
  state.SetLabel(choiceLabel(stats.choices.front()));
}
BENCHMARK(BM_AllReduceOversubscribedRoce)
    ->ArgNames({"nodes", "algo(0=tuner,1=ring,2=tree)"})
    ->Args({384, 2})
    ->Args({768, 2})
    ->Args({1536, 2})
    ->Args({3072, 0})
    ->Args({3072, 1})
    ->Args({3072, 2})
    ->Iterations(1)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// 2. 2,048 concurrent 8-GPU tensor-parallel all_reduces of 64 MiB, one per node, in one
// graph and one run (goal < 5 s). Argument as above (tree does not exist inside a node).
void BM_TensorParallelAllReduces(benchmark::State& state) {
  const topology::Cluster& superpod = cluster("h100-superpod-16k");
  const int64_t per_node = superpod.spec().gpus_per_node;
  std::vector<CollectiveRequest> requests;
  for (int64_t node = 0; node < superpod.spec().nodes; ++node) {
    std::vector<int64_t> ranks;
    for (int64_t local = 0; local < per_node; ++local) ranks.push_back(node * per_node + local);
    requests.push_back(
        CollectiveRequest{CollectiveOp::kAllReduce, ranks, 64 * kMiB, forcedAlgorithm(state.range(0)), std::nullopt});
  }
  const double start_rss = resetPeakResident();
  RunStats stats;
  for (auto _ : state) stats = simulateTogether(superpod, requests);
  report(state, stats, start_rss);
  state.counters["collectives"] = static_cast<double>(requests.size());
  state.SetLabel(choiceLabel(stats.choices.front()));
}
BENCHMARK(BM_TensorParallelAllReduces)
    ->ArgName("algo(0=tuner,1=ring)")
    ->Arg(0)
    ->Arg(1)
    ->Iterations(1)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// 3. Contention: 8 data-parallel all_reduces of 1 GiB over 16 nodes, group g = GPU g of
// every node, all at once, so that every node's NICs carry 8 collectives at the same time.
// First argument: 0 = dgx-h100 (rail-optimized, one 400 Gb/s NIC per GPU: each group has
// its own NIC and rail), 1 = gcp-a3 (4 NICs of 200 Gb/s per 8 H100s: two groups share each
// NIC). Second: algorithm as above. Counters also give the time of group 0 alone and the
// slowdown of running all 8 together.
void BM_DataParallelAllReducesContention(benchmark::State& state) {
  const topology::Cluster& nodes16 = cluster(state.range(0) == 0 ? "dgx-h100" : "gcp-a3");
  const int64_t per_node = nodes16.spec().gpus_per_node;
  constexpr int64_t kNodes = 16;
  std::vector<CollectiveRequest> requests;
  for (int64_t g = 0; g < per_node; ++g) {
    std::vector<int64_t> ranks;
    for (int64_t node = 0; node < kNodes; ++node) ranks.push_back(node * per_node + g);
    requests.push_back(
        CollectiveRequest{CollectiveOp::kAllReduce, ranks, kGiB, forcedAlgorithm(state.range(1)), std::nullopt});
  }
  const RunStats alone = simulateTogether(nodes16, {requests.front()});
  const double start_rss = resetPeakResident();
  RunStats stats;
  for (auto _ : state) stats = simulateTogether(nodes16, requests);
  report(state, stats, start_rss);
  state.counters["alone_sim_ms"] = simTimeToSeconds(alone.makespan) * 1e3;
  state.counters["slowdown"] = static_cast<double>(stats.makespan) / static_cast<double>(alone.makespan);
  state.SetLabel(std::string(state.range(0) == 0 ? "dgx-h100 " : "gcp-a3 ") + choiceLabel(stats.choices.front()));
}
BENCHMARK(BM_DataParallelAllReducesContention)
    ->ArgNames({"cluster(0=dgx-h100,1=gcp-a3)", "algo(0=tuner,1=ring,2=tree)"})
    ->ArgsProduct({{0, 1}, {0, 1, 2}})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
