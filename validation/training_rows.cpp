#include "validation/training_rows.h"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <optional>
#include <set>
#include <stdexcept>

#include "base/text_file.h"

namespace trainsim::validation {
namespace {

// The name of the file that lists the sources, in the directory beside them.
constexpr const char* kSourcesIndex = "sources";

std::string nonEmptyString(const ConfigNode& node) {
  std::string text = node.asString();
  if (text.empty()) node.failExpected("a non-empty string");
  return text;
}

TrainingSource readTrainingSource(const ConfigNode& root, const std::string& id) {
  root.allowKeys({"id", "title", "citation", "metric", "metric_definition", "rate_fit", "memory_definition",
                  "userbuffers", "rows"});
  TrainingSource source;
  const ConfigNode id_node = root.child("id");
  source.id = id_node.asString();
  if (source.id != id) id_node.fail("expected \"" + id + "\", the file's name (sources.yaml lists it by its id)");
  source.title = nonEmptyString(root.child("title"));
  source.citation = nonEmptyString(root.child("citation"));
  const ConfigNode metric = root.child("metric");
  const auto named = trainingMetricNamed(metric.asString());
  if (!named) {
    metric.failExpected(
        "hardware_tflops_per_gpu, tflops_per_gpu, iteration_time_s, tokens_per_s_per_gpu or layer_time_ms");
  }
  source.metric = *named;
  source.metric_definition = nonEmptyString(root.child("metric_definition"));
  source.rate_fit = root.boolean("rate_fit", true);
  source.memory_definition = root.string("memory_definition", "");
  // Named userbuffers settings the rows refer to by YAML alias (tp_comm_overlap_config:
  // *name); the experiment loader checks them where a row uses them.
  if (auto presets = root.optionalChild("userbuffers")) presets->requireMap();
  return source;
}

TrainingRow readRow(const ConfigNode& node, const TrainingSource& source) {
  node.allowKeys({"id", "model", "published", "slow", "micro_batch_published", "virtual_stages_published",
                  "assumptions", "experiment"});
  TrainingRow row;
  const ConfigNode id = node.child("id");
  row.id = id.asString();
  if (!row.id.starts_with(source.id + "-")) id.failExpected("an id of the form " + source.id + "-NNN");
  row.source = source.id;
  row.model = nonEmptyString(node.child("model"));
  // `published: {<metric>: value}`: the metric is the source's, written again so that a row
  // read on its own says what its figure is.
  const ConfigNode published = node.child("published");
  const std::string metric(trainingMetricName(source.metric));
  published.allowKeys({metric, "peak_memory_GiB"});
  row.published = published.child(metric).asPositiveNumber();
  if (auto memory = published.optionalChild("peak_memory_GiB")) {
    if (source.memory_definition.empty()) {
      memory->fail("a published peak memory needs the source's memory_definition (what the figure counts)");
    }
    row.published_memory_GiB = memory->asPositiveNumber();
  }
  row.slow = node.child("slow").asBool();
  row.micro_batch_published = node.boolean("micro_batch_published", true);
  row.virtual_stages_published = node.boolean("virtual_stages_published", true);
  row.assumptions = node.child("assumptions").asString();
  node.child("experiment").requireMap();
  return row;
}

// `text` with the lines of rows other than `keep` emptied, where each row of the block list
// `rows` starts on a line of its own; else all of `text`, and nullopt.
std::optional<std::string> oneRowText(const std::string& text, const std::vector<ConfigNode>& rows, std::size_t keep) {
  std::vector<int> starts;
  for (const auto& row : rows) {
    const int line = row.yaml().Mark().line;
    if (line < 0 || (!starts.empty() && line <= starts.back())) return std::nullopt;
    starts.push_back(line);
  }
  const int first = starts[keep];
  const int end = keep + 1 < starts.size() ? starts[keep + 1] : std::numeric_limits<int>::max();
  std::string kept;
  kept.reserve(text.size());
  int line = 0;
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t stop = text.find('\n', begin);
    stop = stop == std::string::npos ? text.size() : stop + 1;
    if (line < starts.front() || (line >= first && line < end)) {
      kept.append(text, begin, stop - begin);
    } else if (text[stop - 1] == '\n') {
      kept += '\n';
    }
    begin = stop;
    ++line;
  }
  return kept;
}

void readSourceFile(const std::string& path, const std::string& id, TrainingRows& rows, std::set<std::string>& ids) {
  const auto text = std::make_shared<const std::string>(
      valueOrThrow(readTextFile(path, "a training source file", kMaxConfigFileBytes)));
  const ConfigNode root = parseConfigText(*text, path);
  if (!root.isMap()) root.failExpected("a training source (a mapping with id, title, citation, metric and rows)");
  rows.sources.push_back(readTrainingSource(root, id));
  const ConfigNode list = root.child("rows");
  const auto elements = list.elements();
  if (elements.empty()) list.failExpected("at least one row");
  for (std::size_t i = 0; i < elements.size(); ++i) {
    TrainingRow row = readRow(elements[i], rows.sources.back());
    if (!ids.insert(row.id).second) elements[i].child("id").fail("row id given twice in the suite");
    row.file = path;
    row.index = i;
    if (auto one_row = oneRowText(*text, elements, i)) {
      row.text = std::make_shared<const std::string>(std::move(*one_row));
    } else {
      row.text = text;
      row.in_text = i;
    }
    rows.rows.push_back(std::move(row));
  }
}

// A source file that sources.yaml does not list would silently drop out of the suite.
void refuseUnlistedFiles(const std::string& directory, const std::set<std::string>& listed) {
  std::vector<std::string> unlisted;
  for (const auto& entry : std::filesystem::directory_iterator(directory)) {
    const auto& path = entry.path();
    if (path.extension() != ".yaml" || path.stem() == kSourcesIndex) continue;
    if (!listed.contains(path.stem().string())) unlisted.push_back(path.string());
  }
  if (unlisted.empty()) return;
  std::sort(unlisted.begin(), unlisted.end());
  throwInputError(unlisted.front(), "", "a training source file that sources.yaml does not list");
}

}  // namespace

