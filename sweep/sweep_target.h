// What a sweep searches over besides the plan: one experiment template per cluster and GPU
// count (`--clusters dgx-a100,aws-p5`, `--gpus 256,512,1024`).
//
// A template is the experiment with its model, cluster and training loaded as `simulate`
// would load them, and with the `parallelism:` section read only for what the sweep keeps
// from it: the GPU count (when --gpus is not given), the schedule, the overlap switches and
// tp_comm_overlap. The degrees it names (tp, pp, ...) are what the sweep varies, so they are
// not checked; --fix them to keep them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/config_node.h"
#include "base/config_paths.h"
#include "base/expected.h"
#include "goodput/goodput_model.h"
#include "parallelism/experiment.h"

namespace trainsim::sweep {

struct SweepTarget {
  std::string cluster_label;  // the preset or file given to --clusters, else the cluster's name
  int64_t gpus = 0;
  // Cluster nodes added so that the cluster holds `gpus` (a rental sized to the job); 0 when none.
  int resized_to_nodes = 0;
  // plan: the experiment's switches (schedule, overlaps); degrees are filled per candidate.
  parallelism::Experiment experiment;
  // With `sweep --goodput` and training.tokens: what the goodput model needs of this target
  // (goodput::goodputInputs), so that time-to-train and cost count failures and checkpoints.
  std::optional<goodput::GoodputInputs> goodput;
};

struct SweepTargetRequest {
  std::string experiment;             // preset name or file
  std::vector<Override> overrides;    // --set
  std::vector<std::string> clusters;  // --clusters (empty: the experiment's own)
  std::vector<int64_t> gpu_counts;    // --gpus (empty: the experiment's parallelism.gpus or the whole cluster)
};

// Targets in (cluster, GPU count) order of the request.
[[nodiscard]] Expected<std::vector<SweepTarget>> loadSweepTargets(const SweepTargetRequest& request,
                                                                  const ConfigPaths& paths);

}  // namespace trainsim::sweep
