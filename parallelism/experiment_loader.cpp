#include "parallelism/experiment_loader.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <limits>
#include <optional>
#include <string_view>

#include "parallelism/model_loader.h"
#include "parallelism/plan_validation.h"
#include "topology/cluster_loader.h"

namespace trainsim::parallelism {
namespace {

constexpr std::array<std::string_view, 6> kTopLevelKeys = {"name",    "description", "model",
                                                           "cluster", "training",    "parallelism"};

std::string firstComponent(const std::string& key_path) { return key_path.substr(0, key_path.find('.')); }

// A top-level key that only a --set introduces has no position in the file, so an unknown
// one is reported here, at the command line, with the same wording allowKeys uses.
void checkOverrideKey(const Override& override_value) {
  const std::string key = firstComponent(override_value.key_path);
  if (std::find(kTopLevelKeys.begin(), kTopLevelKeys.end(), key) != kTopLevelKeys.end()) return;
  std::string_view best;
  std::size_t best_distance = std::numeric_limits<std::size_t>::max();
  for (auto candidate : kTopLevelKeys) {
    const std::size_t distance = editDistance(key, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  std::string message = "unknown key";
  if (best_distance <= std::max<std::size_t>(2, key.size() / 3)) {
    message += " (did you mean '" + std::string(best) + "'?)";
  } else {
    message += "; expected one of name, description, model, cluster, training or parallelism";
  }
  throwInputError(override_value.display, key, message);
}

// Overrides for the model and cluster documents when those are separate files, with the
// `model.` / `cluster.` prefix stripped (their displays still show what the user typed).
struct ReferencedOverrides {
  std::vector<Override> model;
  std::vector<Override> cluster;
};

ReferencedOverrides applyOverrides(ConfigNode& root, const std::vector<Override>& overrides) {
  for (const auto& override_value : overrides) checkOverrideKey(override_value);
  // Replacements first: `--set model=llama3-8b` decides what `--set model.layers=4` edits.
  for (const auto& override_value : overrides) {
    if (override_value.key_path == "model" || override_value.key_path == "cluster") applyOverride(root, override_value);
  }
  ReferencedOverrides referenced;
  for (const auto& override_value : overrides) {
    if (override_value.key_path == "model" || override_value.key_path == "cluster") continue;
    const std::string key = firstComponent(override_value.key_path);
    if (key == "model" || key == "cluster") {
      const auto value = root.optionalChild(key);
      if (value && value->isScalar()) {
        // The value is a reference to a file: the override edits that file's document.
        Override relative = override_value;
        relative.key_path = override_value.key_path.substr(key.size() + 1);
        (key == "model" ? referenced.model : referenced.cluster).push_back(relative);
        continue;
      }
    }
    applyOverride(root, override_value);
  }
  return referenced;
}

// Reports a plan issue at the key it names, or at the closest enclosing mapping the file
// has when the key was left to its default.
[[noreturn]] void failAt(const ConfigNode& root, const PlanIssue& issue) {
  std::optional<ConfigNode> node(root);
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = issue.key_path.find('.', start);
    const std::string part = issue.key_path.substr(start, dot == std::string::npos ? dot : dot - start);
    if (!node->isMap() || !node->has(part)) break;
    // emplace, not assignment: assigning a YAML::Node rebinds the node it refers to in the document.
    const ConfigNode child = node->child(part);
    node.emplace(child);
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  throwInputError(node->where(), issue.key_path, issue.message);
}

Experiment parseExperiment(ConfigNode root, const ConfigPaths& paths, const std::vector<Override>& overrides) {
  if (!root.isMap()) root.failExpected("an experiment (a mapping with model, cluster, training and parallelism)");
  const ReferencedOverrides referenced = applyOverrides(root, overrides);
  root.allowKeys({"name", "description", "model", "cluster", "training", "parallelism"});

  Experiment experiment;
  experiment.source_file = root.source()->file;
  experiment.name = root.string("name", std::filesystem::path(experiment.source_file).stem().string());
  (void)root.string("description", "");
  experiment.model = valueOrThrow(loadModelNode(root.child("model"), paths, referenced.model));
  experiment.cluster = valueOrThrow(topology::loadClusterNode(root.child("cluster"), paths, referenced.cluster));
  const ConfigNode training = root.child("training");
  training.requireMap();
  experiment.stack = readSoftwareStack(training, paths);
  experiment.parameter_overrides = readStacklessOverrides(training);
  experiment.training = readTrainingSpec(training, experiment.stack ? experiment.stack->training : TrainingDefaults{});
  if (experiment.stack) experiment.training.stack = experiment.stack->name;
  // `parallelism:` with nothing under it means every default, like leaving it out.
  if (auto section = root.optionalChild("parallelism"); section && !section->yaml().IsNull()) {
    experiment.plan = readParallelPlan(*section);
  }

  if (auto issue = resolvePlan(experiment.plan, experiment.cluster)) {
    // A tp or pp the model can never take is the root cause more often than the GPU count.
    const auto fit = checkModelFit(experiment.model, experiment.plan);
    failAt(root, fit.empty() ? *issue : fit.front());
  }
  const auto issues = checkPlan(experiment.model, experiment.cluster, experiment.training, experiment.plan);
  if (!issues.empty()) failAt(root, issues.front());
  return experiment;
}

}  // namespace

Expected<Experiment> loadExperiment(const std::string& path_or_preset, const ConfigPaths& paths,
                                    const std::vector<Override>& overrides) {
  return catchInputErrors([&]() -> Experiment {
    std::string path = path_or_preset;
    if (!looksLikePath(path_or_preset)) {
      path = presetPath(paths, "experiments", path_or_preset);
      std::error_code ignored;
      if (!std::filesystem::is_regular_file(path, ignored)) {
        throwInputError(path_or_preset, "",
                        "unknown experiment preset (no " + path + "); give a preset name or a file path");
      }
    }
    return parseExperiment(loadConfigFile(path), paths, overrides);
  });
}

Expected<Experiment> loadExperimentNode(ConfigNode root, const ConfigPaths& paths,
                                        const std::vector<Override>& overrides) {
  return catchInputErrors([&]() -> Experiment { return parseExperiment(std::move(root), paths, overrides); });
}

}  // namespace trainsim::parallelism