ConfigNode TrainingRow::experimentNode() const {
  const ConfigNode parsed = parseConfigText(*text, file).child("rows").elements().at(in_text).child("experiment");
  // Named as in the whole file, whichever rows `text` holds.
  return ConfigNode(parsed.yaml(), parsed.source(), "rows[" + std::to_string(index) + "].experiment");
}

const TrainingSource& TrainingRows::source(std::string_view id) const {
  for (const auto& source : sources) {
    if (source.id == id) return source;
  }
  throw std::out_of_range("no training source " + std::string(id));
}

const TrainingRow* TrainingRows::find(std::string_view id) const {
  for (const auto& row : rows) {
    if (row.id == id) return &row;
  }
  return nullptr;
}

std::string trainingRowsDirectory(const ConfigPaths& paths) {
  return (std::filesystem::path(paths.config_dir) / "validation" / "training").string();
}

Expected<TrainingRows> loadTrainingRows(const ConfigPaths& paths) {
  return catchInputErrors([&]() -> TrainingRows {
    const std::string directory = trainingRowsDirectory(paths);
    const ConfigNode index = loadConfigFile(presetPath(paths, "validation/training", kSourcesIndex));
    index.allowKeys({"sources"});
    TrainingRows rows;
    std::set<std::string> listed;
    std::set<std::string> ids;
    for (const ConfigNode& entry : index.child("sources").elements()) {
      const std::string id = nonEmptyString(entry);
      if (!listed.insert(id).second) entry.fail("source listed twice");
      const std::string path = presetPath(paths, "validation/training", id);
      std::error_code ignored;
      if (!std::filesystem::is_regular_file(path, ignored)) entry.fail("no source file " + path);
      readSourceFile(path, id, rows, ids);
    }
    if (rows.rows.empty()) index.child("sources").failExpected("at least one source");
    refuseUnlistedFiles(directory, listed);
    return rows;
  });
}

}  // namespace trainsim::validation
