#include "sim/engine.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <thread>
#include <utility>
#include <vector>

namespace trainsim::sim {
namespace {

// Records (time, payload) of each event it receives.
struct Recorder {
  Engine* engine = nullptr;
  std::vector<std::pair<SimTime, uint64_t>> seen;
  void onEvent(uint64_t payload) { seen.emplace_back(engine->now(), payload); }
};

TEST(EngineTest, FiresEventsInTimeOrder) {
  Engine engine;
  Recorder recorder{&engine, {}};
  const HandlerId h = engine.addHandler<&Recorder::onEvent>(&recorder);
  engine.schedule(30, h, 3);
  engine.schedule(10, h, 1);
  engine.schedule(20, h, 2);
  EXPECT_EQ(engine.pendingEvents(), 3u);
  EXPECT_EQ(engine.nextEventTime(), 10);
  EXPECT_EQ(engine.run(), 30);
  const std::vector<std::pair<SimTime, uint64_t>> expected{{10, 1}, {20, 2}, {30, 3}};
  EXPECT_EQ(recorder.seen, expected);
  EXPECT_EQ(engine.eventsProcessed(), 3u);
  EXPECT_TRUE(engine.idle());
}

TEST(EngineTest, EventsAtEqualTimeFireInInsertionOrder) {
  Engine engine;
  Recorder recorder{&engine, {}};
  const HandlerId h = engine.addHandler<&Recorder::onEvent>(&recorder);
  // Interleave two times; payloads are insertion indices.
  for (uint64_t i = 0; i < 1000; ++i) engine.schedule(i % 2 == 0 ? 5 : 7, h, i);
  engine.run();
  ASSERT_EQ(recorder.seen.size(), 1000u);
  std::vector<uint64_t> at5;
  std::vector<uint64_t> at7;
  for (std::size_t i = 0; i < recorder.seen.size(); ++i) {
    (recorder.seen[i].first == 5 ? at5 : at7).push_back(recorder.seen[i].second);
    if (i < 500) {
      EXPECT_EQ(recorder.seen[i].first, 5);
    }
  }
  for (std::size_t i = 0; i < at5.size(); ++i) EXPECT_EQ(at5[i], 2 * i);
  for (std::size_t i = 0; i < at7.size(); ++i) EXPECT_EQ(at7[i], 2 * i + 1);
}

TEST(EngineTest, EventScheduledNowFromAHandlerFiresAfterQueuedEventsOfTheSameTime) {
  Engine engine;
  std::vector<int> order;
  engine.at(10, [&] {
    order.push_back(1);
    engine.after(0, [&] { order.push_back(3); });
  });
  engine.at(10, [&] { order.push_back(2); });
  engine.run();
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(engine.now(), 10);
}

TEST(EngineTest, RunUntilStopsAtTheLimitAndAdvancesTheClock) {
  Engine engine;
  std::vector<SimTime> fired;
  for (SimTime t : {5, 10, 15, 20}) engine.at(t, [&engine, &fired] { fired.push_back(engine.now()); });
  EXPECT_EQ(engine.runUntil(10), 10);
  EXPECT_EQ(fired, (std::vector<SimTime>{5, 10}));
  EXPECT_EQ(engine.runUntil(12), 12);
  EXPECT_EQ(engine.now(), 12);
  EXPECT_EQ(engine.pendingEvents(), 2u);
  engine.run();
  EXPECT_EQ(fired, (std::vector<SimTime>{5, 10, 15, 20}));
}

TEST(EngineTest, StopEndsRunAfterTheCurrentEvent) {
  Engine engine;
  int count = 0;
  engine.at(1, [&] { ++count; });
  engine.at(2, [&] {
    ++count;
    engine.stop();
  });
  engine.at(3, [&] { ++count; });
  EXPECT_EQ(engine.run(), 2);
  EXPECT_EQ(count, 2);
  engine.run();
  EXPECT_EQ(count, 3);
}

TEST(EngineTest, CallbackSlotsAreReused) {
  Engine engine;
  int count = 0;
  // A self-rescheduling chain of 10000 callbacks keeps one slot alive at a time.
  std::function<void()> tick = [&] {
    if (++count < 10000) engine.after(kNanosecond, tick);
  };
  engine.after(0, tick);
  engine.run();
  EXPECT_EQ(count, 10000);
  EXPECT_EQ(engine.now(), 9999 * kNanosecond);
}

// A pseudo-random cascade of events whose outcome depends on the exact event order.
uint64_t cascade(uint32_t seed) {
  Engine engine;
  std::mt19937_64 rng(seed);
  uint64_t hash = 1469598103934665603ull;
  int remaining = 20000;
  struct Ctx {
    Engine* engine;
    std::mt19937_64* rng;
    uint64_t* hash;
    int* remaining;
    HandlerId self;
  } ctx{&engine, &rng, &hash, &remaining, 0};
  ctx.self = engine.addHandler(
      [](void* c, uint64_t payload) {
        auto* x = static_cast<Ctx*>(c);
        *x->hash = (*x->hash ^ (payload + static_cast<uint64_t>(x->engine->now()))) * 1099511628211ull;
        for (int k = 0; k < 2 && *x->remaining > 0; ++k, --*x->remaining) {
          x->engine->scheduleAfter(static_cast<SimTime>((*x->rng)() % 4), x->self, (*x->rng)());
        }
      },
      &ctx);
  for (int i = 0; i < 16; ++i) engine.schedule(0, ctx.self, static_cast<uint64_t>(i));
  engine.run();
  return hash ^ engine.eventsProcessed();
}

TEST(EngineTest, IdenticalRunsGiveIdenticalResultsAlsoOnParallelThreads) {
  const uint64_t reference = cascade(42);
  EXPECT_EQ(cascade(42), reference);
  EXPECT_NE(cascade(43), reference);
  std::vector<uint64_t> results(4);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < results.size(); ++i) threads.emplace_back([&results, i] { results[i] = cascade(42); });
  for (std::thread& t : threads) t.join();
  for (const uint64_t r : results) EXPECT_EQ(r, reference);
}

// An event past the clock's range is dropped, the engine marks itself overflowed and its
// run stops there: nothing after it fires, and a later run() does not resume.
TEST(EngineTest, EventsPastTheClocksRangeStopTheRun) {
  Engine engine;
  Recorder recorder{&engine, {}};
  const HandlerId h = engine.addHandler<&Recorder::onEvent>(&recorder);
  engine.schedule(10, h, 1);
  engine.at(20, [&] { engine.scheduleAfter(kTimeOverflow, h, 99); });
  engine.schedule(30, h, 3);
  EXPECT_FALSE(engine.overflowed());
  EXPECT_EQ(engine.run(), 20);
  EXPECT_TRUE(engine.overflowed());
  const std::vector<std::pair<SimTime, uint64_t>> expected{{10, 1}};
  EXPECT_EQ(recorder.seen, expected);
  EXPECT_EQ(engine.run(), 20);
  EXPECT_EQ(recorder.seen, expected);

  // Past the limit by absolute time, and by a delay that would overflow int64 if added.
  Engine absolute;
  absolute.schedule(kTimeLimit + 1, absolute.addHandler<&Recorder::onEvent>(&recorder), 1);
  EXPECT_TRUE(absolute.overflowed());
  EXPECT_TRUE(absolute.idle());
  Engine late;
  Recorder late_recorder{&late, {}};
  const HandlerId l = late.addHandler<&Recorder::onEvent>(&late_recorder);
  late.schedule(kTimeLimit, l, 1);
  late.run();
  EXPECT_FALSE(late.overflowed());
  late.scheduleAfter(std::numeric_limits<SimTime>::max(), l, 2);
  EXPECT_TRUE(late.overflowed());
}

}  // namespace
}  // namespace trainsim::sim
