#include "sweep/pareto_front.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "sweep/objective.h"

namespace trainsim::sweep {

std::string TradeOffAxes::xLabel() const { return time_to_train ? "time to train (days)" : "iteration time (s)"; }

std::string TradeOffAxes::yLabel() const {
  if (cost_usd) return "cost (USD)";
  return time_to_train ? "GPU-hours" : "GPU-hours per iteration";
}

TradeOffAxes tradeOffAxes(const SweepResult& sweep) {
  TradeOffAxes axes;
  axes.time_to_train = !sweep.targets.empty();
  axes.cost_usd = !sweep.targets.empty();
  for (const auto& target : sweep.targets) {
    if (!target.experiment.training.tokens) axes.time_to_train = false;
    if (!target.experiment.cluster.price_per_gpu_hour) axes.cost_usd = false;
  }
  axes.cost_usd = axes.cost_usd && axes.time_to_train;
  return axes;
}

bool eventSimulated(const PlanOutcome& outcome) { return outcome.result.has_value(); }

// With --goodput (target.goodput set) time and cost count failures, as the ranking does.
double tradeOffX(const SweepResult& sweep, const TradeOffAxes& axes, std::size_t candidate) {
  const auto& result = *sweep.outcomes[candidate].result;
  const SweepTarget& target = sweep.targets[sweep.candidates[candidate].target];
  if (!axes.time_to_train) return result.iteration_time_s;
  return target.goodput ? *timeToTrain(target, result.iteration_time_s) : *result.time_to_train_s;
}

double tradeOffY(const SweepResult& sweep, const TradeOffAxes& axes, std::size_t candidate) {
  const auto& result = *sweep.outcomes[candidate].result;
  const SweepTarget& target = sweep.targets[sweep.candidates[candidate].target];
  const auto gpus = static_cast<double>(target.gpus);
  if (target.goodput && axes.time_to_train) {
    if (axes.cost_usd) return *costOfTraining(target, result.iteration_time_s);
    return *timeToTrain(target, result.iteration_time_s) * gpus / 3600.0;
  }
  if (axes.cost_usd) return *result.cost_usd;
  if (axes.time_to_train) return *result.gpu_hours;
  return result.iteration_time_s * gpus / 3600.0;
}

void markParetoFront(SweepResult& sweep) {
  const TradeOffAxes axes = tradeOffAxes(sweep);
  std::vector<std::size_t> points;
  for (std::size_t i = 0; i < sweep.outcomes.size(); ++i) {
    if (eventSimulated(sweep.outcomes[i])) points.push_back(i);
  }
  // By x, then y, then enumeration order: a point is on the front when it is cheaper than
  // every point before it.
  std::stable_sort(points.begin(), points.end(), [&](std::size_t a, std::size_t b) {
    const double xa = tradeOffX(sweep, axes, a);
    const double xb = tradeOffX(sweep, axes, b);
    if (xa != xb) return xa < xb;
    return tradeOffY(sweep, axes, a) < tradeOffY(sweep, axes, b);
  });
  double cheapest = std::numeric_limits<double>::infinity();
  for (std::size_t candidate : points) {
    const double y = tradeOffY(sweep, axes, candidate);
    if (y < cheapest) {
      sweep.outcomes[candidate].pareto = true;
      cheapest = y;
    }
  }
}

}  // namespace trainsim::sweep
