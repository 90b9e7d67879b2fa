#include "sweep/sweep_csv.h"

#include <fmt/format.h>

#include <optional>
#include <string>

#include "parallelism/parallel_plan.h"

namespace trainsim::sweep {
namespace {

// RFC 4180: quoted when it holds a comma, a quote or a line break; quotes doubled.
std::string csvField(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

// Shortest text that reads back to the same double; empty when absent.
std::string number(const std::optional<double>& value) { return value ? fmt::format("{}", *value) : std::string(); }

}  // namespace

void writeSweepCsv(std::ostream& out, const SweepResult& sweep) {
  out << "rank,status,cluster,gpus,tp,pp,dp,cp,ep,virtual_stages,micro_batch_size,microbatches,sequence_parallel,zero,"
         "recompute,estimated_iteration_time_s,iteration_time_s,tokens_per_s,mfu,peak_memory_bytes,capacity_bytes,"
         "time_to_train_s,gpu_hours,cost_usd,pareto,reason,first_stage_layers,last_stage_layers,etp,"
         "recompute_num_layers,schedule\n";
  std::size_t rank = 0;
  for (std::size_t candidate : sweep.order) {
    const PlanCandidate& plan_candidate = sweep.candidates[candidate];
    const PlanOutcome& outcome = sweep.outcomes[candidate];
    const SweepTarget& target = sweep.targets[plan_candidate.target];
    const auto& plan = plan_candidate.plan;
    const auto& result = outcome.result;
    const int64_t microbatches =
        target.experiment.training.global_batch_size / (plan.dp * plan_candidate.micro_batch_size);
    std::string row = outcome.status == PlanStatus::kSimulated ? std::to_string(++rank) : "";
    row += "," + std::string(planStatusName(outcome.status)) + "," + csvField(target.cluster_label);
    row +=
        fmt::format(",{},{},{},{},{},{},{},{},{},{},{},{}", plan.gpus, plan.tp, plan.pp, plan.dp, plan.cp, plan.ep,
                    plan.virtual_stages, plan_candidate.micro_batch_size, microbatches,
                    plan.sequence_parallel ? "true" : "false", plan.zero, parallelism::recomputeName(plan.recompute));
    row += "," + number(outcome.estimated_iteration_time_s);
    row += "," + number(result ? std::optional(result->iteration_time_s) : std::nullopt);
    row += "," + number(result ? std::optional(result->tokens_per_s) : std::nullopt);
    row += "," + number(result ? std::optional(result->mfu) : std::nullopt);
    row += "," + (outcome.memory ? fmt::format("{:.0f}", outcome.memory->peakBytes()) : std::string());
    row += "," + (outcome.memory ? fmt::format("{:.0f}", outcome.memory->capacity_bytes) : std::string());
    row += "," + number(result ? result->time_to_train_s : std::nullopt);
    row += "," + number(result ? result->gpu_hours : std::nullopt);
    row += "," + number(result ? result->cost_usd : std::nullopt);
    row += std::string(",") + (outcome.pareto ? "true" : "false");
    row += "," + csvField(outcome.reason);
    // Set for an uneven pipeline split only (appended: the columns before keep their places).
    row += "," + (plan.first_stage_layers ? std::to_string(*plan.first_stage_layers) : std::string());
    row += "," + (plan.last_stage_layers ? std::to_string(*plan.last_stage_layers) : std::string());
    row += "," + std::to_string(plan.expertTensorParallel());
    // Set for full recomputation of some of each chunk's layers only.
    row += "," + (plan.recompute_num_layers ? std::to_string(*plan.recompute_num_layers) : std::string());
    row += "," + std::string(parallelism::scheduleName(plan.schedule));
    out << row << "\n";
  }
}

}  // namespace trainsim::sweep
