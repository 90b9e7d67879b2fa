// Fuzzes the Hugging Face config.json reader (a model given as a transformers config): JSON
// (or YAML) text in, a ModelSpec or an input error out.
#include <cstddef>
#include <cstdint>
#include <optional>

#include "base/config_node.h"
#include "base/error.h"
#include "fuzz/fuzz_input.h"
#include "parallelism/model_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  using namespace trainsim;
  static const ConfigPaths paths = fuzz::shippedConfigPaths();
  std::optional<ConfigNode> root;
  try {
    root.emplace(parseConfigText(fuzz::inputText(data, size), "config.json"));
  } catch (const InputError&) {
    return 0;
  }
  // Only what reads as a config.json: the trainsim model schema has its own target (experiments).
  if (!parallelism::isHuggingFaceConfig(*root)) return 0;
  auto model = parallelism::loadModelNode(*root, paths);
  if (model.ok()) {
    (void)model.value().parameterCount();
    (void)model.value().activeParameterCount();
  }
  return 0;
}
