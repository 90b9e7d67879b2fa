// What a sweep ranks by, and the constraints that drop plans.
//
// Every objective is, for one plan, proportional to its iteration time: the global batch and
// sequence length are the same for every plan, so time-to-train = tokens / tokens-per-iteration
// x iteration time; cost = time-to-train x GPUs x price; and model FLOPs per iteration are
// plan-independent, so MFU = FLOPs / (iteration time x GPUs x peak). Ranking therefore
// uses key = iteration time x weight, weight = 1 (time), GPUs x price per GPU-hour (cost),
// GPUs x peak FLOP/s (mfu; a smaller key is a higher MFU). The screen's estimate of a plan
// goes through the same weight, so the error of the estimate is the error of the key. With
// --goodput the time and cost keys are also multiplied by the target's 1 / goodput, which
// grows with its GPU count and does not depend on the iteration time beyond rounding.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "sweep/sweep_target.h"

namespace trainsim::sweep {

enum class Objective : uint8_t { kTime, kCost, kMfu };
[[nodiscard]] std::string_view objectiveName(Objective objective);
[[nodiscard]] std::optional<Objective> parseObjective(std::string_view name);

struct Constraints {
  std::optional<double> deadline_s;  // time-to-train at most this
  std::optional<double> budget_usd;  // cost at most this
};

// Throws InputError (exit 2) when the objective or a constraint needs what a target lacks:
// cost and --budget-usd need price_per_gpu_hour, --deadline-days and --budget-usd need
// training.tokens.
void checkObjectiveInputs(Objective objective, const Constraints& constraints, const std::vector<SweepTarget>& targets);

[[nodiscard]] double objectiveWeight(Objective objective, const SweepTarget& target);

// With --goodput (target.goodput set), the time to train with failures, checkpoints and
// restarts over the failure-free one at this iteration time (1 / goodput; infinite where the
// run makes no progress); 1 otherwise. Nearly constant per target: the checkpoint interval
// is a time, so only its rounding to whole iterations depends on the iteration time.
[[nodiscard]] double goodputFactor(const SweepTarget& target, double iteration_seconds);

// key = iteration time x objectiveWeight, x goodputFactor for time and cost (smaller is better).
[[nodiscard]] double objectiveKey(Objective objective, const SweepTarget& target, double iteration_seconds);

// Time to train training.tokens and its cost, from an iteration time (nullopt without
// tokens, or without a price for the cost); with --goodput, failures included.
[[nodiscard]] std::optional<double> timeToTrain(const SweepTarget& target, double iteration_seconds);
[[nodiscard]] std::optional<double> costOfTraining(const SweepTarget& target, double iteration_seconds);

}  // namespace trainsim::sweep
