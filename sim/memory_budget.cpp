#include "sim/memory_budget.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace trainsim::sim {

namespace {

double bytesEach(MemoryKind kind) {
  switch (kind) {
    case MemoryKind::kCluster: return kClusterBytesPerGpu;
    case MemoryKind::kRanks: return kBytesPerRank;
    case MemoryKind::kTasks: return kBytesPerTask;
    case MemoryKind::kFlows: return kBytesPerFlow;
    case MemoryKind::kDependencies: return kBytesPerDependency;
    case MemoryKind::kPasses: return kBytesPerPass;
    case MemoryKind::kRunningFlows: return kBytesPerRunningFlow;
  }
  return 0.0;
}

}  // namespace

void MemoryEstimate::add(MemoryKind kind, std::string what, double count) {
  if (count <= 0.0) return;
  items.push_back(MemoryItem{kind, std::move(what), count, count * bytesEach(kind)});
}

double MemoryEstimate::count(MemoryKind kind) const {
  double total = 0.0;
  for (const MemoryItem& item : items) {
    if (item.kind == kind) total += item.count;
  }
  return total;
}

double MemoryEstimate::bytes() const {
  return std::accumulate(items.begin(), items.end(), kBaseBytes,
                         [](double sum, const MemoryItem& item) { return sum + item.bytes; });
}

void addClusterMemory(const topology::ClusterSpec& spec, MemoryEstimate& estimate) {
  if (spec.explicit_graph) {
    const auto items = static_cast<double>(spec.explicit_graph->devices.size() + spec.explicit_graph->links.size());
    estimate.add(MemoryKind::kCluster, "devices and links of the cluster graph", items);
    return;
  }
  estimate.add(MemoryKind::kCluster, "GPUs of the cluster graph", static_cast<double>(spec.totalGpus()));
}

Expected<bool> checkMemoryBudget(const MemoryEstimate& estimate, double budget_GiB, const std::string& option,
                                 const std::string& remedy) {
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  const double total = estimate.bytes();
  if (total <= budget_GiB * kGiB) return true;
  std::vector<MemoryItem> largest = estimate.items;
  std::sort(largest.begin(), largest.end(), [](const MemoryItem& a, const MemoryItem& b) { return a.bytes > b.bytes; });
  constexpr std::size_t kShown = 3;
  std::string parts;
  for (std::size_t i = 0; i < std::min(kShown, largest.size()); ++i) {
    parts += fmt::format("{}{:.3g} {} ({:.1f} GiB)", i == 0 ? "" : ", ", largest[i].count, largest[i].what,
                         largest[i].bytes / kGiB);
  }
  return Error{ExitCode::kInvalidInput, option, "",
               fmt::format("the simulation would need about {:.1f} GiB, more than the {:g} GiB memory budget: {}; "
                           "{}, or raise {}",
                           total / kGiB, budget_GiB, parts, remedy, option)};
}

}  // namespace trainsim::sim
