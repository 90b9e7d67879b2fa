// Writing a parsed YAML document back out as text (`validate training --print-experiment`
// prints a row's experiment this way): a mapping in block style, two spaces a level, and
// whatever the file wrote in flow style (`{a: 1, b: {c: 2}}`) in flow style on one line.
// Scalars are written as the file spelled them, double-quoted where the file quoted them, so
// the text loads back to the same values; an alias is written as the node it names.
// Comments, anchors and the file's line breaks inside flow collections are not kept.
#pragma once

#include <string>

#include "base/config_node.h"

namespace trainsim {

// `node` (a mapping) as YAML text, one key per line, ending in a newline.
[[nodiscard]] std::string configText(const ConfigNode& node);

}  // namespace trainsim
