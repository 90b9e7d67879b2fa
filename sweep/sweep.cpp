#include "sweep/sweep.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <set>
#include <tuple>

#include "base/error.h"
#include "base/units.h"
#include "parallelism/iteration_memory.h"
#include "sweep/iteration_estimate.h"
#include "sweep/memory_gate.h"
#include "sweep/parallel_for.h"
#include "sweep/pareto_front.h"

namespace trainsim::sweep {
namespace {

using parallelism::Experiment;
using parallelism::IterationResult;
using parallelism::MemoryReport;
using parallelism::StageMemory;

constexpr double kNoValue = std::numeric_limits<double>::quiet_NaN();

// Results cross threads and MPI ranks as fixed-size records of doubles; the single-process
// run goes through the same encoding, so both print the same bytes.
constexpr std::size_t kMemoryRecordSize = 14;
constexpr std::size_t kSimulationRecordSize = 21;
// A simulation record's first value: 1 simulated, 0 rejected by the simulator, this when the
// plan's simulation was estimated over the memory budget (its estimate in the second value).
constexpr double kOverMemoryBudget = 2.0;
constexpr double kBytesPerGiB = 1024.0 * 1024.0 * 1024.0;

void encodeMemory(const MemoryReport& report, double* record) {
  const StageMemory& peak = report.peak();
  const double values[kMemoryRecordSize] = {static_cast<double>(peak.stage),
                                            static_cast<double>(peak.layers),
                                            static_cast<double>(peak.in_flight),
                                            peak.activation_per_layer,
                                            peak.weights,
                                            peak.gradients,
                                            peak.optimizer,
                                            peak.activations,
                                            peak.communication_buffers,
                                            peak.runtime,
                                            peak.allocator_overhead,
                                            report.capacity_bytes,
                                            peak.parameters.total(),
                                            kNoValue};  // [13]: the screen's estimate, when it fits
  std::copy(std::begin(values), std::end(values), record);
}

MemoryReport decodeMemory(const double* record) {
  StageMemory peak;
  peak.stage = static_cast<int64_t>(record[0]);
  peak.layers = static_cast<int64_t>(record[1]);
  peak.in_flight = static_cast<int64_t>(record[2]);
  peak.activation_per_layer = record[3];
  peak.weights = record[4];
  peak.gradients = record[5];
  peak.optimizer = record[6];
  peak.activations = record[7];
  peak.communication_buffers = record[8];
  peak.runtime = record[9];
  peak.allocator_overhead = record[10];
  peak.parameters.dense = record[12];
  MemoryReport report;
  report.stages = {peak};
  report.peak_stage = 0;
  report.capacity_bytes = record[11];
  return report;
}

double orNan(const std::optional<double>& value) { return value ? *value : kNoValue; }
std::optional<double> fromNan(double value) { return std::isnan(value) ? std::nullopt : std::optional<double>(value); }

void encodeResult(const IterationResult& result, double* record) {
  const auto& b = result.breakdown;
  const double values[kSimulationRecordSize] = {1.0,
                                                result.iteration_time_s,
                                                result.tokens_per_s,
                                                result.model_flops,
                                                result.hardware_flops,
                                                result.tflops_per_gpu,
                                                result.hardware_tflops_per_gpu,
                                                result.mfu,
                                                result.hfu,
                                                orNan(result.time_to_train_s),
                                                orNan(result.gpu_hours),
                                                orNan(result.cost_usd),
                                                b.compute,
                                                b.tp_comm_exposed,
                                                b.dp_comm_exposed,
                                                b.pp_comm_exposed,
                                                b.pipeline_bubble,
                                                static_cast<double>(result.microbatches),
                                                static_cast<double>(result.tasks),
                                                static_cast<double>(result.events),
                                                b.host_dispatch_exposed};
  std::copy(std::begin(values), std::end(values), record);
}

IterationResult decodeResult(const double* record, const MemoryReport& memory) {
  IterationResult result;
  result.iteration_time_s = record[1];
  result.tokens_per_s = record[2];
  result.model_flops = record[3];
  result.hardware_flops = record[4];
  result.tflops_per_gpu = record[5];
  result.hardware_tflops_per_gpu = record[6];
  result.mfu = record[7];
  result.hfu = record[8];
  result.time_to_train_s = fromNan(record[9]);
  result.gpu_hours = fromNan(record[10]);
  result.cost_usd = fromNan(record[11]);
  result.breakdown = {record[12], record[13], record[14], record[15], record[16]};
  result.microbatches = static_cast<int64_t>(record[17]);
  result.tasks = static_cast<uint64_t>(record[18]);
  result.events = static_cast<uint64_t>(record[19]);
  result.breakdown.host_dispatch_exposed = record[20];
  result.memory = memory;
  return result;
}

// Scratch state of one worker thread: an experiment and a screen per target, made on first use.
struct WorkerState {
  std::vector<std::optional<Experiment>> experiments;
  std::vector<std::unique_ptr<IterationEstimator>> estimators;
};

class Evaluator {
 public:
  Evaluator(const std::vector<SweepTarget>& targets, const std::vector<PlanCandidate>& candidates,
            const SweepSettings& settings, ProcessGroup& group, const ProgressCallback& progress)
      : targets_(targets), candidates_(candidates), settings_(settings), group_(group), progress_(progress) {
    states_.resize(static_cast<std::size_t>(std::max(settings.threads, 1)));
    for (auto& state : states_) {
      state.experiments.resize(targets.size());
      state.estimators.resize(targets.size());
    }
    memory_options_ = parallelism::memoryOptions(settings.simulation);  // as simulateIteration sizes memory
  }

