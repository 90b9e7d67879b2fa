#include "base/config_text.h"

namespace trainsim {
namespace {

// yaml-cpp tags a quoted scalar "!" (the non-specific tag) and a plain one "?".
std::string scalarText(const YAML::Node& node) {
  if (node.Tag() != "!") return node.Scalar();
  std::string quoted = "\"";
  for (const char c : node.Scalar()) {
    if (c == '"' || c == '\\') quoted += '\\';
    quoted += c;
  }
  return quoted + "\"";
}

std::string flowText(const YAML::Node& node) {
  if (node.IsScalar()) return scalarText(node);
  if (!node.IsDefined() || node.IsNull()) return "null";
  std::string text;
  if (node.IsSequence()) {
    for (const auto& item : node) text += (text.empty() ? "" : ", ") + flowText(item);
    return "[" + text + "]";
  }
  for (const auto& entry : node) {
    text += (text.empty() ? "" : ", ") + scalarText(entry.first) + ": " + flowText(entry.second);
  }
  return "{" + text + "}";
}

bool isBlockCollection(const YAML::Node& node) {
  return (node.IsMap() || node.IsSequence()) && node.size() > 0 && node.Style() != YAML::EmitterStyle::Flow;
}

void appendBlock(const YAML::Node& node, const std::string& indent, std::string& text);

// One entry's value after "key:" or "-": on the same line, or below it for a block collection.
void appendValue(const YAML::Node& value, const std::string& indent, std::string& text) {
  if (isBlockCollection(value)) {
    text += "\n";
    appendBlock(value, indent + "  ", text);
  } else if (!value.IsDefined() || value.IsNull()) {
    text += "\n";
  } else {
    text += " " + flowText(value) + "\n";
  }
}

void appendBlock(const YAML::Node& node, const std::string& indent, std::string& text) {
  if (node.IsSequence()) {
    for (const auto& item : node) {
      text += indent + "-";
      appendValue(item, indent, text);
    }
    return;
  }
  for (const auto& entry : node) {
    text += indent + scalarText(entry.first) + ":";
    appendValue(entry.second, indent, text);
  }
}

}  // namespace

std::string configText(const ConfigNode& node) {
  node.requireMap();
  std::string text;
  appendBlock(node.yaml(), "", text);
  return text;
}

}  // namespace trainsim
