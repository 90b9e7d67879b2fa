// Where each parallel coordinate lives: GPU rank = tp + TP * (cp + CP * (dp + DP * pp)),
// Megatron-LM's default "tp-cp-ep-dp-pp" order: tensor-parallel peers are consecutive
// ranks (inside one node), pipeline stages are furthest apart.
#pragma once

#include <cstdint>
#include <numeric>
#include <vector>

#include "parallelism/parallel_plan.h"

namespace trainsim::parallelism {

struct RankCoordinate {
  int64_t tp = 0;
  int64_t cp = 0;
  int64_t dp = 0;
  int64_t pp = 0;
};

class RankLayout {
 public:
  explicit RankLayout(const ParallelPlan& plan)
      : tp_(plan.tp), cp_(plan.cp), dp_(plan.dp), pp_(plan.pp), ep_(plan.ep) {}

  [[nodiscard]] int64_t ranks() const { return tp_ * cp_ * dp_ * pp_; }
  [[nodiscard]] int64_t rank(const RankCoordinate& c) const { return c.tp + tp_ * (c.cp + cp_ * (c.dp + dp_ * c.pp)); }
  [[nodiscard]] RankCoordinate coordinate(int64_t rank) const {
    RankCoordinate c;
    c.tp = rank % tp_;
    rank /= tp_;
    c.cp = rank % cp_;
    rank /= cp_;
    c.dp = rank % dp_;
    c.pp = rank / dp_;
    return c;
  }
  // The ranks that differ from `c` only in one coordinate, in coordinate order.
  [[nodiscard]] std::vector<int64_t> tensorGroup(RankCoordinate c) const {
    return vary(c, &RankCoordinate::tp, tp_, 0);
  }
  [[nodiscard]] std::vector<int64_t> contextGroup(RankCoordinate c) const {
    return vary(c, &RankCoordinate::cp, cp_, 0);
  }
  // The ranks that hold the same parameters as `c`: every data- and context-parallel rank with
  // its tp and pp coordinates, in rank order. Gradients are reduced and ZeRO / the distributed
  // optimizer shards over this group (Megatron-Core's data-parallel group "with context
  // parallel": context-parallel ranks hold the same weights and see different tokens).
  [[nodiscard]] std::vector<int64_t> dataGroup(RankCoordinate c) const {
    std::vector<int64_t> group;
    for (int64_t dp = 0; dp < dp_; ++dp) {
      for (int64_t cp = 0; cp < cp_; ++cp) {
        c.dp = dp;
        c.cp = cp;
        group.push_back(rank(c));
      }
    }
    return group;
  }
  // Data-parallel replicas that symmetric mode simulates: the fewest (from replica 0) whose
  // ranks make whole expert-parallel groups, lcm(ep, cp) / cp; 1 without expert parallelism.
  [[nodiscard]] int64_t symmetricReplicas() const { return ep_ / std::gcd(ep_, cp_); }
  // Expert-parallel groups: ep consecutive ranks of the data- and context-parallel ranks
  // taken together (Megatron-Core builds them from dp x cp; plan validation asks ep to divide
  // dp x cp, not dp), in rank order: context-parallel index inner, data-parallel outer, so an
  // expert group may span context-parallel ranks when ep > dp.
  [[nodiscard]] std::vector<int64_t> expertGroup(RankCoordinate c) const {
    const int64_t first = (c.cp + cp_ * c.dp) / ep_ * ep_;
    std::vector<int64_t> group;
    for (int64_t i = 0; i < ep_; ++i) {
      c.cp = (first + i) % cp_;
      c.dp = (first + i) / cp_;
      group.push_back(rank(c));
    }
    return group;
  }

 private:
  [[nodiscard]] std::vector<int64_t> vary(RankCoordinate c, int64_t RankCoordinate::*field, int64_t size,
                                          int64_t /*unused*/) const {
    std::vector<int64_t> group;
    for (int64_t i = 0; i < size; ++i) {
      c.*field = i;
      group.push_back(rank(c));
    }
    return group;
  }

  int64_t tp_, cp_, dp_, pp_, ep_;
};

}  // namespace trainsim::parallelism