  // Memory of every listed candidate, and the screen's estimate for those that fit.
  std::vector<double> screen(const std::vector<std::size_t>& items) {
    return distributedMap("screen", items, kMemoryRecordSize, [&](std::size_t candidate, int worker, double* record) {
      Experiment& experiment = experimentFor(candidate, worker);
      const MemoryReport report = parallelism::estimateMemory(experiment, memory_options_);
      encodeMemory(report, record);
      if (report.fits()) record[13] = estimatorFor(candidate, worker).iterationSeconds(experiment);
    });
  }

  std::vector<double> simulate(const std::vector<std::size_t>& items) {
    return distributedMap(
        "simulate", items, kSimulationRecordSize, [&](std::size_t candidate, int worker, double* record) {
          Experiment& experiment = experimentFor(candidate, worker);
          const auto estimate = parallelism::estimateIterationMemory(experiment, settings_.simulation);
          auto overBudget = [&](double bytes) {
            std::fill(record, record + kSimulationRecordSize, 0.0);
            record[0] = kOverMemoryBudget;
            record[1] = bytes;
          };
          if (estimate && estimate->bytes() > settings_.memory_budget_GiB * kBytesPerGiB)
            return overBudget(estimate->bytes());
          const MemoryGate::Hold hold(memory_gate_, estimate ? estimate->bytes() : 0.0);
          parallelism::SimulationOptions options = settings_.simulation;
          options.memory_budget_GiB = settings_.memory_budget_GiB;
          const auto result = parallelism::simulateIteration(experiment, options);
          if (result) {
            encodeResult(*result, record);
          } else if (result.error().where == sim::kMemoryBudgetOption) {
            // The steady state did not extrapolate and every micro-batch is over the budget.
            options.every_microbatch = true;
            const auto full = parallelism::estimateIterationMemory(experiment, options);
            overBudget(full ? full->bytes() : 0.0);
          } else {
            // A checked plan the simulator rejects is a bug: keep it visible.
            std::fill(record, record + kSimulationRecordSize, 0.0);
            spdlog::error("sweep: the simulation rejected a plan: {}", result.error().toString());
          }
        });
  }

