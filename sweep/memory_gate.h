// The sweep's memory budget shared by its worker threads: each simulation holds its estimated
// bytes (parallelism/iteration_memory.h) while it runs, and a thread waits until the plans
// already running leave room for its own, so that T threads together stay within the one
// budget that --max-memory-gib sets rather than T times it. A plan that fits the budget
// alone always runs (when nothing else does), so no plan waits forever. Which thread runs a
// plan when does not change any result: records are gathered in plan order.
#pragma once

#include <condition_variable>
#include <mutex>

namespace trainsim::sweep {

class MemoryGate {
 public:
  explicit MemoryGate(double budget_bytes) : budget_bytes_(budget_bytes) {}
  MemoryGate(const MemoryGate&) = delete;
  MemoryGate& operator=(const MemoryGate&) = delete;

  // Holds `bytes` of the budget from construction to destruction.
  class Hold {
   public:
    Hold(MemoryGate& gate, double bytes) : gate_(gate), bytes_(bytes) { gate_.acquire(bytes_); }
    ~Hold() { gate_.release(bytes_); }
    Hold(const Hold&) = delete;
    Hold& operator=(const Hold&) = delete;

   private:
    MemoryGate& gate_;
    double bytes_;
  };

  // Bytes held now (for tests).
  [[nodiscard]] double held() const {
    std::lock_guard lock(mutex_);
    return held_bytes_;
  }

 private:
  void acquire(double bytes) {
    std::unique_lock lock(mutex_);
    room_.wait(lock, [&] { return held_bytes_ == 0.0 || held_bytes_ + bytes <= budget_bytes_; });
    held_bytes_ += bytes;
  }
  void release(double bytes) {
    {
      std::lock_guard lock(mutex_);
      held_bytes_ -= bytes;
      if (held_bytes_ < 0.0) held_bytes_ = 0.0;
    }
    room_.notify_all();
  }

  const double budget_bytes_;
  double held_bytes_ = 0.0;
  mutable std::mutex mutex_;
  std::condition_variable room_;
};

}  // namespace trainsim::sweep
