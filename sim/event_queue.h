// The engine's pending events: a 4-ary min-heap of compact POD events ordered by
// (time, sequence number). The sequence number is assigned by the Engine in scheduling
// order, so events at the same time come out in the order they were scheduled and every
// run of the same simulation pops the same events in the same order.
#pragma once

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/sim_time.h"

namespace trainsim::sim {

// Index into an Engine's handler table.
using HandlerId = uint32_t;

// 24 bytes: the sequence number and the handler id share one word (sequence in the high
// 44 bits, so comparing the word compares sequences; 2^44 events per Engine, 2^20 handlers).
struct Event {
  static constexpr int kHandlerBits = 20;
  static constexpr uint64_t kHandlerMask = (uint64_t{1} << kHandlerBits) - 1;
  static constexpr uint64_t kMaxSequence = (uint64_t{1} << (64 - kHandlerBits)) - 1;

  SimTime time = 0;
  uint64_t sequence_handler = 0;
  uint64_t payload = 0;  // handler-defined (a task id, a flow slot and version, ...)

  Event() = default;
  Event(SimTime t, uint64_t sequence, HandlerId handler, uint64_t data)
      : time(t), sequence_handler((sequence << kHandlerBits) | handler), payload(data) {
    assert(sequence <= kMaxSequence && handler <= kHandlerMask);
  }
  [[nodiscard]] uint64_t sequence() const { return sequence_handler >> kHandlerBits; }
  [[nodiscard]] HandlerId handler() const { return static_cast<HandlerId>(sequence_handler & kHandlerMask); }
};

[[nodiscard]] inline bool firesBefore(const Event& a, const Event& b) {
  return a.time < b.time || (a.time == b.time && a.sequence_handler < b.sequence_handler);
}

class EventQueue {
 public:
  [[nodiscard]] bool empty() const { return heap_.empty(); }
  [[nodiscard]] std::size_t size() const { return heap_.size(); }
  void reserve(std::size_t n) { heap_.reserve(n); }
  void clear() { heap_.clear(); }

  // The earliest event. Requires !empty().
  [[nodiscard]] const Event& top() const {
    assert(!heap_.empty());
    return heap_.front();
  }

  void push(const Event& event) {
    std::size_t hole = heap_.size();
    heap_.push_back(event);
    while (hole > 0) {
      const std::size_t parent = (hole - 1) / kArity;
      if (!firesBefore(event, heap_[parent])) break;
      heap_[hole] = heap_[parent];
      hole = parent;
    }
    heap_[hole] = event;
  }

  // Removes and returns the earliest event. Requires !empty().
  Event pop() {
    assert(!heap_.empty());
    const Event result = heap_.front();
    const Event last = heap_.back();
    heap_.pop_back();
    const std::size_t n = heap_.size();
    if (n == 0) return result;
    std::size_t hole = 0;
    for (;;) {
      const std::size_t first_child = hole * kArity + 1;
      if (first_child >= n) break;
      const std::size_t end_child = first_child + kArity < n ? first_child + kArity : n;
      std::size_t best = first_child;
      for (std::size_t c = first_child + 1; c < end_child; ++c) {
        if (firesBefore(heap_[c], heap_[best])) best = c;
      }
      if (!firesBefore(heap_[best], last)) break;
      heap_[hole] = heap_[best];
      hole = best;
    }
    heap_[hole] = last;
    return result;
  }

 private:
  static constexpr std::size_t kArity = 4;
  std::vector<Event> heap_;
};

}  // namespace trainsim::sim
