// Writing a parsed document back out (base/config_text.h): block mappings stay block, flow
// collections stay flow on one line, quoted scalars stay quoted, aliases are written out.
#include "base/config_text.h"

#include <gtest/gtest.h>

namespace trainsim {
namespace {

TEST(ConfigTextTest, WritesBackWhatItRead) {
  const std::string text =
      "name: row\n"
      "description: \"A (quoted: text)\"\n"
      "model:\n"
      "  layers: 4\n"
      "  dropout: 0.1\n"
      "parallelism:\n"
      "  tp_comm_overlap_config: {qkv_dgrad: {method: bulk, num_sm: 4}, fc2_fprop: {set_sm_margin: 1}}\n"
      "  sizes: [1, 2]\n";
  EXPECT_EQ(configText(parseConfigText(text, "t.yaml")), text);
}

TEST(ConfigTextTest, JoinsAFlowMappingOntoOneLineAndWritesAnAliasOut) {
  const ConfigNode root = parseConfigText(
      "presets:\n  a: &a {x: {y: 1},\n    z: 2}\nuse:\n  config: *a\n  list:\n    - 1\n    - \"two\"\n", "t.yaml");
  EXPECT_EQ(configText(root.child("use")), "config: {x: {y: 1}, z: 2}\nlist:\n  - 1\n  - \"two\"\n");
}

TEST(ConfigTextTest, EscapesQuotesInsideAQuotedScalar) {
  EXPECT_EQ(configText(parseConfigText("a: \"say \\\"hi\\\"\"\n", "t.yaml")), "a: \"say \\\"hi\\\"\"\n");
}

}  // namespace
}  // namespace trainsim
