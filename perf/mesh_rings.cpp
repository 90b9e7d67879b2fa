#include "perf/mesh_rings.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <numeric>

namespace trainsim::perf {
namespace {

std::vector<int> identityOrder(int n) {
  std::vector<int> order;
  for (int i = 0; i < n; ++i) order.push_back(i);
  return order;
}

// Depth-first search for edge-disjoint directed Hamiltonian cycles: one cycle at a time,
// backtracking into earlier cycles when a later one cannot be closed. The step budget keeps
// large meshes bounded; the most cycles found within it are kept.
class RingSearch {
 public:
  explicit RingSearch(int n) : n_(n), used_(static_cast<std::size_t>(n) * n, false) {}

  std::vector<std::vector<int>> run() {
    searchCycles();
    return best_;
  }

 private:
  static constexpr long kStepBudget = 2'000'000;

  bool isUsed(int from, int to) const { return used_[static_cast<std::size_t>(from) * n_ + to]; }
  void setUsed(int from, int to, bool value) { used_[static_cast<std::size_t>(from) * n_ + to] = value; }

  // True once n-1 cycles are found (or the budget is spent): the search stops.
  bool searchCycles() {
    if (cycles_.size() > best_.size()) best_ = cycles_;
    if (static_cast<int>(cycles_.size()) == n_ - 1) return true;
    std::vector<int> path = {0};
    std::vector<bool> visited(static_cast<std::size_t>(n_), false);
    visited[0] = true;
    return extend(path, visited);
  }

  bool extend(std::vector<int>& path, std::vector<bool>& visited) {
    if (++steps_ > kStepBudget) return true;
    const int last = path.back();
    if (static_cast<int>(path.size()) == n_) {
      if (isUsed(last, 0)) return false;
      setUsed(last, 0, true);
      cycles_.push_back(path);
      if (searchCycles()) return true;
      cycles_.pop_back();
      setUsed(last, 0, false);
      return false;
    }
    for (int offset = 1; offset < n_; ++offset) {
      const int next = (last + offset) % n_;
      if (visited[static_cast<std::size_t>(next)] || isUsed(last, next)) continue;
      setUsed(last, next, true);
      visited[static_cast<std::size_t>(next)] = true;
      path.push_back(next);
      if (extend(path, visited)) return true;
      path.pop_back();
      visited[static_cast<std::size_t>(next)] = false;
      setUsed(last, next, false);
    }
    return false;
  }

  int n_;
  std::vector<bool> used_;  // directed edges taken by the cycles so far
  std::vector<std::vector<int>> cycles_;
  std::vector<std::vector<int>> best_;
  long steps_ = 0;
};

}  // namespace

const std::vector<std::vector<int>>& disjointRingOrders(int n) {
  static std::mutex mutex;
  static std::map<int, std::vector<std::vector<int>>> computed;
  const std::lock_guard<std::mutex> lock(mutex);
  auto it = computed.find(n);
  if (it == computed.end()) {
    // Below 3 GPUs there is one ring; from 3 on, the search finds at least one cycle.
    it = computed.emplace(n, n < 3 ? std::vector<std::vector<int>>{identityOrder(n)} : RingSearch(n).run()).first;
  }
  return it->second;
}

int meshRingChannels(int gpus_on_node, int nic_channels) {
  return std::lcm(static_cast<int>(disjointRingOrders(gpus_on_node).size()), std::max(1, nic_channels));
}

}  // namespace trainsim::perf
