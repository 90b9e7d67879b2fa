#include "sim/flow_network.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <vector>

#include "sim/engine.h"

namespace trainsim::sim {
namespace {

constexpr double kGBps = 1e9;

// Collects delivery times by a caller-chosen key.
struct Deliveries {
  Engine* engine;
  std::map<uint64_t, SimTime> at;
  HandlerId handler = 0;
  explicit Deliveries(Engine& e) : engine(&e) { handler = e.addHandler<&Deliveries::onDelivered>(this); }
  void onDelivered(uint64_t key) {
    EXPECT_FALSE(at.contains(key)) << "delivered twice: " << key;
    at[key] = engine->now();
  }
  EventTarget target(uint64_t key) const { return EventTarget{handler, key}; }
};

TEST(FlowNetworkTest, OneFlowOnOneLinkTakesLatencyPlusBytesOverBandwidth) {
  Engine engine;
  FlowNetwork network(engine, {1.0 * kGBps});
  Deliveries done(engine);
  const std::vector<LinkId> route{0};
  network.startFlow(route, 1e6, 1500, done.target(1));
  engine.run();
  EXPECT_EQ(done.at.at(1), 1500 + kMillisecond);

  // A quotient that is not a whole picosecond is rounded up: 1000 B at 3 GB/s.
  FlowNetwork network3(engine, {3.0 * kGBps});
  const SimTime start = engine.now();
  network3.startFlow(route, 1000.0, 7, done.target(2));
  engine.run();
  EXPECT_EQ(done.at.at(2), start + 7 + 333'334);
}

TEST(FlowNetworkTest, MultiHopFlowRunsAtTheSlowestLink) {
  Engine engine;
  FlowNetwork network(engine, {4.0 * kGBps, 1.0 * kGBps, 2.0 * kGBps});
  Deliveries done(engine);
  const std::vector<LinkId> route{0, 1, 2};
  const FlowId flow = network.startFlow(route, 2e6, 3000, done.target(1));
  network.updateRates();
  EXPECT_DOUBLE_EQ(network.rate(flow), 1.0 * kGBps);
  engine.run();
  EXPECT_EQ(done.at.at(1), 3000 + 2 * kMillisecond);

  // The same through a topology::Route.
  const topology::Route topo_route{{0, 1, 2}, 3000, 1.0 * kGBps};
  const SimTime start = engine.now();
  network.startFlow(topo_route, 2e6, done.target(2));
  engine.run();
  EXPECT_EQ(done.at.at(2), start + 3000 + 2 * kMillisecond);
}

TEST(FlowNetworkTest, TwoEqualFlowsShareALinkEqually) {
  Engine engine;
  FlowNetwork network(engine, {1.0 * kGBps});
  Deliveries done(engine);
  const std::vector<LinkId> route{0};
  const FlowId a = network.startFlow(route, 1e6, 100, done.target(1));
  const FlowId b = network.startFlow(route, 1e6, 100, done.target(2));
  network.updateRates();
  EXPECT_DOUBLE_EQ(network.rate(a), 0.5 * kGBps);
  EXPECT_DOUBLE_EQ(network.rate(b), 0.5 * kGBps);
  engine.run();
  EXPECT_EQ(done.at.at(1), 100 + 2 * kMillisecond);
  EXPECT_EQ(done.at.at(2), 100 + 2 * kMillisecond);
}

TEST(FlowNetworkTest, AFlowFinishingEarlyFreesBandwidthForTheOther) {
  Engine engine;
  FlowNetwork network(engine, {1.0 * kGBps});
  Deliveries done(engine);
  const std::vector<LinkId> route{0};
  network.startFlow(route, 1e6, 100, done.target(1));
  network.startFlow(route, 2e6, 100, done.target(2));
  engine.run();
  // Both at 0.5 GB/s until 2 ms; then the second has 1 MB left at 1 GB/s: 3 ms.
  EXPECT_EQ(done.at.at(1), 100 + 2 * kMillisecond);
  EXPECT_EQ(done.at.at(2), 100 + 3 * kMillisecond);
}

TEST(FlowNetworkTest, ALateFlowSlowsDownTheFirst) {
  Engine engine;
  FlowNetwork network(engine, {1.0 * kGBps});
  Deliveries done(engine);
  const std::vector<LinkId> route{0};
  network.startFlow(route, 2e6, 0, done.target(1));
  engine.at(kMillisecond, [&] { network.startFlow(route, 0.5e6, 0, done.target(2)); });
  engine.run();
  // A alone for 1 ms (1 MB), then both at 0.5 GB/s: B needs 1 ms (done at 2 ms), A has sent
  // 0.5 MB more; its last 0.5 MB at 1 GB/s takes 0.5 ms.
  EXPECT_EQ(done.at.at(2), 2 * kMillisecond);
  EXPECT_EQ(done.at.at(1), 2 * kMillisecond + 500 * kMicrosecond);
}

TEST(FlowNetworkTest, MaxMinWithABottleneckElsewhere) {
  // Link 1 (4 GB/s) is shared by f0 and f1 -> 2 GB/s each. f0 also crosses link 0
  // (10 GB/s), where it leaves 8 GB/s to f2; but f2 shares link 2 (10 GB/s) with f3, so
  // f2 = f3 = 5 GB/s, and 3 GB/s of link 0 stay unused.
  Engine engine;
  FlowNetwork network(engine, {10.0 * kGBps, 4.0 * kGBps, 10.0 * kGBps});
  Deliveries done(engine);
  const std::vector<LinkId> r0{0, 1};
  const std::vector<LinkId> r1{1};
  const std::vector<LinkId> r2{0, 2};
  const std::vector<LinkId> r3{2};
  const FlowId f0 = network.startFlow(r0, 2e6, 0, done.target(0));
  const FlowId f1 = network.startFlow(r1, 4e6, 0, done.target(1));
  const FlowId f2 = network.startFlow(r2, 5e6, 0, done.target(2));
  const FlowId f3 = network.startFlow(r3, 10e6, 0, done.target(3));
  network.updateRates();
  EXPECT_DOUBLE_EQ(network.rate(f0), 2.0 * kGBps);
  EXPECT_DOUBLE_EQ(network.rate(f1), 2.0 * kGBps);
  EXPECT_DOUBLE_EQ(network.rate(f2), 5.0 * kGBps);
  EXPECT_DOUBLE_EQ(network.rate(f3), 5.0 * kGBps);
  engine.run();
  // f0 and f2 finish at 1 ms; then f1 gets link 1 alone (4 GB/s, 2 MB left: 0.5 ms)
  // and f3 gets link 2 alone (10 GB/s, 5 MB left: 0.5 ms).
  EXPECT_EQ(done.at.at(0), kMillisecond);
  EXPECT_EQ(done.at.at(2), kMillisecond);
  EXPECT_EQ(done.at.at(1), 1500 * kMicrosecond);
  EXPECT_EQ(done.at.at(3), 1500 * kMicrosecond);
}

TEST(FlowNetworkTest, RateCapActsAsAPrivateBottleneck) {
  Engine engine;
  FlowNetwork network(engine, {1.0 * kGBps});
  Deliveries done(engine);
  const std::vector<LinkId> route{0};
  const FlowId capped = network.startFlow(route, 2e5, 0, done.target(1), 0.2 * kGBps);
  const FlowId free = network.startFlow(route, 8e5, 0, done.target(2));
  network.updateRates();
  EXPECT_DOUBLE_EQ(network.rate(capped), 0.2 * kGBps);
  EXPECT_DOUBLE_EQ(network.rate(free), 0.8 * kGBps);
  engine.run();
  EXPECT_EQ(done.at.at(1), kMillisecond);
  EXPECT_EQ(done.at.at(2), kMillisecond);

  // A cap above the fair share changes nothing.
  const FlowId a = network.startFlow(route, 1e6, 0, done.target(3), 0.9 * kGBps);
  const FlowId b = network.startFlow(route, 1e6, 0, done.target(4));
  network.updateRates();
  EXPECT_DOUBLE_EQ(network.rate(a), 0.5 * kGBps);
  EXPECT_DOUBLE_EQ(network.rate(b), 0.5 * kGBps);
  engine.run();
}

TEST(FlowNetworkTest, FlowsWithoutLinksOrBytesTakeTheirLatencyOnly) {
  Engine engine;
  FlowNetwork network(engine, {1.0 * kGBps});
  Deliveries done(engine);
  const std::vector<LinkId> none;
  const std::vector<LinkId> route{0};
  EXPECT_EQ(network.startFlow(none, 1e9, 250, done.target(1)), kNoFlow);
  EXPECT_EQ(network.startFlow(route, 0.0, 300, done.target(2)), kNoFlow);
  engine.run();
  EXPECT_EQ(done.at.at(1), 250);
  EXPECT_EQ(done.at.at(2), 300);
  EXPECT_EQ(network.linkStats(0).busy_time, 0);
}

TEST(FlowNetworkTest, LinkCapacityChangeAppliesFromNow) {
  Engine engine;
  FlowNetwork network(engine, {1.0 * kGBps});
  Deliveries done(engine);
  const std::vector<LinkId> route{0};
  network.startFlow(route, 1e6, 0, done.target(1));
  engine.at(500 * kMicrosecond, [&] { network.setLinkCapacity(0, 0.5 * kGBps); });
  engine.run();
  EXPECT_EQ(done.at.at(1), 1500 * kMicrosecond);
}

TEST(FlowNetworkTest, CompletionGranularityRoundsSendCompletionUp) {
  Engine engine;
  FlowNetwork network(engine, {3.0 * kGBps}, FlowNetworkOptions{.completion_granularity = kNanosecond});
  Deliveries done(engine);
  const std::vector<LinkId> route{0};
  network.startFlow(route, 1000.0, 7, done.target(1));  // 333334 ps -> 334 ns
  engine.run();
  EXPECT_EQ(done.at.at(1), 334 * kNanosecond + 7);
}

TEST(FlowNetworkTest, RecordsBytesAndBusyTimePerLink) {
  Engine engine;
  FlowNetwork network(engine, {1.0 * kGBps, 2.0 * kGBps, 1.0 * kGBps});
  Deliveries done(engine);
  const std::vector<LinkId> r01{0, 1};
  const std::vector<LinkId> r1{1};
  network.startFlow(r01, 1e6, 50, done.target(1));
  engine.at(3 * kMillisecond, [&] { network.startFlow(r1, 2e6, 0, done.target(2)); });
  engine.run();
  EXPECT_DOUBLE_EQ(network.linkStats(0).bytes_carried, 1e6);
  EXPECT_DOUBLE_EQ(network.linkStats(1).bytes_carried, 3e6);
  EXPECT_DOUBLE_EQ(network.linkStats(2).bytes_carried, 0.0);
  EXPECT_EQ(network.linkStats(0).busy_time, kMillisecond);  // latency is not link time
  EXPECT_EQ(network.linkStats(1).busy_time, 2 * kMillisecond);
  EXPECT_EQ(network.linkStats(2).busy_time, 0);
  EXPECT_EQ(network.counters().flows_started, 2u);
  EXPECT_EQ(network.counters().flows_finished, 2u);
  EXPECT_EQ(network.activeFlowCount(), 0u);
}

// ---------------------------------------------------------------------------------------
// Random scenarios.

struct RandomFlow {
  std::vector<LinkId> links;
  double bytes;
  SimTime start;
  SimTime latency;
  double cap;
};

struct Scenario {
  std::vector<double> capacities;
  std::vector<RandomFlow> flows;
};

Scenario randomScenario(std::mt19937_64& rng, int max_links, int max_flows) {
  Scenario s;
  const int links = std::uniform_int_distribution<int>(1, max_links)(rng);
  const int flows = std::uniform_int_distribution<int>(1, max_flows)(rng);
  for (int l = 0; l < links; ++l) {
    // A few distinct capacity levels so that ties (equal shares) occur.
    s.capacities.push_back(std::uniform_int_distribution<int>(1, 8)(rng) * 12.5 * kGBps);
  }
  for (int f = 0; f < flows; ++f) {
    RandomFlow flow;
    const int hops = std::uniform_int_distribution<int>(1, std::min(4, links))(rng);
    while (static_cast<int>(flow.links.size()) < hops) {
      const auto l = static_cast<LinkId>(std::uniform_int_distribution<int>(0, links - 1)(rng));
      if (std::find(flow.links.begin(), flow.links.end(), l) == flow.links.end()) flow.links.push_back(l);
    }
    flow.bytes = std::uniform_int_distribution<int>(1, 1000)(rng) * 4096.0;
    flow.start = std::uniform_int_distribution<SimTime>(0, 200)(rng) * kMicrosecond;
    flow.latency = std::uniform_int_distribution<SimTime>(0, 5000)(rng) * kNanosecond / 1000;
    flow.cap = std::uniform_int_distribution<int>(0, 3)(rng) == 0
                   ? std::uniform_int_distribution<int>(1, 40)(rng) * 1.0 * kGBps
                   : kNoRateCap;
    s.flows.push_back(flow);
  }
  return s;
}

// Max-min fair rates by global progressive filling, written independently of FlowNetwork:
// repeatedly find the smallest fair share over all links (and caps) and freeze every
// flow limited by it.
std::vector<double> referenceMaxMin(const std::vector<double>& capacities,
                                    const std::vector<std::vector<LinkId>>& flow_links,
                                    const std::vector<double>& caps) {
  const std::size_t n = flow_links.size();
  std::vector<double> rate(n, -1.0);
  std::vector<double> residual = capacities;
  std::size_t frozen = 0;
  while (frozen < n) {
    std::vector<int> unfrozen(capacities.size(), 0);
    for (std::size_t f = 0; f < n; ++f) {
      if (rate[f] >= 0) continue;
      for (const LinkId l : flow_links[f]) ++unfrozen[l];
    }
    double level = std::numeric_limits<double>::infinity();
    for (std::size_t l = 0; l < capacities.size(); ++l) {
      if (unfrozen[l] > 0) level = std::min(level, residual[l] / unfrozen[l]);
    }
    for (std::size_t f = 0; f < n; ++f) {
      if (rate[f] < 0) level = std::min(level, caps[f]);
    }
    const double tolerance = level * 1e-12;
    std::vector<std::size_t> freeze;
    for (std::size_t f = 0; f < n; ++f) {
      if (rate[f] >= 0) continue;
      bool limited = caps[f] <= level + tolerance;
      for (const LinkId l : flow_links[f]) limited = limited || residual[l] / unfrozen[l] <= level + tolerance;
      if (limited) freeze.push_back(f);
    }
    EXPECT_FALSE(freeze.empty());
    for (const std::size_t f : freeze) {
      rate[f] = level;
      for (const LinkId l : flow_links[f]) residual[l] -= level;
      ++frozen;
    }
  }
  return rate;
}

// Checks the network's current rates against the reference on its active flows.
void expectRatesMatchReference(const FlowNetwork& network, const std::vector<double>& capacities) {
  const std::vector<FlowId> active = network.activeFlows();
  std::vector<std::vector<LinkId>> links;
  std::vector<double> caps;
  for (const FlowId f : active) {
    links.push_back(network.flowLinks(f));
    caps.push_back(network.rateCap(f));
  }
  const std::vector<double> expected = referenceMaxMin(capacities, links, caps);
  for (std::size_t i = 0; i < active.size(); ++i) {
    EXPECT_NEAR(network.rate(active[i]), expected[i], expected[i] * 1e-9) << "flow " << active[i];
  }
  // Feasibility: no link over capacity.
  std::vector<double> load(capacities.size(), 0.0);
  for (std::size_t i = 0; i < active.size(); ++i) {
    for (const LinkId l : links[i]) load[l] += network.rate(active[i]);
  }
  for (std::size_t l = 0; l < capacities.size(); ++l) EXPECT_LE(load[l], capacities[l] * (1 + 1e-9));
}

struct ScenarioRun {
  std::vector<SimTime> delivered;
  std::vector<double> link_bytes;
  std::vector<SimTime> link_busy;
};

ScenarioRun runScenario(const Scenario& s, bool check_rates) {
  Engine engine;
  FlowNetwork network(engine, s.capacities);
  Deliveries done(engine);
  for (std::size_t i = 0; i < s.flows.size(); ++i) {
    const RandomFlow& f = s.flows[i];
    engine.at(f.start,
              [&network, &done, &f, i] { network.startFlow(f.links, f.bytes, f.latency, done.target(i), f.cap); });
  }
  if (check_rates) {
    // Inspect the incrementally maintained rates at many instants against a global solve.
    for (SimTime t = 0; !engine.idle(); t += 7 * kMicrosecond) {
      engine.runUntil(t);
      network.updateRates();
      expectRatesMatchReference(network, s.capacities);
      if (::testing::Test::HasFailure()) break;
    }
  }
  engine.run();
  ScenarioRun run;
  for (std::size_t i = 0; i < s.flows.size(); ++i) {
    EXPECT_TRUE(done.at.contains(i));
    run.delivered.push_back(done.at.contains(i) ? done.at.at(i) : -1);
  }
  for (LinkId l = 0; l < s.capacities.size(); ++l) {
    run.link_bytes.push_back(network.linkStats(l).bytes_carried);
    run.link_busy.push_back(network.linkStats(l).busy_time);
  }
  EXPECT_EQ(network.activeFlowCount(), 0u);
  return run;
}

TEST(FlowNetworkPropertyTest, IncrementalRatesMatchAGlobalProgressiveFilling) {
  std::mt19937_64 rng(20240601);
  for (int scenario = 0; scenario < 200; ++scenario) {
    SCOPED_TRACE("scenario " + std::to_string(scenario));
    const Scenario s = randomScenario(rng, 24, 40);
    runScenario(s, /*check_rates=*/true);
    if (HasFailure()) break;
  }
}

// Components of hundreds of flows, where most links' shares go stale while a solve freezes
// flows elsewhere: the solver drops those heap entries in bulk (FlowNetwork::dropDeadShares),
// which must not change which link it freezes next.
TEST(FlowNetworkPropertyTest, LargeComponentsMatchAGlobalProgressiveFilling) {
  std::mt19937_64 rng(20261127);
  for (int scenario = 0; scenario < 12; ++scenario) {
    SCOPED_TRACE("scenario " + std::to_string(scenario));
    const Scenario s = randomScenario(rng, 96, 320);
    runScenario(s, /*check_rates=*/true);
    if (HasFailure()) break;
  }
}

TEST(FlowNetworkPropertyTest, BytesAreConservedAndTimesAreSane) {
  std::mt19937_64 rng(7);
  for (int scenario = 0; scenario < 100; ++scenario) {
    SCOPED_TRACE("scenario " + std::to_string(scenario));
    const Scenario s = randomScenario(rng, 16, 60);
    const ScenarioRun run = runScenario(s, /*check_rates=*/false);
    double expected_total = 0.0;
    for (const RandomFlow& f : s.flows) expected_total += f.bytes * static_cast<double>(f.links.size());
    double total = 0.0;
    for (const double b : run.link_bytes) total += b;
    EXPECT_DOUBLE_EQ(total, expected_total);
    for (std::size_t i = 0; i < s.flows.size(); ++i) {
      const RandomFlow& f = s.flows[i];
      double fastest = f.cap;
      for (const LinkId l : f.links) fastest = std::min(fastest, s.capacities[l]);
      // No flow beats its unloaded time.
      EXPECT_GE(run.delivered[i], f.start + f.latency + transferDuration(f.bytes, fastest));
    }
    // A link is busy at most for the span of the scenario.
    const SimTime end = *std::max_element(run.delivered.begin(), run.delivered.end());
    for (const SimTime busy : run.link_busy) EXPECT_LE(busy, end);
  }
}

TEST(FlowNetworkPropertyTest, IdenticalRunsGiveIdenticalResults) {
  std::mt19937_64 rng(99);
  for (int scenario = 0; scenario < 30; ++scenario) {
    const Scenario s = randomScenario(rng, 32, 200);
    const ScenarioRun a = runScenario(s, false);
    const ScenarioRun b = runScenario(s, false);
    EXPECT_EQ(a.delivered, b.delivered);
    EXPECT_EQ(a.link_bytes, b.link_bytes);
    EXPECT_EQ(a.link_busy, b.link_busy);
  }
}

TEST(FlowNetworkTest, OnlyTheTouchedComponentIsSolved) {
  // 100 disjoint links with one long flow each; a short flow on link 0 must not make the
  // solver revisit the other 99 flows.
  Engine engine;
  FlowNetwork network(engine, std::vector<double>(100, 1.0 * kGBps));
  Deliveries done(engine);
  for (LinkId l = 0; l < 100; ++l) {
    const std::vector<LinkId> route{l};
    network.startFlow(route, 1e9, 0, done.target(l));
  }
  network.updateRates();
  const uint64_t before = network.counters().flows_rerated;
  engine.at(kMillisecond, [&] {
    const std::vector<LinkId> route{0};
    network.startFlow(route, 1e3, 0, done.target(1000));
  });
  engine.runUntil(2 * kMillisecond);
  // Start of the short flow (2 flows solved) and its finish (1 flow solved).
  EXPECT_EQ(network.counters().flows_rerated - before, 3u);
}

// A bundle counts as its members on each link: 3 members and a plain flow on a 1 GB/s link
// get 0.25 GB/s each, as four plain flows would.
TEST(FlowNetworkTest, ABundleSharesALinkAsItsMembersWould) {
  Engine engine;
  FlowNetwork network(engine, {1.0 * kGBps});
  Deliveries done(engine);
  const std::vector<LinkId> route{0};
  const std::vector<uint32_t> three{3};
  const FlowId bundle = network.startFlow(route, three, 1e6, 0, done.target(1));
  const FlowId plain = network.startFlow(route, 1e6, 0, done.target(2));
  network.updateRates();
  EXPECT_DOUBLE_EQ(network.rate(bundle), 0.25 * kGBps);
  EXPECT_DOUBLE_EQ(network.rate(plain), 0.25 * kGBps);
  engine.run();
  EXPECT_EQ(done.at.at(1), 4 * kMillisecond);
  EXPECT_EQ(done.at.at(2), 4 * kMillisecond);
  // Each member's bytes crossed the link.
  EXPECT_DOUBLE_EQ(network.linkStats(0).bytes_carried, 4e6);
}

// The members run at one rate: the bundle's busiest link sets it, 0.9 GB/s over 3 members
// on link 1, though the 2 members on link 0 alone could run at 0.5 GB/s each.
TEST(FlowNetworkTest, ABundleRunsAtItsBusiestLinksShare) {
  Engine engine;
  FlowNetwork network(engine, {1.0 * kGBps, 0.9 * kGBps});
  Deliveries done(engine);
  const std::vector<LinkId> links{0, 1};
  const std::vector<uint32_t> members{2, 3};
  const FlowId bundle = network.startFlow(links, members, 3e5, 0, done.target(1));
  network.updateRates();
  EXPECT_DOUBLE_EQ(network.rate(bundle), 0.3 * kGBps);
  engine.run();
  EXPECT_EQ(done.at.at(1), kMillisecond);
  EXPECT_DOUBLE_EQ(network.linkStats(0).bytes_carried, 6e5);
  EXPECT_DOUBLE_EQ(network.linkStats(1).bytes_carried, 9e5);
}

// Where the members' fair shares differ, a bundle is an approximation: it holds every member
// to the slowest one's share. Member 1 shares link 0 with 3 flows (0.25 GB/s), member 2 shares
// link 1 with flow h: as plain flows member 2 and h would get 0.5 GB/s each; bundled, member
// 2 runs at 0.25 and h takes the rest.
TEST(FlowNetworkTest, ABundleHoldsItsMembersToTheSlowestShare) {
  Engine engine;
  FlowNetwork network(engine, {1.0 * kGBps, 1.0 * kGBps});
  Deliveries done(engine);
  const std::vector<LinkId> both{0, 1};
  const std::vector<uint32_t> one_each{1, 1};
  const FlowId bundle = network.startFlow(both, one_each, 1e6, 0, done.target(1));
  const std::vector<LinkId> first{0};
  for (uint64_t k = 0; k < 3; ++k) network.startFlow(first, 1e6, 0, done.target(10 + k));
  const std::vector<LinkId> second{1};
  const FlowId h = network.startFlow(second, 1e6, 0, done.target(2));
  network.updateRates();
  EXPECT_DOUBLE_EQ(network.rate(bundle), 0.25 * kGBps);
  EXPECT_DOUBLE_EQ(network.rate(h), 0.75 * kGBps);
}

// Where the members' own fair shares are equal, a bundle finishes exactly when its members
// would: an all-to-all among 3 senders and 3 receivers over a shared core link, as 9 plain
// flows and as 3 bundles (one per sender), beside a plain flow on the core.
TEST(FlowNetworkTest, BundlesOfEqualMembersFinishWhenTheirMembersWould) {
  // Links 0-2: sender uplinks (1 GB/s); 3: the core (2 GB/s); 4-6: receiver downlinks (1 GB/s).
  const std::vector<double> capacities{1.0 * kGBps, 1.0 * kGBps, 1.0 * kGBps, 2.0 * kGBps,
                                       1.0 * kGBps, 1.0 * kGBps, 1.0 * kGBps};
  auto run = [&](bool bundled) {
    Engine engine;
    FlowNetwork network(engine, capacities);
    Deliveries done(engine);
    for (LinkId from = 0; from < 3; ++from) {
      if (bundled) {
        const std::vector<LinkId> links{from, 3, 4, 5, 6};
        const std::vector<uint32_t> members{3, 3, 1, 1, 1};
        network.startFlow(links, members, 1e6, 10, done.target(from));
      } else {
        for (LinkId to = 4; to < 7; ++to) {
          const std::vector<LinkId> path{from, 3, to};
          network.startFlow(path, 1e6, 10, done.target(from * 10 + to));
        }
      }
    }
    const std::vector<LinkId> core{3};
    network.startFlow(core, 2e6, 10, done.target(99));
    engine.run();
    SimTime last = 0;
    for (const auto& [key, at] : done.at) {
      if (key != 99) last = std::max(last, at);
    }
    return std::make_pair(last, done.at.at(99));
  };
  const auto [bundled_last, bundled_core] = run(true);
  const auto [plain_last, plain_core] = run(false);
  EXPECT_EQ(bundled_last, plain_last);
  EXPECT_EQ(bundled_core, plain_core);
}

}  // namespace
}  // namespace trainsim::sim
