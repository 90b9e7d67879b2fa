#include "parallelism/moe_dispatch.h"

#include <algorithm>
#include <cmath>

namespace trainsim::parallelism {
namespace {

// C(n - m, k) / C(n, k): the chance that k of n items drawn without replacement all miss
// the m marked ones.
double missAll(double n, double m, double k) {
  if (k > n - m) return 0.0;
  double chance = 1.0;
  for (double i = 0.0; i < k; i += 1.0) chance *= (n - m - i) / (n - i);
  return chance;
}

}  // namespace

double expectedExpertNodes(const MoeSpec& moe, int64_t nodes) {
  const auto n = static_cast<double>(nodes);
  if (nodes <= 1) return n;
  const bool grouped = moe.router_groups > 1 && moe.router_groups % nodes == 0;
  if (grouped) {
    // A node is reached when one of its router_groups / nodes groups is among the M chosen.
    const auto groups = static_cast<double>(moe.router_groups);
    return n * (1.0 - missAll(groups, groups / n, static_cast<double>(moe.router_group_top_k)));
  }
  const auto experts = static_cast<double>(moe.experts);
  return n * (1.0 - missAll(experts, experts / n, static_cast<double>(moe.top_k)));
}

double dispatchByteScale(const MoeSpec& moe, const ParallelPlan& plan, int64_t gpus_per_node) {
  if (plan.moe_dispatcher != MoeDispatcher::kFlex) return 1.0;
  // The group is ep ranks etp apart in rank order (RankLayout::expertGroup).
  const int64_t n = plan.ep;
  if (n <= 1) return 1.0;
  const int64_t local = std::clamp<int64_t>(gpus_per_node / plan.expertTensorParallel(), 1, n);
  if (local >= n) {
    // Inside one node a token goes once to each other rank holding one of its experts (the
    // ranks taking the nodes' place in expectedExpertNodes), where the all-to-all sends one
    // copy per expert: top_k x (n - 1) / n of them leave the GPU.
    const double ranks = expectedExpertNodes(moe, n) * static_cast<double>(n - 1) / static_cast<double>(n);
    return ranks / (static_cast<double>(moe.top_k) * static_cast<double>(n - 1) / static_cast<double>(n));
  }
  const int64_t nodes = n / local;
  const double remote = expectedExpertNodes(moe, nodes) * static_cast<double>(nodes - 1) / static_cast<double>(nodes);
  const double off_node = static_cast<double>(moe.top_k) * static_cast<double>(n - local) / static_cast<double>(n);
  return remote / off_node;
}

}  // namespace trainsim::parallelism
