#include "sweep/plan_enumerator.h"

#include <algorithm>

namespace trainsim::sweep {
namespace {

using parallelism::ParallelPlan;
using parallelism::Recompute;

// The uneven split a sweep gives a pp that does not divide the layers: every middle stage
// holds ceil(layers / pp) layers and the first and last stages share the rest, the last
// taking the smaller half (it also runs the output layer and the loss). Llama 3 405B's
// 7 + 14 x 8 + 7 over 16 stages is this split (Dubey et al. 2024, arXiv:2407.21783, section
// 3.3.2). None when the ends would be left without a layer.
struct StageSplit {
  int64_t first = 0;
  int64_t last = 0;
  int64_t middle = 0;  // layers of each middle stage (of the first stage when pp = 2)
};
// `parts` pieces of `layers` as above; none when the ends would share fewer than `min_ends`.
std::optional<StageSplit> splitWithEnds(int64_t layers, int64_t parts, int64_t min_ends) {
  if (parts < 2 || layers % parts == 0) return std::nullopt;
  const int64_t middle = (layers + parts - 1) / parts;
  const int64_t ends = layers - (parts - 2) * middle;
  if (ends < min_ends) return std::nullopt;
  const int64_t last = ends / 2;
  return StageSplit{ends - last, last, parts == 2 ? ends - last : middle};
}
std::optional<StageSplit> unevenSplit(int64_t layers, int64_t pp) { return splitWithEnds(layers, pp, 2); }

// The split a V placement (zbv, dualpipev) gets when its 2 pp model chunks do not divide the
// layers: the rule above over the chunks, the two end chunks (both on the first GPU, beside the
// embedding and the loss) possibly empty. Qi et al.'s ZB-V runs are such splits
// (arXiv:2401.10241 §6: 30 layers over 32 chunks as 0 + 30 x 1 + 0).
std::optional<StageSplit> vSplit(int64_t layers, int64_t pp) {
  return pp < 2 ? std::nullopt : splitWithEnds(layers, 2 * pp, 0);
}

// Chunks per stage an uneven split allows: divisors of the middle stages' layers that leave
// every chunk of the shorter end stages a layer (checkPlan's rule).
std::vector<int64_t> unevenChunks(const StageSplit& split) {
  std::vector<int64_t> chunks;
  for (int64_t v : divisorsOf(split.middle)) {
    if (v <= std::min(split.first, split.last)) chunks.push_back(v);
  }
  return chunks;
}

// The user's list when there is one, else the default.
std::vector<int64_t> valuesOf(const PlanSpace& space, Dimension dimension, std::vector<int64_t> defaults) {
  const auto& allowed = space.allowed(dimension);
  return allowed ? *allowed : defaults;
}

// The recompute_num_layers of a plan's candidates: none but under full recomputation; there
// the listed counts (--vary recompute_num_layers), else the experiment's own.
std::vector<std::optional<int64_t>> recomputeLayerCounts(const parallelism::Experiment& experiment,
                                                         const PlanSpace& space, int64_t recompute) {
  if (static_cast<Recompute>(recompute) != Recompute::kFull) return {std::nullopt};
  const auto& listed = space.allowed(Dimension::kRecomputeNumLayers);
  if (!listed) return {experiment.plan.recompute_num_layers};
  return {listed->begin(), listed->end()};
}

void enumerateTarget(std::size_t target_index, const SweepTarget& target, const PlanSpace& space,
                     std::vector<PlanCandidate>& candidates) {
  const parallelism::Experiment& experiment = target.experiment;
  const auto& model = experiment.model;
  const int64_t gpus = target.gpus;
  const std::vector<int64_t> gpu_divisors = divisorsOf(gpus);
  const int64_t global_batch = experiment.training.global_batch_size;
  parallelism::TrainingSpec training = experiment.training;

  for (int64_t tp : valuesOf(space, Dimension::kTp, gpu_divisors)) {
    for (int64_t pp : valuesOf(space, Dimension::kPp, gpu_divisors)) {
      for (int64_t cp : valuesOf(space, Dimension::kCp, gpu_divisors)) {
        int64_t model_parallel = 0;
        if (__builtin_mul_overflow(tp, pp, &model_parallel) ||
            __builtin_mul_overflow(model_parallel, cp, &model_parallel) || gpus % model_parallel != 0) {
          continue;  // no whole dp: not a plan
        }
        const int64_t dp = gpus / model_parallel;
        if (!space.allows(Dimension::kDp, dp)) continue;
        const std::vector<int64_t> experts = model.moe ? divisorsOf(model.moe->experts) : std::vector<int64_t>{1};
        const std::optional<StageSplit> split = unevenSplit(model.layers, pp);
        const std::vector<int64_t> stage_chunks = split                              ? unevenChunks(*split)
                                                  : pp > 1 && model.layers % pp == 0 ? divisorsOf(model.layers / pp)
                                                                                     : std::vector<int64_t>{1};
        const std::optional<StageSplit> v_split = vSplit(model.layers, pp);
        const std::vector<int64_t> micro_batches =
            global_batch % dp == 0 ? divisorsOf(global_batch / dp) : std::vector<int64_t>{1};
        std::vector<int64_t> sequence_parallel = valuesOf(space, Dimension::kSequenceParallel, {0, 1});
        if (tp == 1) sequence_parallel = {0};  // resolvePlan turns it off: the same plan as false
        const std::vector<int64_t> zero_stages =
            valuesOf(space, Dimension::kZero, dp > 1 ? std::vector<int64_t>{0, 1, 2, 3} : std::vector<int64_t>{0});
        const std::vector<int64_t> recompute_policies = valuesOf(space, Dimension::kRecompute, {0, 1, 2});
        const std::vector<int64_t> schedules =
            valuesOf(space, Dimension::kSchedule, {static_cast<int64_t>(experiment.plan.schedule)});
        // The V schedules and DualPipe run two chunks per GPU whatever the split: offer 2 where
        // they are listed.
        std::vector<int64_t> chunk_counts = stage_chunks;
        const bool v_listed = std::any_of(schedules.begin(), schedules.end(), [](int64_t schedule) {
          const auto pipeline = static_cast<parallelism::PipelineSchedule>(schedule);
          return parallelism::placesChunksInAV(pipeline) || parallelism::runsBothDirections(pipeline);
        });
        if (v_listed && pp > 1 && std::find(chunk_counts.begin(), chunk_counts.end(), 2) == chunk_counts.end()) {
          chunk_counts.insert(std::upper_bound(chunk_counts.begin(), chunk_counts.end(), 2), 2);
        }
        const bool one_f_one_b_listed =
            std::find(schedules.begin(), schedules.end(),
                      static_cast<int64_t>(parallelism::PipelineSchedule::kOneFOneB)) != schedules.end();
        // Expert tensor parallelism: tp (Megatron-Core's default) or 1 (the experts whole on
        // each rank, as the DeepSeek-V3 and Qwen3 recipes run them); other values when asked.
        const std::vector<int64_t> expert_tp = valuesOf(
            space, Dimension::kEtp, model.moe && tp > 1 ? std::vector<int64_t>{1, tp} : std::vector<int64_t>{tp});
        for (int64_t ep : valuesOf(space, Dimension::kEp, experts)) {
          for (int64_t etp : expert_tp) {
            for (int64_t virtual_stages : valuesOf(space, Dimension::kVirtualStages, chunk_counts)) {
              for (int64_t micro_batch_size : valuesOf(space, Dimension::kMicroBatchSize, micro_batches)) {
                training.micro_batch_size = micro_batch_size;
                for (int64_t sp : sequence_parallel) {
                  for (int64_t zero : zero_stages) {
                    for (int64_t recompute : recompute_policies) {
                      for (const int64_t schedule : schedules) {
                        // Without a pipeline there is no bubble to fill: a zero-bubble plan at pp = 1
                        // runs as 1F1B (the same passes, the backward whole), listed once.
                        auto pipeline = static_cast<parallelism::PipelineSchedule>(schedule);
                        if (pp == 1 && pipeline == parallelism::PipelineSchedule::kZeroBubble) {
                          if (one_f_one_b_listed) continue;
                          pipeline = parallelism::PipelineSchedule::kOneFOneB;
                        }
                        bool every_layer_listed = false;  // a count that recomputes every layer: the plain full plan
                        for (const std::optional<int64_t>& recompute_layers :
                             recomputeLayerCounts(experiment, space, recompute)) {
                          PlanCandidate candidate;
                          candidate.target = target_index;
                          candidate.micro_batch_size = micro_batch_size;
                          ParallelPlan& plan = candidate.plan;
                          plan = experiment.plan;  // the experiment's overlap switches
                          plan.gpus = gpus;
                          plan.tp = tp;
                          plan.pp = pp;
                          plan.cp = cp;
                          plan.dp = dp;
                          plan.ep = ep;
                          plan.etp = etp == tp ? ParallelPlan::kAuto : etp;
                          plan.virtual_stages = virtual_stages;
                          const std::optional<StageSplit>& ends =
                              parallelism::placesChunksInAV(pipeline) ? v_split : split;
                          plan.first_stage_layers = ends ? std::optional(ends->first) : std::nullopt;
                          plan.last_stage_layers = ends ? std::optional(ends->last) : std::nullopt;
                          plan.sequence_parallel = sp != 0;
                          plan.zero = static_cast<int>(zero);
                          plan.recompute = static_cast<Recompute>(recompute);
                          plan.recompute_num_layers = recompute_layers;
                          plan.schedule = pipeline;
                          if (auto issue = parallelism::resolvePlan(plan, experiment.cluster)) {
                            candidate.issue = std::move(issue);
                          } else {
                            auto issues = parallelism::checkPlan(model, experiment.cluster, training, plan);
                            if (!issues.empty()) candidate.issue = std::move(issues.front());
                          }
                          if (!candidate.issue && plan.recompute_num_layers && !plan.partialRecompute(model.layers)) {
                            if (every_layer_listed) continue;
                            every_layer_listed = true;
                            plan.recompute_num_layers.reset();
                          }
                          candidates.push_back(std::move(candidate));
                        }
                      }
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
  }
}

}  // namespace

std::vector<int64_t> divisorsOf(int64_t n) {
  std::vector<int64_t> small;
  std::vector<int64_t> large;
  for (int64_t d = 1; d * d <= n; ++d) {
    if (n % d != 0) continue;
    small.push_back(d);
    if (d != n / d) large.push_back(n / d);
  }
  small.insert(small.end(), large.rbegin(), large.rend());
  return small;
}

void applyCandidate(parallelism::Experiment& experiment, const PlanCandidate& candidate) {
  experiment.plan = candidate.plan;
  experiment.training.micro_batch_size = candidate.micro_batch_size;
}

std::vector<PlanCandidate> enumeratePlans(const std::vector<SweepTarget>& targets, const PlanSpace& space) {
  std::vector<PlanCandidate> candidates;
  for (std::size_t t = 0; t < targets.size(); ++t) enumerateTarget(t, targets[t], space, candidates);
  return candidates;
}

}  // namespace trainsim::sweep
