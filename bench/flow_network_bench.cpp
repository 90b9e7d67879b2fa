// FlowNetwork update throughput: a steady population of N concurrent flows on a synthetic
// two-tier leaf/spine fabric; every delivered flow is replaced by a new one, so each
// benchmark item is one flow finish + one flow start (two batched rate updates).
//
// Patterns:
//  - local:     both ends under the same leaf (host uplink -> host downlink, 2 links);
//               components are one rack, so the cost per update must not grow with N.
//  - fabric:    random pairs across leaves through a random spine (4 links); the flows
//               couple into one large component, the worst case for incremental solving.
//  - incast:    every flow goes to one of 4 hot hosts (2 links); N/4 flows share each
//               bottleneck downlink and every update re-rates all of them.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "sim/engine.h"
#include "sim/flow_network.h"

namespace trainsim::sim {
namespace {

enum class Pattern : int { kLocal, kFabric, kIncast };

constexpr uint32_t kHostsPerLeaf = 16;
constexpr uint32_t kSpines = 16;

struct LeafSpine {
  uint32_t hosts;
  uint32_t leaves;
  // Link ids: host up [0, H), host down [H, 2H), leaf->spine [2H, 2H + L*S), spine->leaf after.
  [[nodiscard]] LinkId hostUp(uint32_t h) const { return h; }
  [[nodiscard]] LinkId hostDown(uint32_t h) const { return hosts + h; }
  [[nodiscard]] LinkId leafUp(uint32_t leaf, uint32_t spine) const { return 2 * hosts + leaf * kSpines + spine; }
  [[nodiscard]] LinkId spineDown(uint32_t spine, uint32_t leaf) const {
    return 2 * hosts + leaves * kSpines + leaf * kSpines + spine;
  }
  [[nodiscard]] std::vector<double> capacities() const {
    std::vector<double> c(2 * hosts, 50e9);             // 400 Gb/s host links
    c.resize(2 * hosts + 2 * leaves * kSpines, 100e9);  // 800 Gb/s fabric links
    return c;
  }
};

class Workload {
 public:
  Workload(Pattern pattern, uint32_t flows, uint32_t hosts)
      : pattern_(pattern), topo_{hosts, hosts / kHostsPerLeaf}, network_(engine_, topo_.capacities()), rng_(12345) {
    deliver_ = engine_.addHandler<&Workload::onDelivered>(this);
    for (uint32_t i = 0; i < flows; ++i) startOne();
    engine_.runUntil(0);  // the first rate update, for all flows at once
  }

  // Runs until one more flow has been delivered (and replaced).
  void cycle() {
    const uint64_t target = delivered_ + 1;
    while (delivered_ < target) engine_.step();
  }

  [[nodiscard]] const FlowNetwork& network() const { return network_; }
  [[nodiscard]] uint64_t delivered() const { return delivered_; }

 private:
  void onDelivered(uint64_t /*tag*/) {
    ++delivered_;
    startOne();
  }

  void startOne() {
    std::uniform_int_distribution<uint32_t> host(0, topo_.hosts - 1);
    uint32_t src = host(rng_);
    uint32_t dst = 0;
    route_.clear();
    switch (pattern_) {
      case Pattern::kLocal: {
        const uint32_t leaf = src / kHostsPerLeaf;
        do dst = leaf * kHostsPerLeaf + rng_() % kHostsPerLeaf;
        while (dst == src);
        route_ = {topo_.hostUp(src), topo_.hostDown(dst)};
        break;
      }
      case Pattern::kFabric: {
        do dst = host(rng_);
        while (dst / kHostsPerLeaf == src / kHostsPerLeaf);
        const uint32_t spine = rng_() % kSpines;
        route_ = {topo_.hostUp(src), topo_.leafUp(src / kHostsPerLeaf, spine),
                  topo_.spineDown(spine, dst / kHostsPerLeaf), topo_.hostDown(dst)};
        break;
      }
      case Pattern::kIncast: {
        dst = static_cast<uint32_t>(rng_() % 4) * (topo_.hosts / 4);
        if (src == dst) src = (src + 1) % topo_.hosts;
        route_ = {topo_.hostUp(src), topo_.hostDown(dst)};
        break;
      }
    }
    // 64 KiB .. 64 MiB, log-uniform.
    const double bytes = 65536.0 * std::pow(2.0, std::uniform_real_distribution<double>(0.0, 10.0)(rng_));
    network_.startFlow(route_, bytes, kMicrosecond, EventTarget{deliver_, 0});
  }

  Pattern pattern_;
  LeafSpine topo_;
  Engine engine_;
  FlowNetwork network_;
  std::mt19937_64 rng_;
  HandlerId deliver_ = 0;
  uint64_t delivered_ = 0;
  std::vector<LinkId> route_;
};

// Hosts: the local pattern keeps ~64 flows per rack whatever N is; the others use a
// 1024-host fabric (64 leaves).
uint32_t hostsFor(Pattern pattern, uint32_t flows) {
  if (pattern != Pattern::kLocal) return 1024;
  const uint32_t racks = std::max<uint32_t>(4, flows / 64);
  return racks * kHostsPerLeaf;
}

void BM_FlowNetworkUpdates(benchmark::State& state) {
  const auto pattern = static_cast<Pattern>(state.range(0));
  const auto flows = static_cast<uint32_t>(state.range(1));
  Workload workload(pattern, flows, hostsFor(pattern, flows));
  const FlowNetwork::Counters before = workload.network().counters();
  for (auto _ : state) workload.cycle();
  const FlowNetwork::Counters& after = workload.network().counters();
  state.SetItemsProcessed(state.iterations());
  state.counters["start+finish/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  const auto updates = static_cast<double>(after.rate_updates - before.rate_updates);
  state.counters["flows_solved/update"] =
      updates > 0 ? static_cast<double>(after.flows_rerated - before.flows_rerated) / updates : 0.0;
  state.counters["active"] = static_cast<double>(workload.network().activeFlowCount());
}

void flowArgs(benchmark::internal::Benchmark* b) {
  b->ArgNames({"pattern(0=local,1=fabric,2=incast)", "flows"});
  for (const int pattern : {0, 1, 2}) {
    for (const int flows : {1000, 100000}) b->Args({pattern, flows});
  }
}
BENCHMARK(BM_FlowNetworkUpdates)->Apply(flowArgs);

}  // namespace
}  // namespace trainsim::sim

BENCHMARK_MAIN();
