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
      : tp_(plan.tp), cp_(plan.cp), dp_(plan.dp), pp_(plan.pp), ep_(plan.ep), etp_(plan.expertTensorParallel()) {}

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
  // ranks make whole expert-parallel groups: a replica is tp x cp consecutive ranks of a stage,
  // an expert group spans etp x ep of them, so lcm(tp x cp, etp x ep) / (tp x cp); 1 without
  // expert parallelism at etp = tp.
  [[nodiscard]] int64_t symmetricReplicas() const {
    const int64_t replica = tp_ * cp_;
    return std::lcm(replica, etp_ * ep_) / replica;
  }
  // The expert layers' groups (ParallelPlan::expertTensorParallel): the tp x cp x dp ranks of
  // a stage, in rank order, taken as etp x ep x expert-dp with etp innermost (Megatron-Core's
  // expert RankGenerator). At etp = tp the expert-parallel group is ep consecutive ranks of
  // the data- and context-parallel ranks taken together (context-parallel index inner), so it
  // may span context-parallel ranks when ep > dp.
  [[nodiscard]] std::vector<int64_t> expertGroup(const RankCoordinate& c) const { return expertVary(c, etp_, ep_); }
  [[nodiscard]] std::vector<int64_t> expertTensorGroup(const RankCoordinate& c) const { return expertVary(c, 1, etp_); }
  // The ranks that hold the same experts, over which their gradients are reduced.
  [[nodiscard]] std::vector<int64_t> expertDataGroup(const RankCoordinate& c) const {
    return expertVary(c, etp_ * ep_, tp_ * cp_ * dp_ / (etp_ * ep_));
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
  // The `size` ranks `stride` apart in a stage's local order (tp + TP (cp + CP dp)) whose
  // block of stride x size holds `c`, at c's offset in that block.
  [[nodiscard]] std::vector<int64_t> expertVary(const RankCoordinate& c, int64_t stride, int64_t size) const {
    const int64_t stage_ranks = tp_ * cp_ * dp_;
    const int64_t local = rank(c) - c.pp * stage_ranks;
    const int64_t block = stride * size;
    const int64_t first = local / block * block + local % stride;
    std::vector<int64_t> group;
    group.reserve(static_cast<std::size_t>(size));
    for (int64_t i = 0; i < size; ++i) group.push_back(c.pp * stage_ranks + first + i * stride);
    return group;
  }

  int64_t tp_, cp_, dp_, pp_, ep_, etp_;
};

}  // namespace trainsim::parallelism
