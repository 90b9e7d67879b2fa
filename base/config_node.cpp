#include "base/config_node.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>

#include "base/error.h"
#include "base/text_file.h"
#include "base/utf8.h"

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

// The finite number `text` spells, if it spells one.
std::optional<double> parseNumber(const std::string& text) {
  double value = 0.0;
  std::istringstream stream(text);
  stream.imbue(std::locale::classic());
  stream >> value;
  if (text.empty() || stream.fail() || !stream.eof() || !std::isfinite(value)) return std::nullopt;
  return value;
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

ConfigNode::ConfigNode(YAML::Node node, std::shared_ptr<ConfigSource> source, std::string path, YAML::Mark key_mark)
    : node_(std::move(node)), source_(std::move(source)), path_(std::move(path)), key_mark_(key_mark) {}

std::string ConfigNode::where() const {
  // A value that came from --set (or lies inside one) points at the command line.
  for (const auto& [key, display] : source_->overrides) {
    if (path_ == key || path_.starts_with(key + ".") || path_.starts_with(key + "[")) return display;
  }
  YAML::Mark mark = node_.Mark();
  // An empty value (`seq_len:` and nothing) is placed at the next token, often the next
  // key's line: its own key is where the user has to look.
  if (node_.IsNull() && !key_mark_.is_null() && (mark.line < 0 || mark.line > key_mark_.line)) mark = key_mark_;
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
  // Found by walking the entries rather than by lookup, to keep the key's position.
  for (const auto& entry : node_) {
    if (entry.first.IsScalar() && entry.first.Scalar() == key) {
      return ConfigNode(entry.second, source_, childPath(key), entry.first.Mark());
    }
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
    items.emplace_back(key, ConfigNode(entry.second, source_, childPath(key), entry.first.Mark()));
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
  const auto value = parseNumber(node_.Scalar());
  if (!value) failExpected("a number");
  return *value;
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

double ConfigNode::asNumberIn(double min, double max) const {
  const double value = min > 0.0 ? asPositiveNumber() : min == 0.0 ? asNonNegativeNumber() : asNumber();
  if (value < min || value > max) failExpected("a number between " + formatBound(min) + " and " + formatBound(max));
  return value;
}

int64_t ConfigNode::asIntegerIn(int64_t min, int64_t max) const {
  const std::string range =
      "an integer between " + formatBound(static_cast<double>(min)) + " and " + formatBound(static_cast<double>(max));
  // A number above the bound is out of range whether or not it is whole or beyond 2^53
  // (1e300): say so rather than "expected an integer".
  if (node_.IsScalar()) {
    const auto number = parseNumber(node_.Scalar());
    if (number && *number > static_cast<double>(max)) failExpected(range);
  }
  const int64_t value = min > 0 ? asPositiveInteger() : min == 0 ? asNonNegativeInteger() : asInteger();
  if (value < min || value > max) failExpected(range);
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

double ConfigNode::numberIn(std::string_view key, double default_value, double min, double max) const {
  auto value = optionalChild(key);
  return value ? value->asNumberIn(min, max) : default_value;
}

int64_t ConfigNode::integerIn(std::string_view key, int64_t default_value, int64_t min, int64_t max) const {
  auto value = optionalChild(key);
  return value ? value->asIntegerIn(min, max) : default_value;
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

// Deeper than any config needs (the shipped ones nest four levels, Hugging Face configs a
// few more) and far below where yaml-cpp's recursive parser gives up (2,000 levels, with
// only "bad file" to say) or the stack runs out.
constexpr std::size_t kMaxNesting = 64;

// Something yaml-cpp's loader accepts, or reports poorly, that a config must not contain.
struct YamlIssue {
  YAML::Mark mark;
  std::string key_path;
  std::string message;
};

std::string joinPath(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

// "line 4", or "column 12" when both positions are on one line (a flow mapping, a --set value).
std::string earlierPosition(const YAML::Mark& first, const YAML::Mark& later) {
  if (first.line == later.line) return "column " + std::to_string(first.column + 1);
  return "line " + std::to_string(first.line + 1);
}

// Follows the parser's events for one document, tracking the key path of every node, and
// throws a YamlIssue at the first duplicate key, unclosed quote or too-deep nesting.
// yaml-cpp's own loader keeps the first of two equal keys and runs an unclosed quoted
// string on to the end of the file, so both are caught here, before the tree is built.
class StructureChecker final : public YAML::EventHandler {
 public:
  // A quoted string that ran over several lines: legal YAML, but when the parse then fails,
  // most likely a string whose closing quote is missing and that ended at a later quote.
  struct MultiLineQuote {
    YAML::Mark start;
    std::string path;
    char quote = '"';
    int end_line = 0;  // 0-based, as YAML::Mark
  };
  [[nodiscard]] const std::optional<MultiLineQuote>& lastMultiLineQuote() const { return last_multi_line_quote_; }

  StructureChecker(const std::string& text, std::string root_path) : text_(text), root_path_(std::move(root_path)) {
    // yaml-cpp's positions count bytes after a UTF-8 byte order mark.
    if (text_.starts_with("\xEF\xBB\xBF")) text_offset_ = 3;
  }

  void OnDocumentStart(const YAML::Mark& /*mark*/) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t /*anchor*/) override { (void)enter(mark, nullptr); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t /*anchor*/) override { (void)enter(mark, nullptr); }
  void OnScalar(const YAML::Mark& mark, const std::string& /*tag*/, YAML::anchor_t /*anchor*/,
                const std::string& value) override {
    const std::string path = enter(mark, &value);
    checkQuoteClosed(mark, path);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string& /*tag*/, YAML::anchor_t /*anchor*/,
                       YAML::EmitterStyle::value /*style*/) override {
    push(mark, false);
  }
  void OnSequenceEnd() override { frames_.pop_back(); }
  void OnMapStart(const YAML::Mark& mark, const std::string& /*tag*/, YAML::anchor_t /*anchor*/,
                  YAML::EmitterStyle::value /*style*/) override {
    push(mark, true);
  }
  void OnMapEnd() override { frames_.pop_back(); }

 private:
  struct Frame {
    bool is_map = false;
    std::string path;
    bool expecting_key = true;  // a mapping alternates key, value
    std::optional<std::string> key;
    std::map<std::string, YAML::Mark> keys;  // the scalar keys seen, at their positions
    std::size_t index = 0;                   // a list's next element
  };

  // Registers a node that starts at `mark` in the innermost container; returns its key path.
  std::string enter(const YAML::Mark& mark, const std::string* scalar) {
    if (frames_.empty()) return root_path_;
    Frame& frame = frames_.back();
    if (!frame.is_map) return frame.path + "[" + std::to_string(frame.index++) + "]";
    if (frame.expecting_key) {
      frame.expecting_key = false;
      frame.key.reset();
      if (scalar == nullptr) return frame.path;  // a null or complex key: no name to compare
      frame.key = *scalar;
      const std::string path = joinPath(frame.path, *scalar);
      const auto [first, inserted] = frame.keys.emplace(*scalar, mark);
      if (!inserted) {
        throw YamlIssue{mark, path,
                        "duplicate key \"" + *scalar + "\" (first at " + earlierPosition(first->second, mark) +
                            "); a mapping holds each key once"};
      }
      return path;
    }
    frame.expecting_key = true;
    return frame.key ? joinPath(frame.path, *frame.key) : frame.path;
  }

  void push(const YAML::Mark& mark, bool is_map) {
    std::string path = enter(mark, nullptr);
    if (frames_.size() >= kMaxNesting) {
      throw YamlIssue{mark, "",
                      "invalid YAML: nesting too deep (more than " + std::to_string(kMaxNesting) +
                          " levels of mappings and lists)"};
    }
    Frame frame;
    frame.is_map = is_map;
    frame.path = std::move(path);
    frames_.push_back(std::move(frame));
  }

  // A quoted scalar must end with its quote; yaml-cpp takes the end of the input instead.
  void checkQuoteClosed(const YAML::Mark& mark, const std::string& path) {
    if (mark.pos < 0) return;
    std::size_t at = static_cast<std::size_t>(mark.pos) + text_offset_;
    if (at >= text_.size() || (text_[at] != '"' && text_[at] != '\'')) return;  // plain, block or tagged
    const char quote = text_[at];
    int lines = 0;
    for (++at; at < text_.size(); ++at) {
      if (text_[at] == '\n') ++lines;
      if (quote == '"' && text_[at] == '\\') {
        ++at;  // an escape: the next character cannot close the string
      } else if (text_[at] == quote) {
        if (quote == '\'' && at + 1 < text_.size() && text_[at + 1] == '\'') {
          ++at;  // '' is a quote inside a single-quoted string
        } else {
          if (lines > 0) last_multi_line_quote_ = MultiLineQuote{mark, path, quote, mark.line + lines};
          return;
        }
      }
    }
    throw YamlIssue{
        mark, path,
        std::string("invalid YAML: unclosed quote (the string that starts here has no closing ") + quote + ")"};
  }

  const std::string& text_;
  std::size_t text_offset_ = 0;
  std::optional<MultiLineQuote> last_multi_line_quote_;
  std::string root_path_;
  std::vector<Frame> frames_;
};

// Stops at the start of a document that has content: a config is one document.
class ExtraDocumentFinder final : public YAML::EventHandler {
 public:
  explicit ExtraDocumentFinder(const std::string& text) : text_(text) {}

  // yaml-cpp's parser does not move past a token that cannot start a document (a ',' after
  // the document, as in `{"a": 1},`): it reports empty documents at the same place for ever.
  void OnDocumentStart(const YAML::Mark& mark) override {
    if (start_.pos >= 0 && mark.pos <= start_.pos) {
      const auto at = static_cast<std::size_t>(mark.pos);
      const char c = at < text_.size() ? text_[at] : ' ';
      throw YamlIssue{mark, "",
                      c > ' ' && c < 127 ? std::string("invalid YAML: unexpected \"") + c + "\""
                                         : std::string("invalid YAML: unexpected character")};
    }
    start_ = mark;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& /*mark*/, YAML::anchor_t /*anchor*/) override {}  // `---` and nothing: harmless
  void OnAlias(const YAML::Mark& /*mark*/, YAML::anchor_t /*anchor*/) override { found(); }
  void OnScalar(const YAML::Mark& /*mark*/, const std::string& /*tag*/, YAML::anchor_t /*anchor*/,
                const std::string& /*value*/) override {
    found();
  }
  void OnSequenceStart(const YAML::Mark& /*mark*/, const std::string& /*tag*/, YAML::anchor_t /*anchor*/,
                       YAML::EmitterStyle::value /*style*/) override {
    found();
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& /*mark*/, const std::string& /*tag*/, YAML::anchor_t /*anchor*/,
                  YAML::EmitterStyle::value /*style*/) override {
    found();
  }
  void OnMapEnd() override {}

 private:
  [[noreturn]] void found() const {
    throw YamlIssue{start_, "",
                    "a second YAML document starts here; a config file holds one document (remove the --- line and "
                    "what follows it)"};
  }
  const std::string& text_;
  YAML::Mark start_ = YAML::Mark::null_mark();
};

// Checks what yaml-cpp's loader lets through; YAML syntax errors propagate as YAML::Exception.
std::optional<YamlIssue> findStructureIssue(const std::string& text, const std::string& root_path) {
  std::istringstream stream(text);
  YAML::Parser parser(stream);
  StructureChecker checker(text, root_path);
  try {
    if (!parser.HandleNextDocument(checker)) return std::nullopt;
    ExtraDocumentFinder extra(text);
    while (parser.HandleNextDocument(extra)) {
    }
  } catch (const YamlIssue& issue) {
    return issue;
  } catch (const YAML::Exception& e) {
    // A string missing its closing quote runs on to the next quote (in a later value or
    // comment) and the parse fails right after it, far from the cause: point at the string.
    // A failure elsewhere is not blamed on a string that merely spans lines.
    const auto& quote = checker.lastMultiLineQuote();
    if (!quote || e.mark.line < quote->end_line || e.mark.line > quote->end_line + 1) throw;
    return YamlIssue{quote->start, quote->path,
                     "invalid YAML: " + e.msg + " at line " + std::to_string(e.mark.line + 1) + ", column " +
                         std::to_string(e.mark.column + 1) + "; the quoted string that starts here runs on to line " +
                         std::to_string(quote->end_line + 1) + ": is its closing " + quote->quote + " missing?"};
  }
  return std::nullopt;
}

std::string positionText(const std::string& name, const YAML::Mark& mark) {
  if (mark.line < 0) return name;
  return name + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

// A byte order mark of UTF-16 or UTF-32, which yaml-cpp reads and converts to UTF-8 itself.
bool hasWideByteOrderMark(std::string_view text) {
  return text.starts_with("\xFE\xFF") || text.starts_with("\xFF\xFE") ||
         text.starts_with(std::string_view("\x00\x00\xFE\xFF", 4));
}

// YAML and JSON are Unicode, and yaml-cpp passes any bytes through into the values: a name
// that is not UTF-8 would fail the JSON writers after the whole computation, so it is refused
// here at its position. Positions count bytes after a UTF-8 byte order mark, as yaml-cpp's do.
void requireUtf8(std::string_view text, const std::string& name) {
  if (hasWideByteOrderMark(text)) return;
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  const auto invalid = firstInvalidUtf8(text);
  if (!invalid) return;
  const TextPosition position = positionOf(text, *invalid);
  throwInputError(fmt::format("{}:{}:{}", name, position.line, position.column), "",
                  "invalid YAML: " + invalidUtf8Message(text, *invalid) + "; YAML and JSON files are UTF-8");
}

ConfigNode parseYamlText(const std::string& text, const std::string& name) {
  auto source = std::make_shared<ConfigSource>();
  source->file = name;
  requireUtf8(text, name);
  try {
    if (auto issue = findStructureIssue(text, "")) {
      throwInputError(positionText(name, issue->mark), issue->key_path, issue->message);
    }
    YAML::Node root = YAML::Load(text);
    return ConfigNode(root, source, "");
  } catch (const YAML::Exception& e) {
    throwInputError(positionText(name, e.mark), "", "invalid YAML: " + e.msg);
  }
}

}  // namespace

ConfigNode loadConfigFile(const std::string& file_path) {
  Expected<std::string> text = readTextFile(file_path, "a YAML file", kMaxConfigFileBytes);
  if (!text.ok()) throw InputError(text.error());
  ConfigNode root = parseYamlText(*text, file_path);
  if (!root.yaml().IsDefined() || root.yaml().IsNull()) throwInputError(file_path, "", "the file is empty");
  return root;
}

ConfigNode parseConfigText(const std::string& text, const std::string& name) { return parseYamlText(text, name); }

Override parseOverride(const std::string& text) {
  const auto equals = text.find('=');
  if (equals == std::string::npos || equals == 0) {
    throwInputError("--set " + text, "", "expected KEY=VALUE with a dotted key path, e.g. parallelism.tp=4");
  }
  // Checked as a file is: the key and the value end up in messages and outputs.
  if (const auto invalid = firstInvalidUtf8(text)) {
    throwInputError(
        "--set " + text, "",
        "expected KEY=VALUE, found " + invalidUtf8Message(text, *invalid) + " at byte " + std::to_string(*invalid + 1));
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
  const std::string full_path =
      root.path().empty() ? override_value.key_path : root.path() + "." + override_value.key_path;
  YAML::Node value;
  try {
    // A value is held to the same rules as a file: `--set parallelism={tp: 2, tp: 3}` is an error.
    if (auto issue = findStructureIssue(override_value.value, full_path)) {
      throwInputError(override_value.display, issue->key_path, issue->message);
    }
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
  root.source()->overrides[full_path] = override_value.display;
}

std::string formatBound(double value) {
  // Whole numbers as digits up to 10^15 (1048576, not 1.04858e+06); others in the shortest
  // form that reads back as the same value, with a plain exponent (1e18, 1e-300).
  if (std::floor(value) == value && std::fabs(value) < 1e15) {
    return std::to_string(static_cast<int64_t>(value));
  }
  std::ostringstream stream;
  stream.imbue(std::locale::classic());
  stream.precision(15);
  stream << value;
  std::string text = stream.str();
  const auto e = text.find('e');
  if (e == std::string::npos) return text;
  std::string exponent = text.substr(e + 1);
  std::string sign;
  if (!exponent.empty() && (exponent[0] == '+' || exponent[0] == '-')) {
    if (exponent[0] == '-') sign = "-";
    exponent.erase(0, 1);
  }
  while (exponent.size() > 1 && exponent[0] == '0') exponent.erase(0, 1);
  return text.substr(0, e + 1) + sign + exponent;
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
