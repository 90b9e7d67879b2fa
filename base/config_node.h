// Strict, position-aware reading of user YAML files.
//
// A ConfigNode is a YAML node plus where it came from (file, or a --set override) and its
// dotted key path, so that every complaint can say `file:line:col: key.path: expected X,
// found Y`. Loaders list the keys a mapping may hold (allowKeys) so typos are errors,
// and read values through typed getters that reject wrong types and nonsense numbers.
// Problems are thrown as InputError; module APIs turn them into Expected values.
//
// Parsing is stricter than yaml-cpp alone: a key given twice in one mapping, a second
// document after `---`, a quoted string that is never closed and nesting deeper than any
// config needs are errors at their position (yaml-cpp accepts the first three silently).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace trainsim {

// One loaded document: the file name to print, and the --set overrides applied to it,
// keyed by key path relative to the document root, with the text to print instead of a
// file position ("--set cluster.nodes=64").
struct ConfigSource {
  std::string file;
  std::map<std::string, std::string> overrides;
};

class ConfigNode {
 public:
  ConfigNode(YAML::Node node, std::shared_ptr<ConfigSource> source, std::string path);
  // A mapping's value, with the position of its key: an empty value (`seq_len:` and
  // nothing) has no position of its own (yaml-cpp gives the next token's), so it is
  // reported at its key.
  ConfigNode(YAML::Node node, std::shared_ptr<ConfigSource> source, std::string path, YAML::Mark key_mark);

  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] const YAML::Node& yaml() const { return node_; }
  [[nodiscard]] const std::shared_ptr<ConfigSource>& source() const { return source_; }
  // "file:line:col" of this node, or the --set text that produced it.
  [[nodiscard]] std::string where() const;

  [[nodiscard]] bool isMap() const { return node_.IsMap(); }
  [[nodiscard]] bool isScalar() const { return node_.IsScalar(); }
  [[nodiscard]] bool isSequence() const { return node_.IsSequence(); }
  [[nodiscard]] bool has(std::string_view key) const;

  // Requires this node to be a mapping whose keys are all in `allowed`; an unknown key is
  // reported at its own position, with the closest allowed key as a suggestion.
  void allowKeys(std::initializer_list<std::string_view> allowed) const;
  void allowKeys(const std::vector<std::string>& allowed) const;
  void requireMap() const;

  // Child access. `child` fails with "missing required key" when absent.
  [[nodiscard]] ConfigNode child(std::string_view key) const;
  [[nodiscard]] std::optional<ConfigNode> optionalChild(std::string_view key) const;
  [[nodiscard]] std::vector<ConfigNode> elements() const;                         // a list
  [[nodiscard]] std::vector<std::pair<std::string, ConfigNode>> entries() const;  // a mapping, in file order

  // Typed values of this node.
  [[nodiscard]] std::string asString() const;
  [[nodiscard]] double asNumber() const;  // finite
  [[nodiscard]] double asPositiveNumber() const;
  [[nodiscard]] double asNonNegativeNumber() const;
  [[nodiscard]] int64_t asInteger() const;
  [[nodiscard]] int64_t asPositiveInteger() const;
  [[nodiscard]] int64_t asNonNegativeInteger() const;
  [[nodiscard]] bool asBool() const;
  // Bounded reads, for values the simulator can only represent within limits. A value that
  // is not a number, or below the sign the range implies (min > 0: positive, min == 0:
  // >= 0), fails as asPositiveNumber / asNonNegativeNumber (or the integer getters) do; a
  // number outside [min, max] with "expected a number between MIN and MAX, found ...".
  [[nodiscard]] double asNumberIn(double min, double max) const;
  [[nodiscard]] int64_t asIntegerIn(int64_t min, int64_t max) const;
  [[nodiscard]] std::string asEnum(std::initializer_list<std::string_view> choices) const;

  // Convenience for optional keys with documented defaults.
  [[nodiscard]] double positiveNumber(std::string_view key, double default_value) const;
  [[nodiscard]] double nonNegativeNumber(std::string_view key, double default_value) const;
  [[nodiscard]] int64_t positiveInteger(std::string_view key, int64_t default_value) const;
  [[nodiscard]] double numberIn(std::string_view key, double default_value, double min, double max) const;
  [[nodiscard]] int64_t integerIn(std::string_view key, int64_t default_value, int64_t min, int64_t max) const;
  [[nodiscard]] bool boolean(std::string_view key, bool default_value) const;
  [[nodiscard]] std::string string(std::string_view key, std::string default_value) const;
  [[nodiscard]] std::string enumeration(std::string_view key, std::initializer_list<std::string_view> choices,
                                        std::string default_value) const;

  // Reports that `key` is absent from this mapping (positioned at the mapping), with a reason.
  [[noreturn]] void failMissing(std::string_view key, const std::string& why = "") const;
  // Reports a problem with this node: where() + path + message. Never returns.
  [[noreturn]] void fail(const std::string& message) const;
  // "expected <what>, found <this node's value>".
  [[noreturn]] void failExpected(const std::string& what) const;
  // How the node's value reads in a message: "\"fast\"", "a mapping", "a list", "nothing".
  [[nodiscard]] std::string describeValue() const;

 private:
  [[nodiscard]] std::string childPath(std::string_view key) const;

  YAML::Node node_;
  std::shared_ptr<ConfigSource> source_;
  std::string path_;
  YAML::Mark key_mark_ = YAML::Mark::null_mark();
};

// Parses a YAML (or JSON) file; a syntax error becomes an InputError at the error's position.
[[nodiscard]] ConfigNode loadConfigFile(const std::string& file_path);
// Parses YAML text held in memory (inline mappings in tests, --set values); `name` is shown as the file.
[[nodiscard]] ConfigNode parseConfigText(const std::string& text, const std::string& name);

// One `--set key.path=value` from the command line.
struct Override {
  std::string key_path;  // relative to the document it is applied to
  std::string value;     // YAML text of the new value
  std::string display;   // what error messages print ("--set cluster.nodes=64")
};
// Parses "a.b.c=value"; fails on a missing '=' or an empty key.
[[nodiscard]] Override parseOverride(const std::string& text);
// Sets the value at `override.key_path` inside `root` (creating intermediate mappings) and
// records it in the root's source so that errors about it point at the command line.
void applyOverride(ConfigNode& root, const Override& override_value);

// How a bound reads in a message: "0.001", "1048576", "1e18".
[[nodiscard]] std::string formatBound(double value);

// Edit distance, for "did you mean" suggestions.
[[nodiscard]] std::size_t editDistance(std::string_view a, std::string_view b);

}  // namespace trainsim
