// `trainsim sweep`'s engine: enumerate the plans of every target, drop the invalid ones
// (plan_validation), prune those that do not fit (memory_model), estimate the rest with the
// analytical screen (iteration_estimate), event-simulate the promising ones, rank.
//
// Which plans are event-simulated (the screen rule):
//   Plans that fit are ordered by estimated key (objective.h), ties by enumeration order,
//   and simulated in rounds of kRoundSize. The ratio simulated / estimated iteration time
//   is the screen's error; plans of one structure (same target, tp, pp, cp, ep and ZeRO
//   stage: the same collectives over the same links) share most of it. A plan's optimistic
//   bound is its estimated key x rho_s x (1 - kStructureMargin), rho_s = the smallest ratio
//   seen in its structure, or, while its structure has no simulated plan, estimated key x
//   rho x (1 - kScreenMargin), rho = the smallest ratio over all simulated plans. A plan not
//   yet simulated is in play while that bound is below the key of the K-th best simulated
//   plan (always, while fewer than K simulated plans meet the constraints), and, with a
//   deadline or a budget, while its time-to-train and cost at that bound meet them. Each
//   round takes the plans in play with the smallest bounds, at most one per structure not
//   simulated yet (its result re-prices its siblings); the search stops when none is in
//   play (or at --max-simulations). A plan is left out only when it could reach the top K
//   only by beating its estimate by 5% more than every simulated plan of its structure did
//   (10% more than any simulated plan, if its structure has none).
//   --simulate-all simulates every plan that fits.
// The top K is taken from simulated plans only, so every plan shown is event-simulated.
// Rounds are fixed-size and every decision uses gathered results, so the set simulated,
// and every output byte, is the same for any thread count and any number of MPI ranks.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "parallelism/iteration_simulation.h"
#include "parallelism/memory_model.h"
#include "sim/memory_budget.h"
#include "sweep/objective.h"
#include "sweep/plan_enumerator.h"
#include "sweep/plan_space.h"
#include "sweep/process_group.h"
#include "sweep/sweep_target.h"

namespace trainsim::sweep {

inline constexpr std::size_t kRoundSize = 16;
// Margins on the screen's error: beyond the smallest ratio seen in the plan's own structure
// (plans of one structure differ in it by about 2% in GPT-3 175B sweeps), or over all plans
// while its structure has none simulated.
inline constexpr double kStructureMargin = 0.05;
inline constexpr double kScreenMargin = 0.10;

struct SweepSettings {
  Objective objective = Objective::kTime;
  Constraints constraints;
  std::size_t top = 10;             // K
  bool simulate_all = false;        // event-simulate every plan that fits
  std::size_t max_simulations = 0;  // 0: no cap
  int threads = 1;                  // per process
  // Communication and compute parameters (a calibration), and the simulation mode
  // (iteration.symmetric: one data-parallel replica), used for every simulated plan.
  parallelism::SimulationOptions simulation;
  // A plan whose simulation is estimated over this many GiB (parallelism/iteration_memory.h)
  // is not simulated: it is invalid, with the estimate as its reason. Per simulation, so a
  // sweep on T threads may hold T of them.
  double memory_budget_GiB = sim::kDefaultMemoryBudgetGiB;
};

// Worst first in the output: simulated plans rank, the others follow by status.
enum class PlanStatus : uint8_t {
  kSimulated,     // event-simulated, meets the constraints: ranked
  kOverDeadline,  // event-simulated, time-to-train beyond --deadline-days
  kOverBudget,    // event-simulated, cost beyond --budget-usd
  kScreenedOut,   // fits, but the screen rule left it out of the simulated set (reason says why)
  kPrunedMemory,  // does not fit in GPU memory (memory model), never simulated
  kInvalid,       // simulate would reject the plan (reason)
};
[[nodiscard]] std::string_view planStatusName(PlanStatus status);

struct PlanOutcome {
  PlanStatus status = PlanStatus::kInvalid;
  std::string reason;  // why it was dropped ("" for simulated plans)
  // Per-GPU memory of the peak stage (stages holds that one stage), for every valid plan.
  std::optional<parallelism::MemoryReport> memory;
  std::optional<double> estimated_iteration_time_s;    // the screen's, for plans that fit
  std::optional<parallelism::IterationResult> result;  // event-simulated plans; memory as above
  double key = 0.0;                                    // objective key (simulated, else estimated) for ordering
  bool pareto = false;  // on the time-to-train / cost Pareto front of the simulated plans
};

struct SweepCounts {
  std::size_t enumerated = 0;
  std::size_t invalid = 0;
  std::size_t pruned_memory = 0;
  std::size_t fitting = 0;  // screened
  std::size_t simulated = 0;
  std::size_t simulation_runs = 0;  // event simulations run (ZeRO-1/2 twins share one)
  std::size_t over_deadline = 0;
  std::size_t over_budget = 0;
  std::size_t screened_out = 0;
  std::size_t rounds = 0;
};

struct SweepResult {
  std::vector<SweepTarget> targets;
  std::vector<PlanCandidate> candidates;  // enumeration order
  std::vector<PlanOutcome> outcomes;      // by candidate
  std::vector<std::size_t> order;         // candidate indices, best first
  SweepCounts counts;
  std::optional<double> screen_ratio_min;  // rho: min simulated / estimated
  std::optional<double> screen_ratio_max;
  bool hit_max_simulations = false;
};

// Progress of the phase under way, on the calling thread (rank 0 only is worth showing).
using ProgressCallback = std::function<void(std::string_view phase, std::size_t done, std::size_t total)>;

// Runs the whole sweep; every process of `group` must call it with the same arguments and
// gets the same result. Throws InputError for an empty space (no valid plan) or inputs the
// objective needs and lacks.
[[nodiscard]] SweepResult runSweep(std::vector<SweepTarget> targets, const PlanSpace& space,
                                   const SweepSettings& settings, ProcessGroup& group,
                                   const ProgressCallback& progress = {});

}  // namespace trainsim::sweep
