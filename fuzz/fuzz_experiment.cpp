// Fuzzes the experiment loader (SPEC "Experiment file"): YAML text in, an Experiment or an
// input error out. The text may name the shipped model and cluster presets or inline them.
#include <cstddef>
#include <cstdint>
#include <optional>

#include "base/config_node.h"
#include "base/error.h"
#include "fuzz/fuzz_input.h"
#include "parallelism/experiment_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  using namespace trainsim;
  static const ConfigPaths paths = fuzz::shippedConfigPaths();
  std::optional<ConfigNode> root;
  try {
    root.emplace(parseConfigText(fuzz::inputText(data, size), "fuzz.yaml"));
  } catch (const InputError&) {
    return 0;
  }
  auto experiment = parallelism::loadExperimentNode(*root, paths);
  if (experiment.ok()) (void)experiment.value().model.parameterCount();
  return 0;
}
