#include "parallelism/op_profile.h"

#include <algorithm>
#include <map>

#include "parallelism/chunk_workload.h"
#include "parallelism/memory_model.h"
#include "parallelism/optimizer_step.h"
#include "parallelism/pass_work.h"

namespace trainsim::parallelism {

double OpProfile::total_s() const {
  double total = optimizer_s;
  for (const OpProfileRow& row : rows) total += row.total_s();
  return total;
}

OpProfile stageOpProfile(const Experiment& experiment, const OpTimer& timer, const IterationOptions& options,
                         int64_t stage) {
  const auto& plan = experiment.plan;
  OpProfile profile;
  profile.stage = stage;
  profile.microbatches = plan.microbatches(experiment.training);
  const auto microbatches = static_cast<double>(profile.microbatches);
  std::map<std::string, OpProfileRow> rows;
  for (int64_t chunk = 0; chunk < plan.virtual_stages; ++chunk) {
    for (const ChunkPart& part : chunkWorkloads(experiment, stage, chunk, options.flops)) {
      const double times = part.repeats * microbatches;
      for (const Op& op : part.workload.ops) {
        OpProfileRow& row = rows[op.name];
        row.name = op.name;
        row.kind = op.kind;
        const double forward = timer.seconds(op, PassKind::kForward);
        row.forward_s += times * forward;
        row.backward_s += times * timer.seconds(op, PassKind::kBackward);
        row.flops += times * (op.forward.flops + op.backward.flops);
        // What the builder's passes rerun (pass_work.h): full recompute every forward op of
        // the transformer layers, selective only their core attention, selective_op its share.
        const double rerun = rerunShare(op, recomputeOf(part, plan), plan.recompute_modules);
        row.recompute_s += times * rerun * forward;
        row.flops += times * rerun * op.forward.flops;
      }
    }
  }
  for (auto& [name, row] : rows) profile.rows.push_back(row);
  std::sort(profile.rows.begin(), profile.rows.end(), [](const OpProfileRow& a, const OpProfileRow& b) {
    if (a.total_s() != b.total_s()) return a.total_s() > b.total_s();
    return a.name < b.name;
  });
  const auto layers = plan.layersPerStage(experiment.model.layers);
  const StageParameters parameters =
      stageParameters(experiment.model, experiment.training, plan, stage, layers[static_cast<std::size_t>(stage)]);
  profile.optimizer_s = timer.memoryBoundSeconds(
      optimizerStepTraffic(experiment.training, plan, parameters.dense, parameters.expert, options.optimizer_step));
  return profile;
}

OpProfile busiestStageOpProfile(const Experiment& experiment, const OpTimer& timer, const IterationOptions& options) {
  OpProfile busiest = stageOpProfile(experiment, timer, options, 0);
  for (int64_t stage = 1; stage < experiment.plan.pp; ++stage) {
    OpProfile profile = stageOpProfile(experiment, timer, options, stage);
    if (profile.total_s() > busiest.total_s()) busiest = std::move(profile);
  }
  return busiest;
}

}  // namespace trainsim::parallelism
