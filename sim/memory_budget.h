// The memory a simulation needs, estimated before anything is built, and the budget it must
// fit: a plan the simulator cannot represent within the budget is refused up front (exit 2,
// naming the figures) instead of running for a minute and ending in std::bad_alloc.
//
// What grows with a plan is the cluster graph (per GPU: the GPU, its NIC, PCIe and switch
// ports, their links, the router's scratch), the task graph (its tasks, the flows
// collectives expand into, their dependencies; a ring of n GPUs with c channels is c x n
// flows, a tree four times that) and the executor's per-task state, and, for the flows that
// run at once, the flow network's state and the router's cached routes. The estimate
// multiplies counts known from the plan by per-item sizes measured on this build and rounded
// up, so that it bounds the peak resident memory
// (tests/parallelism/iteration_memory_test.cpp, bench/scale_memory.sh).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/expected.h"
#include "topology/cluster_spec.h"

namespace trainsim::sim {

// The default budget: 8 GiB, what a laptop or a CI runner spares (--max-memory-gib).
inline constexpr double kDefaultMemoryBudgetGiB = 8.0;
// The command-line flag that sets the budget; an Error over the budget names it as its
// `where` (checkMemoryBudget's `option`), which is how callers tell the refusal apart.
inline constexpr const char* kMemoryBudgetOption = "--max-memory-gib";

// Peak resident bytes per item, measured (RelWithDebInfo, glibc) and rounded up:
//  - the cluster graph: 1.8-2.5 KB per GPU over the shipped presets at 32,768 GPUs, 2.1 KB
//    at 2^20 GPUs;
//  - a task: 57 B (21 B in the graph's arrays, 36 B of the executor's: offsets, pending
//    count, start and finish times, its place among its stream's and its parent's);
//  - a flow: 105-130 B over the shipped experiments (its task's 57 B, 24 B of parameters,
//    its route: 12 B and 4 B a link) while it waits or is done;
//  - a dependency: 12 B (8 B in the graph, 4 B among the executor's successors); a
//    contention (16 B, twice) counts as two;
//  - a pass: 48 B of per-rank records (the step's tasks, its compute time);
//  - a flow running: 250-450 B more (the flow network's flow, its hops and link entries,
//    the router's cached route of a new pair): all-reduce and all-to-all of the collective
//    command, 370-580 B per flow in all, at 8,192 and 512 GPUs.
// Together: Llama 3 405B on 16,384 GPUs, 11.65M tasks, takes 1.29 GiB at its peak. The
// rounding covers vectors caught while doubling. bench/scale_memory.sh measures them again.
inline constexpr double kClusterBytesPerGpu = 4096.0;
inline constexpr double kBytesPerTask = 96.0;
inline constexpr double kBytesPerFlow = 192.0;
inline constexpr double kBytesPerDependency = 16.0;
inline constexpr double kBytesPerPass = 64.0;
inline constexpr double kBytesPerRunningFlow = 512.0;
inline constexpr double kBytesPerRank = 512.0;            // per GPU of a plan: its per-rank bookkeeping
inline constexpr double kBaseBytes = 16.0 * 1024 * 1024;  // the program, its configs and libraries (9 MB measured)

// What an item of an estimate counts. kTasks: tasks other than flows; kFlows: flow tasks (a
// flow is a task too); kDependencies: dependencies between tasks, and contentions (each
// counted as two); kPasses: passes of a GPU; kRunningFlows: flows that may run at once
// (each a flow of kFlows too).
enum class MemoryKind : uint8_t { kCluster, kRanks, kTasks, kFlows, kDependencies, kPasses, kRunningFlows };

// One line of an estimate: what it counts, how many, and the bytes they take.
struct MemoryItem {
  MemoryKind kind = MemoryKind::kTasks;
  std::string what;  // "flows of 2 gradient reductions over 1048576 GPUs"
  double count = 0.0;
  double bytes = 0.0;
};

struct MemoryEstimate {
  std::vector<MemoryItem> items;

  // Adds `count` items of `kind` at kClusterBytesPerGpu, kBytesPerRank, ... each (none when
  // `count` is not positive).
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
