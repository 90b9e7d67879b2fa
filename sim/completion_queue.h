// An indexed min-heap of (time, id) pairs: the pending completion times of a set of
// objects (flows), where an object's time can be changed in place. Ties are broken by id,
// so the order is reproducible. Ids are dense small integers (slots).
//
// Unlike scheduling one engine event per object and discarding outdated ones, the heap
// holds exactly one entry per object however often its time changes.
#pragma once

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <limits>
#include <vector>

#include "sim/sim_time.h"

namespace trainsim::sim {

class CompletionQueue {
 public:
  static constexpr uint32_t kAbsent = std::numeric_limits<uint32_t>::max();

  [[nodiscard]] bool empty() const { return heap_.empty(); }
  [[nodiscard]] std::size_t size() const { return heap_.size(); }
  [[nodiscard]] bool contains(uint32_t id) const { return id < position_.size() && position_[id] != kAbsent; }
  [[nodiscard]] SimTime topTime() const { return heap_.empty() ? kTimeNever : heap_.front().time; }
  [[nodiscard]] uint32_t topId() const {
    assert(!heap_.empty());
    return heap_.front().id;
  }

  // Inserts `id` or changes its time.
  void set(uint32_t id, SimTime time) {
    if (id >= position_.size()) position_.resize(id + 1, kAbsent);
    uint32_t pos = position_[id];
    if (pos == kAbsent) {
      pos = static_cast<uint32_t>(heap_.size());
      heap_.push_back(Entry{time, id});
      position_[id] = pos;
      siftUp(pos);
      return;
    }
    const SimTime old = heap_[pos].time;
    heap_[pos].time = time;
    if (time < old) {
      siftUp(pos);
    } else {
      siftDown(pos);
    }
  }

  // Changes times without restoring the heap order; call rebuild() before any other use.
  // Cheaper than set() when a large fraction of the entries change at once.
  void setUnordered(uint32_t id, SimTime time) {
    if (id >= position_.size()) position_.resize(id + 1, kAbsent);
    if (position_[id] == kAbsent) {
      position_[id] = static_cast<uint32_t>(heap_.size());
      heap_.push_back(Entry{time, id});
    } else {
      heap_[position_[id]].time = time;
    }
  }
  // Restores the heap order in O(n).
  void rebuild() {
    for (std::size_t i = heap_.size() / 2; i-- > 0;) siftDown(static_cast<uint32_t>(i));
  }

  void remove(uint32_t id) {
    assert(contains(id));
    const uint32_t pos = position_[id];
    position_[id] = kAbsent;
    const Entry last = heap_.back();
    heap_.pop_back();
    if (pos == heap_.size()) return;
    heap_[pos] = last;
    position_[last.id] = pos;
    siftDown(pos);
    siftUp(position_[last.id]);
  }

  uint32_t pop() {
    const uint32_t id = topId();
    remove(id);
    return id;
  }

  // Removes every entry with time <= `limit` and appends their ids to `out` in the order
  // pop() would return them. Finds them by walking the heap from the top (O(k) for k
  // entries) and, when they are a large part of the heap, restores it in one O(n) pass
  // instead of k sifts.
  void popUntil(SimTime limit, std::vector<uint32_t>& out) {
    due_.clear();
    if (heap_.empty() || heap_.front().time > limit) return;
    stack_.assign(1, 0);
    while (!stack_.empty()) {
      const uint32_t pos = stack_.back();
      stack_.pop_back();
      due_.push_back(heap_[pos]);
      for (uint32_t child = 2 * pos + 1; child <= 2 * pos + 2 && child < heap_.size(); ++child) {
        if (heap_[child].time <= limit) stack_.push_back(child);
      }
    }
    std::sort(due_.begin(), due_.end(), [](const Entry& a, const Entry& b) { return before(a, b); });
    if (due_.size() * 4 >= heap_.size()) {
      for (const Entry& entry : due_) position_[entry.id] = kAbsent;
      std::size_t kept = 0;
      for (std::size_t i = 0; i < heap_.size(); ++i) {
        if (position_[heap_[i].id] == kAbsent) continue;
        heap_[kept] = heap_[i];
        position_[heap_[kept].id] = static_cast<uint32_t>(kept);
        ++kept;
      }
      heap_.resize(kept);
      rebuild();
    } else {
      for (const Entry& entry : due_) remove(entry.id);
    }
    for (const Entry& entry : due_) out.push_back(entry.id);
  }

 private:
  struct Entry {
    SimTime time;
    uint32_t id;
  };
  static bool before(const Entry& a, const Entry& b) { return a.time < b.time || (a.time == b.time && a.id < b.id); }

  void siftUp(uint32_t pos) {
    const Entry entry = heap_[pos];
    while (pos > 0) {
      const uint32_t parent = (pos - 1) / 2;
      if (!before(entry, heap_[parent])) break;
      heap_[pos] = heap_[parent];
      position_[heap_[pos].id] = pos;
      pos = parent;
    }
    heap_[pos] = entry;
    position_[entry.id] = pos;
  }

  void siftDown(uint32_t pos) {
    const Entry entry = heap_[pos];
    const auto n = static_cast<uint32_t>(heap_.size());
    for (;;) {
      uint32_t child = 2 * pos + 1;
      if (child >= n) break;
      if (child + 1 < n && before(heap_[child + 1], heap_[child])) ++child;
      if (!before(heap_[child], entry)) break;
      heap_[pos] = heap_[child];
      position_[heap_[pos].id] = pos;
      pos = child;
    }
    heap_[pos] = entry;
    position_[entry.id] = pos;
  }

  std::vector<Entry> heap_;
  std::vector<uint32_t> position_;  // by id
  std::vector<Entry> due_;          // scratch of popUntil
  std::vector<uint32_t> stack_;     // scratch of popUntil
};

}  // namespace trainsim::sim
