#include "sweep/objective.h"

#include <limits>

#include "base/error.h"
#include "goodput/goodput_report.h"

namespace trainsim::sweep {

std::string_view objectiveName(Objective objective) {
  switch (objective) {
    case Objective::kTime: return "time";
    case Objective::kCost: return "cost";
    case Objective::kMfu: return "mfu";
  }
  return "unknown";
}

std::optional<Objective> parseObjective(std::string_view name) {
  for (Objective objective : {Objective::kTime, Objective::kCost, Objective::kMfu}) {
    if (objectiveName(objective) == name) return objective;
  }
  return std::nullopt;
}

void checkObjectiveInputs(Objective objective, const Constraints& constraints,
                          const std::vector<SweepTarget>& targets) {
  for (const auto& target : targets) {
    const auto& cluster = target.experiment.cluster;
    const bool needs_price = objective == Objective::kCost || constraints.budget_usd.has_value();
    if (needs_price && !cluster.price_per_gpu_hour) {
      throwInputError(objective == Objective::kCost ? "--objective cost" : "--budget-usd", "cluster.price_per_gpu_hour",
                      "cluster " + target.cluster_label +
                          " has no price_per_gpu_hour; set one (--set cluster.price_per_gpu_hour=USD) or sweep "
                          "--clusters that have a price (aws-p4d, aws-p5, azure-nd-a100-v4, ...)");
    }
    const bool needs_tokens = constraints.deadline_s.has_value() || constraints.budget_usd.has_value();
    if (needs_tokens && !target.experiment.training.tokens) {
      throwInputError(constraints.deadline_s ? "--deadline-days" : "--budget-usd", "training.tokens",
                      "a deadline or a budget applies to the whole training run; set training.tokens (e.g. --set "
                      "training.tokens=300e9)");
    }
  }
}

double objectiveWeight(Objective objective, const SweepTarget& target) {
  const auto gpus = static_cast<double>(target.gpus);
  const auto& experiment = target.experiment;
  switch (objective) {
    case Objective::kTime: return 1.0;
    case Objective::kCost: return gpus * experiment.cluster.price_per_gpu_hour.value_or(0.0);
    case Objective::kMfu: return gpus * experiment.cluster.gpu.peakTflops(experiment.training.precision).value_or(0.0);
  }
  return 1.0;
}

double goodputFactor(const SweepTarget& target, double iteration_seconds) {
  if (!target.goodput || !(iteration_seconds > 0.0)) return 1.0;
  const auto estimate =
      goodput::estimateGoodput(goodput::withIterationTime(*target.goodput, target.experiment, iteration_seconds));
  return estimate ? 1.0 / estimate->goodput : std::numeric_limits<double>::infinity();
}

double objectiveKey(Objective objective, const SweepTarget& target, double iteration_seconds) {
  const double key = iteration_seconds * objectiveWeight(objective, target);
  return objective == Objective::kMfu ? key : key * goodputFactor(target, iteration_seconds);
}

std::optional<double> timeToTrain(const SweepTarget& target, double iteration_seconds) {
  const auto& training = target.experiment.training;
  if (!training.tokens) return std::nullopt;
  const double failure_free = *training.tokens / static_cast<double>(training.tokensPerIteration()) * iteration_seconds;
  return target.goodput ? failure_free * goodputFactor(target, iteration_seconds) : failure_free;
}

std::optional<double> costOfTraining(const SweepTarget& target, double iteration_seconds) {
  const auto time = timeToTrain(target, iteration_seconds);
  const auto& price = target.experiment.cluster.price_per_gpu_hour;
  if (!time || !price) return std::nullopt;
  return *time / 3600.0 * static_cast<double>(target.gpus) * *price;
}

}  // namespace trainsim::sweep