 private:
  Experiment& experimentFor(std::size_t candidate_index, int worker) {
    const PlanCandidate& candidate = candidates_[candidate_index];
    auto& slot = states_[static_cast<std::size_t>(worker)].experiments[candidate.target];
    if (!slot) slot.emplace(targets_[candidate.target].experiment);
    applyCandidate(*slot, candidate);
    return *slot;
  }

  IterationEstimator& estimatorFor(std::size_t candidate_index, int worker) {
    const std::size_t target = candidates_[candidate_index].target;
    auto& slot = states_[static_cast<std::size_t>(worker)].estimators[target];
    if (!slot) {
      const auto& experiment = targets_[target].experiment;
      slot = std::make_unique<IterationEstimator>(experiment.cluster, experiment.training.precision,
                                                  parallelism::withHostDispatch(experiment, settings_.simulation));
    }
    return *slot;
  }

  // Runs `fill(candidate, worker, record)` for every item, items split over the processes
  // (item i on rank i mod size) and over threads; every process gets all records, in item order.
  template <class Fill>
  std::vector<double> distributedMap(std::string_view phase, const std::vector<std::size_t>& items,
                                     std::size_t record_size, Fill&& fill) {
    const auto ranks = static_cast<std::size_t>(group_.size());
    const auto rank = static_cast<std::size_t>(group_.rank());
    const std::size_t n = items.size();
    auto localCount = [&](std::size_t r) { return n > r ? (n - r + ranks - 1) / ranks : 0; };
    const std::size_t local_items = localCount(rank);
    std::vector<double> local(local_items * record_size, kNoValue);
    auto report = [&](std::size_t done) {
      if (progress_ && rank == 0) progress_(phase, std::min(n, done * ranks), n);
    };
    parallelFor(
        local_items, settings_.threads,
        [&](std::size_t i, int worker) { fill(items[rank + i * ranks], worker, &local[i * record_size]); }, report);
    const std::vector<double> gathered = group_.allGather(local);
    std::vector<double> records(n * record_size);
    std::size_t offset = 0;
    for (std::size_t r = 0; r < ranks; ++r) {
      for (std::size_t i = 0; i < localCount(r); ++i) {
        std::copy_n(gathered.begin() + static_cast<std::ptrdiff_t>(offset + i * record_size), record_size,
                    records.begin() + static_cast<std::ptrdiff_t>((r + i * ranks) * record_size));
      }
      offset += localCount(r) * record_size;
    }
    return records;
  }

