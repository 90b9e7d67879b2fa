// --max-memory-gib of `simulate` and `collective`: the memory budget a run's estimate must
// fit (sim/memory_budget.h), checked before the cluster or any task is built.
#pragma once

#include <fmt/format.h>

#include <cmath>

#include <CLI/CLI.hpp>

#include "base/error.h"
#include "sim/memory_budget.h"

namespace trainsim::cli {

using sim::kMemoryBudgetOption;

inline void addMemoryBudgetOption(CLI::App& command, double& budget_GiB) {
  command
      .add_option(kMemoryBudgetOption, budget_GiB, "Refuse (exit 2) a run whose estimated memory exceeds this many GiB")
      ->capture_default_str();
}

// Refuses (exit 2) an estimate over the budget; a budget that is not a positive number too.
inline void requireWithinMemoryBudget(const sim::MemoryEstimate& estimate, double budget_GiB,
                                      const std::string& remedy) {
  if (!std::isfinite(budget_GiB) || budget_GiB <= 0.0) {
    throwInputError(kMemoryBudgetOption, "", fmt::format("expected a positive number of GiB, found {}", budget_GiB));
  }
  const Expected<bool> fits = sim::checkMemoryBudget(estimate, budget_GiB, kMemoryBudgetOption, remedy);
  if (!fits.ok()) throw InputError(fits.error());
}

}  // namespace trainsim::cli
