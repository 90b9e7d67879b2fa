// The accelerator catalog (configs/gpus.yaml) and inline GPU mappings in cluster files.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/config_node.h"
#include "base/expected.h"
#include "topology/gpu_spec.h"

namespace trainsim::topology {

class GpuCatalog {
 public:
  // Loads and validates a catalog file (strict: unknown keys, missing fields are errors).
  [[nodiscard]] static Expected<GpuCatalog> load(const std::string& file_path);

  [[nodiscard]] const GpuSpec* find(const std::string& key) const;
  [[nodiscard]] std::vector<std::string> keys() const;  // sorted

  // Reads one GPU description (a catalog entry or an inline `gpu:` mapping). Throws InputError.
  [[nodiscard]] static GpuSpec parseEntry(const ConfigNode& node, const std::string& key);
  // An intra-node fabric name (nvswitch | nvlink_mesh | pcie | torus). Throws InputError.
  [[nodiscard]] static IntraNodeFabric parseFabric(const ConfigNode& node);

 private:
  std::map<std::string, GpuSpec> entries_;
};

}  // namespace trainsim::topology