  const std::vector<SweepTarget>& targets_;
  const std::vector<PlanCandidate>& candidates_;
  const SweepSettings& settings_;
  ProcessGroup& group_;
  const ProgressCallback& progress_;
  parallelism::MemoryOptions memory_options_;
  std::vector<WorkerState> states_;
  MemoryGate memory_gate_{settings_.memory_budget_GiB * kBytesPerGiB};
};

// What decides a plan's simulated timeline. ZeRO-1 and ZeRO-2 run the same collectives
// (gradient reduce-scatter, parameter all-gather; parallelism/iteration_builder_data_parallel.cpp) and
// differ only in memory, which the record does not hold: they share one simulation.
using TimingKey = std::tuple<std::size_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, bool,
                             int, int, int64_t, int>;
TimingKey timingOf(const PlanCandidate& candidate) {
  const auto& plan = candidate.plan;
  const int zero = plan.zero == 2 ? 1 : static_cast<int>(plan.zero);
  return {candidate.target,
          plan.tp,
          plan.pp,
          plan.dp,
          plan.cp,
          plan.ep,
          plan.expertTensorParallel(),
          plan.virtual_stages,
          candidate.micro_batch_size,
          plan.sequence_parallel,
          zero,
          static_cast<int>(plan.recompute),
          plan.recompute_num_layers.value_or(0),
          static_cast<int>(plan.schedule)};
}

// Plans whose collectives run over the same groups: the same target and degrees, and the
// same data-parallel collectives (ZeRO stage).
using StructureKey = std::tuple<std::size_t, int64_t, int64_t, int64_t, int64_t, int>;
StructureKey structureOf(const PlanCandidate& candidate) {
  const auto& plan = candidate.plan;
  return {candidate.target, plan.tp, plan.pp, plan.cp, plan.ep, plan.zero};
}

std::string gib(double bytes) { return fmt::format("{:.1f} GiB", bytes / units::kGiB); }

[[noreturn]] void failEmptySpace(const std::vector<SweepTarget>& targets,
                                 const std::vector<PlanCandidate>& candidates) {
  std::string gpus;
  for (const auto& target : targets) gpus += (gpus.empty() ? "" : ", ") + std::to_string(target.gpus);
  if (candidates.empty()) {
    throwInputError("sweep", "",
                    "no plan to evaluate: with the --vary/--fix given, no tp x pp x cp divides the GPU count (" + gpus +
                        ") with a dp allowed");
  }
  const auto& issue = *candidates.front().issue;
  throwInputError("sweep", "",
                  "none of the " + std::to_string(candidates.size()) + " plans is valid; the first one fails with " +
                      issue.key_path + ": " + issue.message);
}

// The objective's key of a candidate at an iteration time (objectiveKey: the time, its
// target's price for cost, ..., with --goodput the failures).
double keyOf(const SweepResult& sweep, const SweepSettings& settings, std::size_t candidate, double iteration_seconds) {
  return objectiveKey(settings.objective, sweep.targets[sweep.candidates[candidate].target], iteration_seconds);
}

// Marks the plans the plan check rejects (with its issue as the reason); the valid ones.
std::vector<std::size_t> markInvalidPlans(SweepResult& sweep) {
  std::vector<std::size_t> valid;
  for (std::size_t i = 0; i < sweep.candidates.size(); ++i) {
    const PlanCandidate& candidate = sweep.candidates[i];
    if (candidate.valid()) {
      valid.push_back(i);
      continue;
    }
    sweep.outcomes[i].status = PlanStatus::kInvalid;
    sweep.outcomes[i].reason = candidate.issue->key_path + ": " + candidate.issue->message;
    ++sweep.counts.invalid;
  }
  return valid;
}

// Step 1: the memory of every valid plan, and the screen's estimate of those that fit; the
// fitting ones, best estimate first.
std::vector<std::size_t> screenValidPlans(SweepResult& sweep, const std::vector<std::size_t>& valid,
                                          const SweepSettings& settings, Evaluator& evaluator) {
  const std::vector<double> screened = evaluator.screen(valid);
  std::vector<std::size_t> fitting;
  for (std::size_t v = 0; v < valid.size(); ++v) {
    const double* record = &screened[v * kMemoryRecordSize];
    PlanOutcome& outcome = sweep.outcomes[valid[v]];
    outcome.memory = decodeMemory(record);
    if (!outcome.memory->fits()) {
      outcome.status = PlanStatus::kPrunedMemory;
      outcome.reason =
          fmt::format("needs {} per GPU (pipeline stage {}), the GPU has {}", gib(outcome.memory->peakBytes()),
                      outcome.memory->peak().stage, gib(outcome.memory->capacity_bytes));
      outcome.key = outcome.memory->peakBytes();
      ++sweep.counts.pruned_memory;
      continue;
    }
    outcome.estimated_iteration_time_s = record[13];
    outcome.key = keyOf(sweep, settings, valid[v], record[13]);
    outcome.status = PlanStatus::kScreenedOut;
    fitting.push_back(valid[v]);
  }
  sweep.counts.fitting = fitting.size();
  std::stable_sort(fitting.begin(), fitting.end(),
                   [&](std::size_t a, std::size_t b) { return sweep.outcomes[a].key < sweep.outcomes[b].key; });
  return fitting;
}

// Step 2: event simulation in rounds, best estimates first, while plans are in play
// (sweep.h): a plan stays in play while its screen estimate, scaled by the smallest
// simulated / estimated ratio seen (of its structure where one of its siblings ran), could
// still reach the top and meet the constraints.
class SimulationRounds {
 public:
  SimulationRounds(SweepResult& sweep, const SweepSettings& settings, Evaluator& evaluator,
                   const std::vector<std::size_t>& fitting)
      : sweep_(sweep),
        settings_(settings),
        evaluator_(evaluator),
        fitting_(fitting),
        simulated_(sweep.candidates.size(), false) {}

