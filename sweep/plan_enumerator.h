// Every plan of a sweep: the cross product of the dimensions' values, each plan classified
// by the same checks `simulate` applies (parallelism/plan_validation.h), so "invalid" means
// exactly what simulate would reject, with its reason.
//
// Values a free dimension takes (a --vary/--fix list replaces them):
//   tp, pp, cp            every divisor of the GPU count; a pp that does not divide the layers
//                         gets the uneven split Megatron's first/last_stage_layers express:
//                         ceil(layers / pp) per middle stage, the rest shared by the first
//                         and last stages (the last taking the smaller half), e.g. Llama 3
//                         405B's 7 + 14 x 8 + 7 at pp 16; under zbv and dualpipev the 2 pp
//                         chunks of the V take that rule (ceil(layers / 2 pp) per middle
//                         chunk, the rest, possibly none, on the first and last chunks)
//   dp                    gpus / (tp x pp x cp); combinations whose product does not divide
//                         the GPU count define no plan and are not listed
//   ep                    every divisor of moe.experts (1 for dense models)
//   virtual_stages        1 at pp = 1; else every divisor of layers / pp; with an uneven split,
//                         every divisor of the middle stages' layers up to the ends' layers;
//                         2 added where zbv, dualpipev or dualpipe is listed
//   micro_batch_size      every divisor of global_batch_size / dp (1 when dp does not divide it)
//   sequence_parallel     false, true (tp > 1 only: at tp = 1 Megatron turns it off, so the
//                         plan would be the same as with false)
//   zero                  0..3 (dp > 1 only: at dp = 1 there is nothing to shard and every
//                         stage would give the same plan as zero 0)
//   recompute             none, selective, full (selective_op when listed)
// Enumeration order (and so output order among equals): targets, then tp, pp, cp, ep,
// virtual_stages, micro_batch_size, sequence_parallel, zero, recompute, each ascending.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "parallelism/experiment.h"
#include "parallelism/plan_validation.h"
#include "sweep/plan_space.h"
#include "sweep/sweep_target.h"

namespace trainsim::sweep {

struct PlanCandidate {
  std::size_t target = 0;          // index into the sweep's targets
  parallelism::ParallelPlan plan;  // resolved: gpus and dp filled in
  int64_t micro_batch_size = 1;
  std::optional<parallelism::PlanIssue> issue;  // the first rule broken: simulate would reject the plan

  [[nodiscard]] bool valid() const { return !issue; }
};

// Puts a candidate's plan and micro-batch size into `experiment` (a copy of its target's).
void applyCandidate(parallelism::Experiment& experiment, const PlanCandidate& candidate);

[[nodiscard]] std::vector<PlanCandidate> enumeratePlans(const std::vector<SweepTarget>& targets,
                                                        const PlanSpace& space);

// Ascending divisors of n (n >= 1).
[[nodiscard]] std::vector<int64_t> divisorsOf(int64_t n);

}  // namespace trainsim::sweep
