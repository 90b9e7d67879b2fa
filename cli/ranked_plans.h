// The simulated plans a sweep ranks first, as its text table and its HTML report list them.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "parallelism/iteration_simulation.h"
#include "sweep/objective.h"
#include "sweep/sweep.h"

namespace trainsim::cli {

struct RankedPlan {
  const sweep::PlanCandidate* candidate;
  const sweep::SweepTarget* target;
  const sweep::PlanOutcome* outcome;
  const parallelism::IterationResult* result;
  // With --goodput, the time and cost the plan was ranked by: failures included.
  std::optional<double> time_to_train_s;
  std::optional<double> cost_usd;
};

// The first `top` plans in rank order, up to the first plan that was not simulated.
[[nodiscard]] inline std::vector<RankedPlan> rankedPlans(const sweep::SweepResult& result, std::size_t top) {
  std::vector<RankedPlan> plans;
  for (std::size_t candidate : result.order) {
    const auto& outcome = result.outcomes[candidate];
    if (outcome.status != sweep::PlanStatus::kSimulated || plans.size() == top) break;
    const auto& plan_candidate = result.candidates[candidate];
    const auto& target = result.targets[plan_candidate.target];
    const auto& r = *outcome.result;
    plans.push_back({&plan_candidate, &target, &outcome, &r,
                     target.goodput ? sweep::timeToTrain(target, r.iteration_time_s) : r.time_to_train_s,
                     target.goodput ? sweep::costOfTraining(target, r.iteration_time_s) : r.cost_usd});
  }
  return plans;
}

}  // namespace trainsim::cli