  // Simulates round after round until no plan is in play or --max-simulations is reached.
  void run() {
    auto& counts = sweep_.counts;
    while (true) {
      if (settings_.max_simulations > 0 && counts.simulated >= settings_.max_simulations) {
        sweep_.hit_max_simulations = true;
        break;
      }
      std::size_t room = kRoundSize;
      if (settings_.max_simulations > 0) room = std::min(room, settings_.max_simulations - counts.simulated);
      const std::vector<std::size_t> round = nextRound(room);
      if (round.empty()) break;
      ++counts.rounds;
      simulateRound(round);
    }
    sweep_.screen_ratio_min = ratio_min_;
    sweep_.screen_ratio_max = ratio_max_;
  }

  // Why each fitting plan that never ran was left out.
  void markScreenedOut() {
    const double kth = kthBest();
    for (std::size_t candidate : fitting_) {
      if (simulated_[candidate]) continue;
      ++sweep_.counts.screened_out;
      std::string reason = sweep_.hit_max_simulations ? "" : outOfPlay(candidate, kth);
      if (reason.empty())
        reason = "not simulated: --max-simulations " + std::to_string(settings_.max_simulations) + " reached";
      sweep_.outcomes[candidate].reason = std::move(reason);
    }
  }

 private:
  // The key the top-th best simulated plan meeting the constraints has (infinite while fewer ran).
  [[nodiscard]] double kthBest() const {
    if (ranked_keys_.size() < settings_.top) return std::numeric_limits<double>::infinity();
    std::vector<double> keys = ranked_keys_;
    std::nth_element(keys.begin(), keys.begin() + static_cast<std::ptrdiff_t>(settings_.top - 1), keys.end());
    return keys[settings_.top - 1];
  }

  // The smallest simulated / estimated ratio this plan may have, margin included.
  [[nodiscard]] double optimisticFactor(std::size_t candidate) const {
    const auto known = structure_ratio_.find(structureOf(sweep_.candidates[candidate]));
    if (known != structure_ratio_.end()) return known->second * (1.0 - kStructureMargin);
    return *ratio_min_ * (1.0 - kScreenMargin);
  }

  // Why a plan is not in play (empty: it is), at its optimistic bound.
  [[nodiscard]] std::string outOfPlay(std::size_t candidate, double kth) const {
    if (settings_.simulate_all || !ratio_min_) return "";
    const PlanOutcome& outcome = sweep_.outcomes[candidate];
    const double optimistic = optimisticFactor(candidate);
    const double estimate = *outcome.estimated_iteration_time_s;
    const std::string bound = fmt::format("screen estimate {:.4g} s per iteration, at best {:.4g} s (x{:.3f})",
                                          estimate, estimate * optimistic, optimistic);
    if (outcome.key * optimistic >= kth) return bound + ": cannot reach the top " + std::to_string(settings_.top);
    const SweepTarget& target = sweep_.targets[sweep_.candidates[candidate].target];
    const auto& limits = settings_.constraints;
    if (limits.deadline_s && timeToTrain(target, estimate * optimistic).value_or(0.0) > *limits.deadline_s) {
      return bound + ": misses the deadline";
    }
    if (limits.budget_usd && costOfTraining(target, estimate * optimistic).value_or(0.0) > *limits.budget_usd) {
      return bound + ": over the budget";
    }
    return "";
  }

