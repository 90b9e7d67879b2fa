// The sweep's shared memory budget (sweep/memory_gate.h): threads never hold more than the
// budget together, a plan that fits alone always runs, and every hold is given back.
#include "sweep/memory_gate.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace trainsim::sweep {
namespace {

// Four threads, each running plans of 6 of a 10-byte budget: one at a time, never two.
TEST(MemoryGateTest, ThreadsTogetherStayWithinTheBudget) {
  MemoryGate gate(10.0);
  std::atomic<int> running{0};
  std::atomic<int> most{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int plan = 0; plan < 20; ++plan) {
        const MemoryGate::Hold hold(gate, 6.0);
        const int now = ++running;
        int seen = most.load();
        while (now > seen && !most.compare_exchange_weak(seen, now)) {
        }
        EXPECT_LE(gate.held(), 10.0);
        std::this_thread::sleep_for(std::chrono::microseconds(50));
        --running;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(most.load(), 1);
  EXPECT_EQ(gate.held(), 0.0);
}

// Plans of 4 of 10 bytes: two run at once (8), a third waits.
TEST(MemoryGateTest, SmallPlansShareTheBudget) {
  MemoryGate gate(10.0);
  std::atomic<int> running{0};
  std::atomic<int> most{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int plan = 0; plan < 20; ++plan) {
        const MemoryGate::Hold hold(gate, 4.0);
        const int now = ++running;
        int seen = most.load();
        while (now > seen && !most.compare_exchange_weak(seen, now)) {
        }
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        --running;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_LE(most.load(), 2);
  EXPECT_EQ(gate.held(), 0.0);
}

// A plan larger than the budget (the sweep refuses those before; the gate itself only
// serializes) runs when nothing else holds memory, instead of waiting forever.
TEST(MemoryGateTest, APlanAloneAlwaysRuns) {
  MemoryGate gate(10.0);
  {
    const MemoryGate::Hold hold(gate, 25.0);
    EXPECT_EQ(gate.held(), 25.0);
  }
  EXPECT_EQ(gate.held(), 0.0);
}

}  // namespace
}  // namespace trainsim::sweep
