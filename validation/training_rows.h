// The published end-to-end training measurements the iteration simulation is checked against
// (`trainsim validate training`), read from the data files that hold them with their
// citations: <config dir>/validation/training/<source id>.yaml, one file per source, listed
// in the suite's order by sources.yaml beside them (configs/validation/README.md describes
// the schema). Each row carries the experiment that reproduces the run, in the ordinary
// experiment schema, and every setting the source does not publish is written down in the
// row's assumptions. The figures come from ../shared/validation/training.yaml (row ids kept).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/config_node.h"
#include "base/config_paths.h"
#include "base/expected.h"
#include "validation/training_metric.h"

namespace trainsim::validation {

struct TrainingSource {
  std::string id;        // the file's name without .yaml
  std::string title;     // short name for tables
  std::string citation;  // paper / document, table, and where the configuration comes from
  TrainingMetric metric = TrainingMetric::kIterationTime;
  std::string metric_definition;
  // false: validation only. `--fit-rate-fraction` leaves the source's rows out of the fit (and
  // so out of its held-out figures): they are predicted at the fractions the other sources
  // give, out of sample by construction. For sources whose runs rely on what the model lacks
  // (the MoE rows' DeepEP/HybridEP dispatchers and recompute modules), which would otherwise
  // pull a GPU's kernel-rate fraction to absorb it.
  bool rate_fit = true;
  // What the rows' published peak memory per GPU is (TrainingRow::published_memory_GiB), in
  // the source's words; empty when the source publishes none.
  std::string memory_definition;
};

struct TrainingRow {
  std::string id;      // "<source id>-NNN", unique over the suite
  std::string source;  // TrainingSource::id
  std::string model;   // the model as the source names it
  // The published figure, in the source's metric (TrainingSource::metric).
  double published = 0.0;
  // The published peak memory per GPU (GiB) where the source gives it
  // (published.peak_memory_GiB; the source's memory_definition says what it counts):
  // compared with the memory model's peak over the stages.
  std::optional<double> published_memory_GiB;
  // Takes long to simulate (more than about 15 s): left out of the suite unless asked for
  // (`trainsim validate training --all`).
  bool slow = false;
  // false: the source does not publish the micro-batch size (the chunk count), which the suite
  // then chooses (validation/unpublished_plan_choice.h); the experiment holds the smallest
  // candidate, 1.
  bool micro_batch_published = true;
  bool virtual_stages_published = true;
  // Settings the source does not publish and what the row assumes for them.
  std::string assumptions;
  // The row's `experiment:` mapping is parsed afresh for each use (experimentNode), so that
  // overrides applied to one copy never reach another, and so that suite runs on several
  // threads share no YAML nodes. It is parsed from `text`: the file's text with the other
  // rows' lines left empty, so that positions are the file's and a parse reads one row.
  std::shared_ptr<const std::string> text;
  std::string file;
  std::size_t index = 0;    // in the file's `rows:`
  std::size_t in_text = 0;  // the row's index among the rows `text` holds

  // The row's experiment document, positioned in its file ("rows[3].experiment.training...").
  [[nodiscard]] ConfigNode experimentNode() const;
};

struct TrainingRows {
  std::vector<TrainingSource> sources;  // in sources.yaml's order
  std::vector<TrainingRow> rows;        // grouped by source in that order, each file's in its order

  // The source of that id; throws std::out_of_range for an unknown one.
  [[nodiscard]] const TrainingSource& source(std::string_view id) const;
  // The row of that id, or nullptr.
  [[nodiscard]] const TrainingRow* find(std::string_view id) const;
};

// The directory of the source files: <config dir>/validation/training.
[[nodiscard]] std::string trainingRowsDirectory(const ConfigPaths& paths);

// Reads sources.yaml and every source file it lists. Errors (positioned file:line:col, with the
// key) for an unknown or missing key, a value of the wrong type, a metric the suite does not
// know, a published figure not in the source's metric, a row id given twice or not of its
// source, and a .yaml file in the directory that sources.yaml does not list. The rows'
// experiments are not loaded here: the suite reports a row whose experiment is rejected.
[[nodiscard]] Expected<TrainingRows> loadTrainingRows(const ConfigPaths& paths);

}  // namespace trainsim::validation