  // Up to `room` plans in play, by optimistic key, at most one per structure not simulated
  // yet (its result re-prices its siblings).
  [[nodiscard]] std::vector<std::size_t> nextRound(std::size_t room) const {
    const double kth = kthBest();
    // The global ratio is the smallest of all, so once it rules a plan out by key it rules
    // out every later one in estimate order.
    std::vector<std::pair<double, std::size_t>> in_play;
    for (std::size_t candidate : fitting_) {
      if (simulated_[candidate]) continue;
      const double key = sweep_.outcomes[candidate].key;
      if (ratio_min_ && !settings_.simulate_all && key * *ratio_min_ * (1.0 - kScreenMargin) >= kth) break;
      if (!outOfPlay(candidate, kth).empty()) continue;
      in_play.emplace_back(ratio_min_ ? key * optimisticFactor(candidate) : key, candidate);
    }
    std::stable_sort(in_play.begin(), in_play.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<std::size_t> round;
    std::set<StructureKey> unknown_in_round;
    for (const auto& [bound, candidate] : in_play) {
      if (round.size() == room) break;
      const StructureKey structure = structureOf(sweep_.candidates[candidate]);
      if (!structure_ratio_.contains(structure) && !unknown_in_round.insert(structure).second) continue;
      round.push_back(candidate);
    }
    return round;
  }

  // Simulates the round's plans (those that run the same events share one simulation,
  // timingOf) and records each result.
  void simulateRound(const std::vector<std::size_t>& round) {
    const auto& candidates = sweep_.candidates;
    std::vector<std::size_t> to_run;
    std::set<TimingKey> in_run;
    for (std::size_t candidate : round) {
      const TimingKey timing = timingOf(candidates[candidate]);
      if (!timing_records_.contains(timing) && in_run.insert(timing).second) to_run.push_back(candidate);
    }
    const std::vector<double> records = evaluator_.simulate(to_run);
    sweep_.counts.simulation_runs += to_run.size();
    for (std::size_t i = 0; i < to_run.size(); ++i) {
      timing_records_.emplace(
          timingOf(candidates[to_run[i]]),
          std::vector<double>(records.begin() + static_cast<std::ptrdiff_t>(i * kSimulationRecordSize),
                              records.begin() + static_cast<std::ptrdiff_t>((i + 1) * kSimulationRecordSize)));
    }
    for (std::size_t candidate : round) record(candidate, timing_records_.at(timingOf(candidates[candidate])).data());
  }

  // One simulated plan: its result, the screen's ratios it teaches, and its status against
  // the constraints.
  void record(std::size_t candidate, const double* record) {
    PlanOutcome& outcome = sweep_.outcomes[candidate];
    auto& counts = sweep_.counts;
    simulated_[candidate] = true;
    ++counts.simulated;
    if (record[0] == kOverMemoryBudget) {
      outcome.status = PlanStatus::kInvalid;
      outcome.reason = fmt::format("its simulation would need about {:.1f} GiB (estimated), over --max-memory-gib {:g}",
                                   record[1] / kBytesPerGiB, settings_.memory_budget_GiB);
      return;
    }
    if (record[0] != 1.0) {
      outcome.status = PlanStatus::kInvalid;
      outcome.reason = "the simulator rejected the plan (see stderr)";
      return;
    }
    outcome.result = decodeResult(record, *outcome.memory);
    const IterationResult& result = *outcome.result;
    const double ratio = result.iteration_time_s / *outcome.estimated_iteration_time_s;
    ratio_min_ = std::min(ratio_min_.value_or(ratio), ratio);
    ratio_max_ = std::max(ratio_max_.value_or(ratio), ratio);
    const StructureKey structure = structureOf(sweep_.candidates[candidate]);
    const auto known = structure_ratio_.find(structure);
    structure_ratio_[structure] = known == structure_ratio_.end() ? ratio : std::min(known->second, ratio);
    outcome.key = keyOf(sweep_, settings_, candidate, result.iteration_time_s);
    const auto& limits = settings_.constraints;
    // With --goodput, the time and cost with failures; else the simulation's own figures.
    const SweepTarget& target = sweep_.targets[sweep_.candidates[candidate].target];
    const auto time_to_train = target.goodput ? timeToTrain(target, result.iteration_time_s) : result.time_to_train_s;
    const auto cost = target.goodput ? costOfTraining(target, result.iteration_time_s) : result.cost_usd;
    if (limits.deadline_s && time_to_train && *time_to_train > *limits.deadline_s) {
      outcome.status = PlanStatus::kOverDeadline;
      outcome.reason = fmt::format("time to train {:.1f} days > deadline {:.1f} days", *time_to_train / 86400.0,
                                   *limits.deadline_s / 86400.0);
      ++counts.over_deadline;
    } else if (limits.budget_usd && cost && *cost > *limits.budget_usd) {
      outcome.status = PlanStatus::kOverBudget;
      outcome.reason = fmt::format("cost ${:.0f} > budget ${:.0f}", *cost, *limits.budget_usd);
      ++counts.over_budget;
    } else {
      outcome.status = PlanStatus::kSimulated;
      outcome.reason.clear();
      ranked_keys_.push_back(outcome.key);
    }
  }

  SweepResult& sweep_;
  const SweepSettings& settings_;
  Evaluator& evaluator_;
  const std::vector<std::size_t>& fitting_;
  std::vector<bool> simulated_;
  std::map<TimingKey, std::vector<double>> timing_records_;  // simulation records by timing
  std::vector<double> ranked_keys_;                          // keys of simulated plans meeting the constraints
  std::optional<double> ratio_min_;
  std::optional<double> ratio_max_;
  // The screen's error is shared by plans of the same degrees (their collectives meet the
  // same links): simulated / estimated, smallest seen, per structure.
  std::map<StructureKey, double> structure_ratio_;
};

// Step 3, the output order: by status, then key (objective; estimate; peak memory), then
// enumeration.
void orderOutcomes(SweepResult& sweep) {
  const auto& outcomes = sweep.outcomes;
  sweep.order.resize(sweep.candidates.size());
  std::iota(sweep.order.begin(), sweep.order.end(), std::size_t{0});
  std::stable_sort(sweep.order.begin(), sweep.order.end(), [&](std::size_t a, std::size_t b) {
    const PlanOutcome& x = outcomes[a];
    const PlanOutcome& y = outcomes[b];
    if (x.status != y.status) return x.status < y.status;
    if (x.status == PlanStatus::kInvalid) return false;
    return x.key < y.key;
  });
}

}  // namespace

std::string_view planStatusName(PlanStatus status) {
  switch (status) {
    case PlanStatus::kSimulated: return "simulated";
    case PlanStatus::kOverDeadline: return "over_deadline";
    case PlanStatus::kOverBudget: return "over_budget";
    case PlanStatus::kScreenedOut: return "screened_out";
    case PlanStatus::kPrunedMemory: return "pruned_memory";
    case PlanStatus::kInvalid: return "invalid";
  }
  return "unknown";
}

SweepResult runSweep(std::vector<SweepTarget> targets, const PlanSpace& space, const SweepSettings& settings,
                     ProcessGroup& group, const ProgressCallback& progress) {
  checkObjectiveInputs(settings.objective, settings.constraints, targets);
  SweepResult sweep;
  sweep.targets = std::move(targets);
  sweep.candidates = enumeratePlans(sweep.targets, space);
  sweep.outcomes.resize(sweep.candidates.size());
  sweep.counts.enumerated = sweep.candidates.size();
  const std::vector<std::size_t> valid = markInvalidPlans(sweep);
  if (valid.empty()) failEmptySpace(sweep.targets, sweep.candidates);

  Evaluator evaluator(sweep.targets, sweep.candidates, settings, group, progress);
  const std::vector<std::size_t> fitting = screenValidPlans(sweep, valid, settings, evaluator);
  SimulationRounds rounds(sweep, settings, evaluator, fitting);
  rounds.run();
  rounds.markScreenedOut();
  markParetoFront(sweep);
  orderOutcomes(sweep);
  return sweep;
}

}  // namespace trainsim::sweep
