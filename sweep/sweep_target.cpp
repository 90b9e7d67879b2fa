#include "sweep/sweep_target.h"

#include <filesystem>
#include <optional>

#include "parallelism/experiment_loader.h"
#include "parallelism/plan_validation.h"

namespace trainsim::sweep {
namespace {

using parallelism::Experiment;
using parallelism::ParallelPlan;

std::string resolveExperimentPath(const std::string& path_or_preset, const ConfigPaths& paths) {
  if (looksLikePath(path_or_preset)) return path_or_preset;
  std::string path = presetPath(paths, "experiments", path_or_preset);
  std::error_code ignored;
  if (!std::filesystem::is_regular_file(path, ignored)) {
    throwInputError(path_or_preset, "",
                    "unknown experiment preset (no " + path + "); give a preset name or a file path");
  }
  return path;
}

bool isParallelismOverride(const Override& override_value) {
  return override_value.key_path == "parallelism" || override_value.key_path.starts_with("parallelism.");
}

struct LoadedTemplate {
  Experiment experiment;
  ParallelPlan experiment_plan;  // the file's parallelism section (with --set), unchecked
};

// Loads the experiment with its parallelism section set aside: the model, cluster and
// training go through the ordinary loader (same errors, same --set handling), under a
// one-GPU plan that any model and batch accept; the section itself is only read.
LoadedTemplate loadTemplate(const std::string& path, const ConfigPaths& paths, const std::vector<Override>& overrides,
                            const std::vector<Override>& extra) {
  ConfigNode root = loadConfigFile(path);
  if (!root.isMap()) root.failExpected("an experiment (a mapping with model, cluster, training and parallelism)");
  std::vector<Override> others;
  for (const auto& override_value : overrides) {
    if (isParallelismOverride(override_value)) {
      applyOverride(root, override_value);
    } else {
      others.push_back(override_value);
    }
  }
  LoadedTemplate loaded;
  std::optional<ConfigNode> plan_section;
  if (auto section = root.optionalChild("parallelism"); section && !section->yaml().IsNull()) {
    loaded.experiment_plan = parallelism::readParallelPlan(*section);
    plan_section.emplace(*section);
  }
  YAML::Node document = root.yaml();  // shares the document: removing here removes it from root
  document.remove("parallelism");
  others.insert(others.end(), extra.begin(), extra.end());
  // micro_batch_size is a swept dimension: 1 here divides every global batch.
  for (const char* forced : {"parallelism.gpus=1", "training.micro_batch_size=1"}) {
    Override override_value = parseOverride(forced);
    override_value.display = std::string("sweep (") + forced + ")";
    others.push_back(override_value);
  }
  loaded.experiment = valueOrThrow(parallelism::loadExperimentNode(root, paths, others));
  // The sweep keeps recompute_num_layers for its candidates: checked here as simulate checks it.
  if (auto issue = parallelism::checkRecomputeLayers(loaded.experiment.model, loaded.experiment_plan)) {
    throwInputError(plan_section->child("recompute_num_layers").where(), issue->key_path, issue->message);
  }
  return loaded;
}

SweepTarget makeTarget(const std::string& path, const ConfigPaths& paths, const SweepTargetRequest& request,
                       const std::string& cluster, int64_t requested_gpus) {
  std::vector<Override> extra;
  if (!cluster.empty()) extra.push_back(Override{"cluster", cluster, "--clusters " + cluster});
  LoadedTemplate loaded = loadTemplate(path, paths, request.overrides, extra);
  int64_t gpus = requested_gpus;
  if (gpus == 0) gpus = loaded.experiment_plan.gpus;
  if (gpus == ParallelPlan::kAuto) gpus = loaded.experiment.cluster.totalGpus();

  SweepTarget target;
  const auto& spec = loaded.experiment.cluster;
  if (gpus > spec.totalGpus()) {
    if (spec.explicit_graph) {
      throwInputError("--gpus " + std::to_string(gpus), "",
                      "the cluster " + spec.name + " has " + std::to_string(spec.totalGpus()) +
                          " GPUs and an explicit device graph, which a sweep cannot resize");
    }
    // A rental sized to the job: as many nodes as the GPU count needs.
    const int64_t nodes = (gpus + spec.gpus_per_node - 1) / spec.gpus_per_node;
    extra.push_back(
        Override{"cluster.nodes", std::to_string(nodes),
                 "--gpus " + std::to_string(gpus) + " (cluster resized to " + std::to_string(nodes) + " nodes)"});
    loaded = loadTemplate(path, paths, request.overrides, extra);
    target.resized_to_nodes = static_cast<int>(nodes);
  }
  target.cluster_label = cluster.empty() ? loaded.experiment.cluster.name : cluster;
  target.gpus = gpus;
  target.experiment = std::move(loaded.experiment);
  // Keep the experiment's switches; the degrees are the sweep's.
  ParallelPlan plan;
  plan.gpus = gpus;
  plan.schedule = loaded.experiment_plan.schedule;
  plan.overlap_grad_reduce = loaded.experiment_plan.overlap_grad_reduce;
  plan.overlap_param_gather = loaded.experiment_plan.overlap_param_gather;
  plan.ddp_bucket_size = loaded.experiment_plan.ddp_bucket_size;
  plan.tp_comm_overlap = loaded.experiment_plan.tp_comm_overlap;
  plan.tp_comm_overlap_config = loaded.experiment_plan.tp_comm_overlap_config;
  plan.moe_a2a_overlap = loaded.experiment_plan.moe_a2a_overlap;
  plan.moe_dispatcher = loaded.experiment_plan.moe_dispatcher;
  // The full-recompute candidates recompute the first recompute_num_layers of each chunk; the
  // selective ones, the experiment's recompute_modules.
  plan.recompute_num_layers = loaded.experiment_plan.recompute_num_layers;
  plan.recompute_modules = loaded.experiment_plan.recompute_modules;
  target.experiment.plan = plan;
  return target;
}

}  // namespace

Expected<std::vector<SweepTarget>> loadSweepTargets(const SweepTargetRequest& request, const ConfigPaths& paths) {
  return catchInputErrors([&]() -> std::vector<SweepTarget> {
    const std::string path = resolveExperimentPath(request.experiment, paths);
    const std::vector<std::string> clusters =
        request.clusters.empty() ? std::vector<std::string>{""} : request.clusters;
    const std::vector<int64_t> gpu_counts = request.gpu_counts.empty() ? std::vector<int64_t>{0} : request.gpu_counts;
    std::vector<SweepTarget> targets;
    for (const auto& cluster : clusters) {
      for (int64_t gpus : gpu_counts) targets.push_back(makeTarget(path, paths, request, cluster, gpus));
    }
    return targets;
  });
}

}  // namespace trainsim::sweep
