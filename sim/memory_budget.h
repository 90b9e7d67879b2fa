// The memory a simulation needs, estimated before anything is built, and the budget it must
// fit: a plan the simulator cannot represent within the budget is refused up front (exit 2,
// naming the figures) instead of running for a minute and ending in std::bad_alloc.
//
// What grows with a plan is the cluster graph (per GPU: the GPU, its NIC, PCIe and switch
// ports, their links, the router's scratch), the task graph's tasks and, above all, the
// flows collectives expand into (per flow: its task, route, routing-cache entry, the flow
// network's and the executor's state; a ring of n GPUs with c channels is c x n flows, a
// tree four times that). The estimate multiplies counts known from the plan by per-item
// sizes measured on this build and rounded up, so that it bounds the peak resident memory
// (tests/sim/memory_budget_test.cpp, bench/scale_memory.sh).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/expected.h"
#include "topology/cluster_spec.h"

namespace trainsim::sim {

// The default budget: 8 GiB, what a laptop or a CI runner spares (--max-memory-gib).
inline constexpr double kDefaultMemoryBudgetGiB = 8.0;

// Peak resident bytes per item, measured (RelWithDebInfo, glibc) and rounded up:
// the cluster graph 1.8-2.5 KB per GPU over the shipped presets at 32,768 GPUs and 2.1 KB
// at 2^20 GPUs; 375-580 B per flow (tree, ring with PXN routes, all-to-all); 170 B per task
// of a training iteration (GPT-3 175B on 1,024 GPUs). The rounding covers vectors caught
// while doubling. bench/scale_memory.sh measures them again.
inline constexpr double kClusterBytesPerGpu = 4096.0;
inline constexpr double kBytesPerFlow = 768.0;
inline constexpr double kBytesPerTask = 256.0;
inline constexpr double kBytesPerRank = 512.0;            // per GPU of a plan: its per-rank bookkeeping
inline constexpr double kBaseBytes = 64.0 * 1024 * 1024;  // the program, its configs and libraries

// What an item of an estimate counts.
enum class MemoryKind : uint8_t { kCluster, kRanks, kTasks, kFlows };

// One line of an estimate: what it counts, how many, and the bytes they take.
struct MemoryItem {
  MemoryKind kind = MemoryKind::kTasks;
  std::string what;  // "flows of 2 gradient reductions over 1048576 GPUs"
  double count = 0.0;
  double bytes = 0.0;
};

struct MemoryEstimate {
  std::vector<MemoryItem> items;

  // Adds `count` items of `kind` at kClusterBytesPerGpu, kBytesPerRank, ... each.
  void add(MemoryKind kind, std::string what, double count);
  [[nodiscard]] double bytes() const;
  // The items of one kind counted together (tasks and flows: what a test compares with
  // the task graph it bounds).
  [[nodiscard]] double count(MemoryKind kind) const;
};

// The cluster graph's share: per GPU of the homogeneous form, per device and link of an
// explicit graph (its GPUs, switches and links, each at most what a GPU of the homogeneous
// form takes with its share of them).
void addClusterMemory(const topology::ClusterSpec& spec, MemoryEstimate& estimate);

// Refuses (InvalidInput, exit 2) an estimate over `budget_GiB`, naming its largest items,
// the total, the budget, `remedy` (what to change in the plan) and `option`, the flag that
// raises the budget.
[[nodiscard]] Expected<bool> checkMemoryBudget(const MemoryEstimate& estimate, double budget_GiB,
                                               const std::string& option, const std::string& remedy);

}  // namespace trainsim::sim
