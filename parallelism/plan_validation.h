// Cross-field checks of a parallel plan against the model, the batch and the cluster: the
// rules Megatron-LM enforces at start-up, reported as what to change rather than as an assert.
//
// Issues name the experiment key to change and carry no file position, so that `sweep` can
// use them as the reason a generated plan is invalid; the experiment loader attaches the
// position of that key.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "parallelism/model_spec.h"
#include "parallelism/parallel_plan.h"
#include "parallelism/training_spec.h"
#include "topology/cluster_spec.h"

namespace trainsim::parallelism {

struct PlanIssue {
  std::string key_path;  // experiment key to change: "parallelism.tp", "training.global_batch_size"
  std::string message;   // what is wrong and what would work

  bool operator==(const PlanIssue&) const = default;
};

// Fills in what the plan leaves to defaults: gpus (the whole cluster), dp (auto =
// gpus / (tp * pp * cp)), and turns sequence_parallel off at tp = 1 where it does nothing
// (Megatron-LM does the same). Returns the reason when no whole dp exists.
[[nodiscard]] std::optional<PlanIssue> resolvePlan(ParallelPlan& plan, const topology::ClusterSpec& cluster);

// recompute_num_layers (Megatron-LM's block method) picks whole layers to recompute: it goes
// with recompute: full only, as Megatron-LM requires, and names at most the model's layers.
// Part of checkModelFit; the sweep checks an experiment's own value with it.
[[nodiscard]] std::optional<PlanIssue> checkRecomputeLayers(const ModelSpec& model, const ParallelPlan& plan);

// The rules that depend only on the model and the tp, pp and virtual_stages degrees (heads,
// KV heads and MLP width over tp; layers over pipeline stages and model chunks). They hold
// whatever the GPU count and batch, so they are worth reporting before a GPU-count problem:
// a plan can be unresolvable (no whole dp) because of a tp that could never work anyway.
// Works on unresolved plans too.
[[nodiscard]] std::vector<PlanIssue> checkModelFit(const ModelSpec& model, const ParallelPlan& plan);

// Every rule a resolved plan breaks for this model, batch and cluster, in a fixed order
// (model fit, GPU counts, batch, expert, context and sequence parallelism, ZeRO, precision);
// empty when the plan can run. The first issue is the one to report.
[[nodiscard]] std::vector<PlanIssue> checkPlan(const ModelSpec& model, const topology::ClusterSpec& cluster,
                                               const TrainingSpec& training, const ParallelPlan& plan);

}  // namespace trainsim::parallelism
