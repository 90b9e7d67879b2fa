// The time / cost trade-off of a sweep's event-simulated plans, and its Pareto front: the
// plans no other plan beats on both time and cost.
//
// Axes: x = time-to-train (s) when training.tokens is set, else iteration time (s);
// y = cost in USD when every target has a price (and tokens are set), else GPU-hours (of
// the training run with tokens, of one iteration without).
#pragma once

#include <string>

#include "sweep/sweep.h"

namespace trainsim::sweep {

struct TradeOffAxes {
  bool time_to_train = false;  // else iteration time
  bool cost_usd = false;       // else GPU-hours
  [[nodiscard]] std::string xLabel() const;
  [[nodiscard]] std::string yLabel() const;
};
[[nodiscard]] TradeOffAxes tradeOffAxes(const SweepResult& sweep);

// The plan's point on those axes (event-simulated plans only).
[[nodiscard]] double tradeOffX(const SweepResult& sweep, const TradeOffAxes& axes, std::size_t candidate);
[[nodiscard]] double tradeOffY(const SweepResult& sweep, const TradeOffAxes& axes, std::size_t candidate);

// Whether an outcome was event-simulated (simulated, over_deadline or over_budget).
[[nodiscard]] bool eventSimulated(const PlanOutcome& outcome);

// Sets PlanOutcome::pareto on the event-simulated plans that no other one beats on both
// axes (ties: the first in enumeration order stays).
void markParetoFront(SweepResult& sweep);

}  // namespace trainsim::sweep
