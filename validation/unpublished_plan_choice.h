// The plan settings a suite row's source does not publish: micro-batch size and model chunks
// per pipeline stage (interleaving).
//
// A published benchmark figure is the throughput of a run its authors tuned, and these two
// settings are what such a run is tuned by once the parallel sizes are set: a larger
// micro-batch gives longer GEMMs and fewer, longer passes to hide the data-parallel
// reductions under, a smaller one a shorter pipeline bubble and less activation memory; more
// model chunks a shorter bubble for more pipeline sends. Where a source gives the rest of
// the plan but not these, the suite runs the row at what its authors would have picked by
// the same trade-off: of the micro-batch sizes that are powers of two dividing the
// per-replica batch (global batch / dp), and of the chunk counts that divide the layers per
// stage, the pair whose simulated throughput is highest among the valid plans that fit in
// the GPU's memory (ties: the smaller micro-batch, then fewer chunks). A setting the source
// publishes stays as published. The published figure takes no part in the choice.
//
// The precedent is the same team's SC21 runs, whose scripts are published
// (NVIDIA/Megatron-LM examples/academic_paper_scripts/sc21/run_table_1.sh): one micro-batch
// per replica where the model fits without pipelining, down to micro-batch 1 and interleaved
// chunks as the models grow and the pipeline deepens.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/config_node.h"
#include "base/config_paths.h"
#include "base/expected.h"
#include "parallelism/experiment.h"
#include "parallelism/iteration_simulation.h"
#include "validation/training_rows.h"

namespace trainsim::validation {

// One candidate setting of the unpublished knobs.
struct PlanSetting {
  int64_t micro_batch_size = 1;
  int64_t virtual_stages = 1;
  bool operator==(const PlanSetting&) const = default;
};

struct PlanChoice {
  PlanSetting chosen;
  // The valid candidate settings that fit in memory, in the order tried (micro-batch size,
  // then chunks, increasing); each was simulated.
  std::vector<PlanSetting> fitting;
  // The simulated iteration at the chosen setting.
  parallelism::IterationResult result;
};

// Whether `row` leaves any plan setting to the suite.
[[nodiscard]] bool hasUnpublishedPlanSettings(const TrainingRow& row);

// The candidate settings of `row`, whose experiment as its file gives it is `experiment`: the
// experiment's values where the row says they are published, else the micro-batch sizes that
// are powers of two dividing global batch / dp, and the chunk counts dividing layers / pp (1
// without pipelining). Increasing micro-batch size, then chunks.
[[nodiscard]] std::vector<PlanSetting> planCandidates(const TrainingRow& row,
                                                      const parallelism::Experiment& experiment);

// The overrides that put a row's experiment at `setting` (training.micro_batch_size,
// parallelism.virtual_stages), as `--set` would.
[[nodiscard]] std::vector<Override> planSettingOverrides(const PlanSetting& setting);

// Simulates `row` at every candidate that loads (a valid plan) and fits in memory, in
// symmetric mode (one data-parallel replica: fast, and the same figure for these plans'
// identical replicas), and returns the fastest (highest tokens per second; the earlier
// candidate on a tie) simulated with `options`. When none fits, the first candidate that
// loads (its result says it does not fit). Errors when no candidate loads.
[[nodiscard]] Expected<PlanChoice> chooseUnpublishedPlan(const TrainingRow& row, const ConfigPaths& paths,
                                                         const parallelism::SimulationOptions& options);

// "micro-batch 4, 1 chunk" style text for a setting.
[[nodiscard]] std::string describePlanSetting(const PlanSetting& setting);

}  // namespace trainsim::validation
