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

// The most plans of `bytes` each that run at once when four threads run 20 plans each
// through `gate`, every plan checking that the gate holds no more than `budget`.
int mostAtOnce(MemoryGate& gate, double bytes, double budget) {
  std::atomic<int> running{0};
  std::atomic<int> most{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int plan = 0; plan < 20; ++plan) {
        const MemoryGate::Hold hold(gate, bytes);
        const int now = ++running;
        int seen = most.load();
        while (now > seen && !most.compare_exchange_weak(seen, now)) {
        }
        EXPECT_LE(gate.held(), budget);
        std::this_thread::sleep_for(std::chrono::microseconds(100));
        --running;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  return most.load();
}

// Plans of 6 of a 10-byte budget: one at a time, never two.
TEST(MemoryGateTest, ThreadsTogetherStayWithinTheBudget) {
  MemoryGate gate(10.0);
  EXPECT_EQ(mostAtOnce(gate, 6.0, 10.0), 1);
  EXPECT_EQ(gate.held(), 0.0);
}

// Plans of 4 of 10 bytes: at most two at once (8), a third waits.
TEST(MemoryGateTest, SmallPlansShareTheBudget) {
  MemoryGate gate(10.0);
  EXPECT_LE(mostAtOnce(gate, 4.0, 10.0), 2);
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
