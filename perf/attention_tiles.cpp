#include "perf/attention_tiles.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <functional>
#include <map>
#include <queue>
#include <tuple>
#include <vector>

namespace trainsim::perf {
namespace {

// Above this many CTAs the schedule is not simulated: with more than ~500 CTAs per SM the
// tail is below 0.5% of the kernel's time.
constexpr int64_t kSimulatedCtasMax = 1 << 16;
// Results kept per thread (the sweep asks for the same few shapes for thousands of plans).
constexpr std::size_t kCacheEntriesMax = 4096;

struct TileProblem {
  int sms = 0;
  double overhead = 0.0;
  AttentionPass pass = AttentionPass::kForward;
  int64_t pairs = 0;
  int64_t query_blocks = 0;
  int64_t key_blocks = 0;
  auto key() const { return std::tuple(sms, overhead, pass, pairs, query_blocks, key_blocks); }
  bool operator<(const TileProblem& other) const { return key() < other.key(); }
};

// Time until the last SM finishes `pairs` copies of the CTAs `work` (loop iterations each, in
// launch order), each CTA going to the SM that frees first.
double makespan(const std::vector<double>& work, int64_t pairs, int sms) {
  double per_pair = 0.0;
  double longest = 0.0;
  for (double w : work) {
    per_pair += w;
    longest = std::max(longest, w);
  }
  if (pairs * static_cast<int64_t>(work.size()) > kSimulatedCtasMax) {
    return static_cast<double>(pairs) * per_pair / sms + longest / 2.0;
  }
  std::priority_queue<double, std::vector<double>, std::greater<>> free_at;
  for (int s = 0; s < sms; ++s) free_at.push(0.0);
  double last = 0.0;
  for (int64_t pair = 0; pair < pairs; ++pair) {
    for (double w : work) {
      const double start = free_at.top();
      free_at.pop();
      free_at.push(start + w);
      last = std::max(last, start + w);
    }
  }
  return last;
}

// The CTAs of a causal kernel over n x n blocks: forward CTA i loops over the i + 1 key blocks
// at or left of the diagonal; backward CTA j over the n - j query blocks at or below it.
std::vector<double> causalCtas(int64_t n, AttentionPass pass, double overhead) {
  std::vector<double> work(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const auto loop = static_cast<double>(pass == AttentionPass::kForward ? i + 1 : n - i);
    work[static_cast<std::size_t>(i)] = loop + overhead;
  }
  return work;
}

double efficiency(const TileProblem& p) {
  const int64_t n = p.query_blocks;
  double time = makespan(causalCtas(n, p.pass, p.overhead), p.pairs, p.sms);
  // Context parallelism (Transformer Engine's ring attention with load-balanced chunks):
  // after the causal step over its own keys, each of the cp - 1 other steps is a kernel
  // without mask over half of a chunk's blocks.
  const int64_t cp = std::max<int64_t>(1, (p.key_blocks + n - 1) / n);
  if (cp > 1) {
    const std::vector<double> half(static_cast<std::size_t>(n), 0.5 * static_cast<double>(n) + p.overhead);
    time += static_cast<double>(cp - 1) * makespan(half, p.pairs, p.sms);
  }
  const double useful = static_cast<double>(p.pairs) * static_cast<double>(n) * static_cast<double>(n * cp) / 2.0;
  return std::clamp(useful / (static_cast<double>(p.sms) * time), 1e-6, 1.0);
}

}  // namespace

double attentionTileEfficiency(const AttentionShape& shape, AttentionPass pass, int sms, double overhead_blocks) {
  assert(sms > 0 && overhead_blocks >= 0.0);
  if (shape.empty()) return 1.0;
  TileProblem problem;
  problem.sms = sms;
  problem.overhead = overhead_blocks;
  problem.pass = pass;
  problem.pairs = std::max<int64_t>(1, std::llround(shape.sequences));
  problem.query_blocks = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(shape.queries / kAttentionTileSize)));
  problem.key_blocks = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(shape.keys / kAttentionTileSize)));
  thread_local std::map<TileProblem, double> cache;
  if (auto found = cache.find(problem); found != cache.end()) return found->second;
  if (cache.size() >= kCacheEntriesMax) cache.clear();
  const double result = efficiency(problem);
  cache.emplace(problem, result);
  return result;
}

}  // namespace trainsim::perf
