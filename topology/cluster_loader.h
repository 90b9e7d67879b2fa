// Loading cluster files: preset name, path or inline mapping; --set overrides; strict checks.
#pragma once

#include <string>
#include <vector>

#include "base/config_node.h"
#include "base/config_paths.h"
#include "base/expected.h"
#include "topology/cluster_spec.h"
#include "topology/gpu_catalog.h"

namespace trainsim::topology {

// `reference` is a preset name (configs/clusters/<name>.yaml) or a file path.
// `overrides` have key paths relative to the cluster document ("nodes", "inter_node.oversubscription").
[[nodiscard]] Expected<ClusterSpec> loadClusterFile(const std::string& reference, const ConfigPaths& paths,
                                                    const std::vector<Override>& overrides = {});

// `node` is the value of a `cluster:` key: a scalar reference or an inline mapping (whose
// overrides, if any, were already applied by the caller). Overrides listed here apply to a
// referenced file.
[[nodiscard]] Expected<ClusterSpec> loadClusterNode(const ConfigNode& node, const ConfigPaths& paths,
                                                    const std::vector<Override>& overrides = {});

// The catalog of <config_dir>/gpus.yaml, loaded once per process and cached (thread-safe).
[[nodiscard]] Expected<GpuCatalog> loadGpuCatalog(const ConfigPaths& paths);

}  // namespace trainsim::topology
