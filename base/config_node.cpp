#include "base/config_node.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include "base/error.h"

namespace trainsim {
namespace {

std::string joinKeys(const std::vector<std::string_view>& keys) {
  std::string text;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (i > 0) text += i + 1 == keys.size() ? " or " : ", ";
    text += std::string(keys[i]);
  }
  return text;
}

std::vector<std::string> splitPath(const std::string& path) {
  std::vector<std::string> parts;
  std::string current;
  for (char c : path) {
    if (c == '.') {
      parts.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  parts.push_back(current);
  return parts;
}

}  // namespace

ConfigNode::ConfigNode(YAML::Node node, std::shared_ptr<ConfigSource> source, std::string path)
    : node_(std::move(node)), source_(std::move(source)), path_(std::move(path)) {}

std::string ConfigNode::where() const {
  // A value that came from --set (or lies inside one) points at the command line.
  for (const auto& [key, display] : source_->overrides) {
    if (path_ == key || path_.starts_with(key + ".")) return display;
  }
  const YAML::Mark mark = node_.Mark();
  if (mark.line < 0) {
    // A mapping that --set created on the way to its key ("--set training.foo.bar=1"
    // creates training.foo) has no position either.
    for (const auto& [key, display] : source_->overrides) {
      if (key.starts_with(path_ + ".")) return display;
    }
    return source_->file;
  }
  return source_->file + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

std::string ConfigNode::childPath(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

bool ConfigNode::has(std::string_view key) const {
  if (!node_.IsMap()) return false;
  const YAML::Node& const_node = node_;
  return static_cast<bool>(const_node[std::string(key)]);
}

void ConfigNode::requireMap() const {
  if (!node_.IsMap()) failExpected("a mapping");
}

void ConfigNode::allowKeys(std::initializer_list<std::string_view> allowed) const {
  allowKeys(std::vector<std::string>(allowed.begin(), allowed.end()));
}

void ConfigNode::allowKeys(const std::vector<std::string>& allowed) const {
  requireMap();
  for (const auto& entry : node_) {
    const std::string key = entry.first.Scalar();
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    std::string best;
    std::size_t best_distance = std::numeric_limits<std::size_t>::max();
    for (const auto& candidate : allowed) {
      const std::size_t distance = editDistance(key, candidate);
      if (distance < best_distance) {
        best_distance = distance;
        best = candidate;
      }
    }
    ConfigNode key_node(entry.first, source_, childPath(key));
    std::string message = "unknown key";
    if (!best.empty() && best_distance <= std::max<std::size_t>(2, key.size() / 3)) {
      message += " (did you mean '" + best + "'?)";
    } else {
      std::vector<std::string_view> names(allowed.begin(), allowed.end());
      message += "; expected one of " + joinKeys(names);
    }
    key_node.fail(message);
  }
}

ConfigNode ConfigNode::child(std::string_view key) const {
  requireMap();
  auto found = optionalChild(key);
  if (!found) failMissing(key);
  return *found;
}

std::optional<ConfigNode> ConfigNode::optionalChild(std::string_view key) const {
  if (!node_.IsMap()) {
    if (node_.IsNull() || !node_.IsDefined()) return std::nullopt;
    failExpected("a mapping");
  }
  const YAML::Node& const_node = node_;
  YAML::Node value = const_node[std::string(key)];
  if (!value) return std::nullopt;
  return ConfigNode(value, source_, childPath(key));
}

std::vector<ConfigNode> ConfigNode::elements() const {
  if (!node_.IsSequence()) failExpected("a list");
  std::vector<ConfigNode> items;
  std::size_t index = 0;
  for (const auto& item : node_) {
    items.emplace_back(item, source_, path_ + "[" + std::to_string(index++) + "]");
  }
  return items;
}

std::vector<std::pair<std::string, ConfigNode>> ConfigNode::entries() const {
  requireMap();
  std::vector<std::pair<std::string, ConfigNode>> items;
  for (const auto& entry : node_) {
    const std::string key = entry.first.Scalar();
    items.emplace_back(key, ConfigNode(entry.second, source_, childPath(key)));
  }
  return items;
}

std::string ConfigNode::describeValue() const {
  if (!node_.IsDefined() || node_.IsNull()) return "nothing";
  if (node_.IsMap()) return "a mapping";
  if (node_.IsSequence()) return "a list";
  return "\"" + node_.Scalar() + "\"";
}

void ConfigNode::fail(const std::string& message) const { throwInputError(where(), path_, message); }

void ConfigNode::failMissing(std::string_view key, const std::string& why) const {
  ConfigNode missing(node_, source_, childPath(key));
  missing.fail(why.empty() ? "missing required key" : "missing required key (" + why + ")");
}

void ConfigNode::failExpected(const std::string& what) const {
  fail("expected " + what + ", found " + describeValue());
}

std::string ConfigNode::asString() const {
  if (!node_.IsScalar()) failExpected("a string");
  return node_.Scalar();
}

double ConfigNode::asNumber() const {
  if (!node_.IsScalar()) failExpected("a number");
  const std::string& text = node_.Scalar();
  double value = 0.0;
  std::istringstream stream(text);
  stream.imbue(std::locale::classic());
  stream >> value;
  if (text.empty() || stream.fail() || !stream.eof() || !std::isfinite(value)) failExpected("a number");
  return value;
}

double ConfigNode::asPositiveNumber() const {
  if (!node_.IsScalar()) failExpected("a positive number");
  double value = 0.0;
  try {
    value = asNumber();
  } catch (const InputError&) {
    failExpected("a positive number");
  }
  if (value <= 0.0) failExpected("a positive number");
  return value;
}

double ConfigNode::asNonNegativeNumber() const {
  if (!node_.IsScalar()) failExpected("a number >= 0");
  double value = 0.0;
  try {
    value = asNumber();
  } catch (const InputError&) {
    failExpected("a number >= 0");
  }
  if (value < 0.0) failExpected("a number >= 0");
  return value;
}

int64_t ConfigNode::asInteger() const {
  double value = 0.0;
  try {
    value = asNumber();
  } catch (const InputError&) {
    failExpected("an integer");
  }
  // 2^53: beyond this doubles stop representing every integer.
  if (std::floor(value) != value || std::fabs(value) > 9.007199254740992e15) failExpected("an integer");
  return static_cast<int64_t>(value);
}

int64_t ConfigNode::asPositiveInteger() const {
  int64_t value = 0;
  try {
    value = asInteger();
  } catch (const InputError&) {
    failExpected("a positive integer");
  }
  if (value <= 0) failExpected("a positive integer");
  return value;
}

int64_t ConfigNode::asNonNegativeInteger() const {
  int64_t value = 0;
  try {
    value = asInteger();
  } catch (const InputError&) {
    failExpected("an integer >= 0");
  }
  if (value < 0) failExpected("an integer >= 0");
  return value;
}

bool ConfigNode::asBool() const {
  if (node_.IsScalar()) {
    const std::string& text = node_.Scalar();
    if (text == "true" || text == "True" || text == "yes") return true;
    if (text == "false" || text == "False" || text == "no") return false;
  }
  failExpected("true or false");
}

std::string ConfigNode::asEnum(std::initializer_list<std::string_view> choices) const {
  std::vector<std::string_view> names(choices);
  if (node_.IsScalar()) {
    const std::string& text = node_.Scalar();
    for (auto choice : choices) {
      if (text == choice) return text;
    }
  }
  failExpected(joinKeys(names));
}

double ConfigNode::positiveNumber(std::string_view key, double default_value) const {
  auto value = optionalChild(key);
  return value ? value->asPositiveNumber() : default_value;
}

double ConfigNode::nonNegativeNumber(std::string_view key, double default_value) const {
  auto value = optionalChild(key);
  return value ? value->asNonNegativeNumber() : default_value;
}

int64_t ConfigNode::positiveInteger(std::string_view key, int64_t default_value) const {
  auto value = optionalChild(key);
  return value ? value->asPositiveInteger() : default_value;
}

bool ConfigNode::boolean(std::string_view key, bool default_value) const {
  auto value = optionalChild(key);
  return value ? value->asBool() : default_value;
}

std::string ConfigNode::string(std::string_view key, std::string default_value) const {
  auto value = optionalChild(key);
  return value ? value->asString() : default_value;
}

std::string ConfigNode::enumeration(std::string_view key, std::initializer_list<std::string_view> choices,
                                    std::string default_value) const {
  auto value = optionalChild(key);
  return value ? value->asEnum(choices) : default_value;
}

namespace {

ConfigNode parseStream(std::istream& stream, const std::string& name) {
  auto source = std::make_shared<ConfigSource>();
  source->file = name;
  try {
    YAML::Node root = YAML::Load(stream);
    return ConfigNode(root, source, "");
  } catch (const YAML::Exception& e) {
    std::string where = name;
    if (e.mark.line >= 0) where += ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1);
    throwInputError(where, "", "invalid YAML: " + e.msg);
  }
}

}  // namespace

ConfigNode loadConfigFile(const std::string& file_path) {
  std::ifstream stream(file_path);
  if (!stream) throwInputError(file_path, "", "cannot open file");
  ConfigNode root = parseStream(stream, file_path);
  if (!root.yaml().IsDefined() || root.yaml().IsNull()) throwInputError(file_path, "", "the file is empty");
  return root;
}

ConfigNode parseConfigText(const std::string& text, const std::string& name) {
  std::istringstream stream(text);
  return parseStream(stream, name);
}

Override parseOverride(const std::string& text) {
  const auto equals = text.find('=');
  if (equals == std::string::npos || equals == 0) {
    throwInputError("--set " + text, "", "expected KEY=VALUE with a dotted key path, e.g. parallelism.tp=4");
  }
  Override result;
  result.key_path = text.substr(0, equals);
  result.value = text.substr(equals + 1);
  result.display = "--set " + text;
  for (const auto& part : splitPath(result.key_path)) {
    if (part.empty()) throwInputError(result.display, result.key_path, "empty component in key path");
  }
  return result;
}

void applyOverride(ConfigNode& root, const Override& override_value) {
  YAML::Node value;
  try {
    value = YAML::Load(override_value.value);
  } catch (const YAML::Exception&) {
    value = YAML::Node(override_value.value);  // not YAML: take the text as a string
  }
  if (!value.IsDefined() || value.IsNull()) value = YAML::Node(override_value.value);

  if (!root.yaml().IsMap()) root.failExpected("a mapping");
  const auto parts = splitPath(override_value.key_path);
  YAML::Node current = root.yaml();
  std::string walked;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    walked += (walked.empty() ? "" : ".") + parts[i];
    YAML::Node next = current[parts[i]];
    if (next.IsDefined() && !next.IsNull() && !next.IsMap()) {
      throwInputError(override_value.display, walked,
                      "cannot set a key inside a value that is not a mapping (found \"" +
                          (next.IsScalar() ? next.Scalar() : std::string("a list")) + "\")");
    }
    if (!next.IsDefined() || next.IsNull()) current[parts[i]] = YAML::Node(YAML::NodeType::Map);
    current.reset(current[parts[i]]);
  }
  current[parts.back()] = value;
  const std::string full_path =
      root.path().empty() ? override_value.key_path : root.path() + "." + override_value.key_path;
  root.source()->overrides[full_path] = override_value.display;
}

std::size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> previous(b.size() + 1);
  std::vector<std::size_t> current(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitution});
    }
    std::swap(previous, current);
  }
  return previous[b.size()];
}

}  // namespace trainsim
