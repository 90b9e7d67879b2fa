#include "calibrate/attention_benchmark_csv.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>

#include "base/config_node.h"
#include "base/text_file.h"
#include "base/utf8.h"
#include "calibrate/measurement_limits.h"
#include "calibrate/message_excerpt.h"

namespace trainsim::calibrate {
namespace {

// One cell of the file and where it starts (1-based), for messages.
struct Cell {
  std::string text;
  int line = 0;
  int column = 0;
  bool quoted = false;
};
using Record = std::vector<Cell>;

bool isBlank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

std::string lower(std::string_view text) {
  std::string result(text);
  for (char& c : result) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return result;
}

// The records of RFC 4180 CSV as pandas writes it: cells separated by commas, a cell with a
// comma, quote or line break in double quotes ("" for a quote), lines ending in \n or \r\n.
// Blanks around an unquoted cell are dropped; blank lines are skipped.
class CsvScanner {
 public:
  CsvScanner(std::string_view text, const std::string& name) : text_(text), name_(name) {
    if (text_.starts_with("\xEF\xBB\xBF")) text_.remove_prefix(3);  // a UTF-8 byte order mark
  }

  std::vector<Record> records() {
    std::vector<Record> result;
    while (i_ < text_.size()) {
      Record record = next();
      const bool blank = record.size() == 1 && record.front().text.empty() && !record.front().quoted;
      if (!blank) result.push_back(std::move(record));
    }
    return result;
  }

 private:
  void advance() {
    if (text_[i_] == '\n') {
      ++line_;
      column_ = 1;
    } else {
      ++column_;
    }
    ++i_;
  }
  void skipBlanks() {
    while (i_ < text_.size() && isBlank(text_[i_])) advance();
  }
  [[noreturn]] void fail(int line, int column, const std::string& message) const {
    throwInputError(fmt::format("{}:{}:{}", name_, line, column), "", message);
  }

  Record next() {
    Record record;
    while (true) {
      skipBlanks();
      Cell cell{{}, line_, column_, false};
      if (i_ < text_.size() && text_[i_] == '"') {
        cell.quoted = true;
        advance();
        bool closed = false;
        while (i_ < text_.size()) {
          const char c = text_[i_];
          advance();
          if (c != '"') {
            cell.text += c;
          } else if (i_ < text_.size() && text_[i_] == '"') {
            cell.text += '"';
            advance();
          } else {
            closed = true;
            break;
          }
        }
        if (!closed) fail(cell.line, cell.column, "a quoted cell is never closed");
        skipBlanks();
        if (i_ < text_.size() && text_[i_] != ',' && text_[i_] != '\n') {
          fail(line_, column_, "expected a comma or the end of the line after a quoted cell");
        }
      } else {
        while (i_ < text_.size() && text_[i_] != ',' && text_[i_] != '\n') {
          cell.text += text_[i_];
          advance();
        }
        while (!cell.text.empty() && isBlank(cell.text.back())) cell.text.pop_back();
      }
      record.push_back(std::move(cell));
      if (i_ < text_.size() && text_[i_] == ',') {
        advance();
        continue;
      }
      if (i_ < text_.size()) advance();  // the line's \n
      return record;
    }
  }

  std::string_view text_;
  const std::string& name_;
  std::size_t i_ = 0;
  int line_ = 1;
  int column_ = 1;
};

// The columns of a header, by name.
class Columns {
 public:
  Columns(const Record& header, const std::string& name) : name_(name), line_(header.front().line) {
    for (std::size_t index = 0; index < header.size(); ++index) {
      const Cell& cell = header[index];
      if (!index_.emplace(cell.text, index).second) {
        throwInputError(fmt::format("{}:{}:{}", name, cell.line, cell.column), "",
                        fmt::format("column \"{}\" appears twice in the header", messageExcerpt(cell.text)));
      }
    }
  }

  [[nodiscard]] bool has(const std::string& column) const { return index_.contains(column); }
  [[nodiscard]] std::optional<std::size_t> find(const std::string& column) const {
    const auto it = index_.find(column);
    if (it == index_.end()) return std::nullopt;
    return it->second;
  }
  [[nodiscard]] std::size_t require(const std::string& column, const std::string& layout) const {
    const auto index = find(column);
    if (!index) {
      throwInputError(
          fmt::format("{}:{}:1", name_, line_), "",
          fmt::format("the header has no column \"{}\" (cudnn-frontend sdpa benchmark, {} layout)", column, layout));
    }
    return *index;
  }

 private:
  const std::string& name_;
  int line_;
  std::map<std::string, std::size_t, std::less<>> index_;
};

// Typed reads of one row's cells; a cell that does not read fails at its position, naming its
// column.
class RowReader {
 public:
  RowReader(const Record& record, const Record& header, const std::string& name)
      : record_(record), header_(header), name_(name) {}

  [[noreturn]] void fail(std::size_t index, const std::string& message) const {
    const Cell& cell = record_[index];
    throwInputError(fmt::format("{}:{}:{}", name_, cell.line, cell.column), header_[index].text, message);
  }
  [[nodiscard]] const std::string& text(std::size_t index) const { return record_[index].text; }

  // A name (backend, data type, GPU): it goes into messages, calib.yaml and the JSON outputs,
  // which hold UTF-8 text only.
  [[nodiscard]] const std::string& name(std::size_t index) const {
    const std::string& cell = text(index);
    if (const auto invalid = firstInvalidUtf8(cell)) {
      fail(index, fmt::format("expected a name in UTF-8, found {}", invalidUtf8Message(cell, *invalid)));
    }
    return cell;
  }

  // A count of one kernel (sequence length, batch, heads), bounded as the YAML readers bound
  // theirs: a product of two stays inside int64.
  int64_t positiveWholeNumber(std::size_t index) const {
    const std::string& cell = text(index);
    int64_t value = 0;
    const auto [end, error] = std::from_chars(cell.data(), cell.data() + cell.size(), value);
    const bool too_large =
        error == std::errc::result_out_of_range || (error == std::errc() && value > limits::kMaxDimension);
    if (too_large && end == cell.data() + cell.size()) {
      fail(index, fmt::format("expected a whole number between 1 and {}, found \"{}\"",
                              formatBound(static_cast<double>(limits::kMaxDimension)), messageExcerpt(cell)));
    }
    if (cell.empty() || error != std::errc() || end != cell.data() + cell.size() || value <= 0) {
      fail(index, fmt::format("expected a positive whole number, found \"{}\"", messageExcerpt(cell)));
    }
    return value;
  }

  bool boolean(std::size_t index) const {
    const std::string value = lower(text(index));
    if (value == "true" || value == "1") return true;
    if (value == "false" || value == "0") return false;
    fail(index, fmt::format("expected True or False, found \"{}\"", messageExcerpt(text(index))));
  }

  // A time or rate: absent when the pass was not profiled (empty, "nan", "None" or 0) or did
  // not complete ("inf": benchmark_sdpa.py's time for a backend that ran out of memory, beside
  // a rate of 0); else at most `max`, as out-of-range values in YAML are refused.
  std::optional<double> measurement(std::size_t index, double max) const {
    const std::string& cell = text(index);
    const std::string folded = lower(cell);
    if (folded.empty() || folded == "nan" || folded == "none" || folded == "inf") return std::nullopt;
    double value = 0.0;
    const auto [end, error] = std::from_chars(cell.data(), cell.data() + cell.size(), value);
    if (error != std::errc() || end != cell.data() + cell.size() || !std::isfinite(value)) {
      fail(index, fmt::format("expected a number, found \"{}\"", messageExcerpt(cell)));
    }
    if (value < 0.0) fail(index, fmt::format("expected a number >= 0, found \"{}\"", messageExcerpt(cell)));
    if (value == 0.0) return std::nullopt;
    if (value > max) {
      fail(index,
           fmt::format("expected a number between 0 and {}, found \"{}\"", formatBound(max), messageExcerpt(cell)));
    }
    return value;
  }

  // A pass is measured when both its time and its rate are.
  std::optional<AttentionPassSample> pass(std::size_t time, std::size_t tflops) const {
    const auto time_ms = measurement(time, limits::kMaxTimeUs / 1e3);
    const auto rate = measurement(tflops, limits::kMaxTflops);
    if (!time_ms || !rate) return std::nullopt;
    return AttentionPassSample{*time_ms, *rate};
  }

 private:
  const Record& record_;
  const Record& header_;
  const std::string& name_;
};

AttentionBenchmark readAttentionCsv(std::string_view text, const std::string& name) {
  std::vector<Record> records = CsvScanner(text, name).records();
  if (records.empty()) {
    throwInputError(name, "", "the file is empty, expected a cudnn-frontend sdpa benchmark CSV with a header line");
  }
  const Record& header = records.front();
  const Columns columns(header, name);

  AttentionBenchmark benchmark;
  benchmark.source = name;
  if (columns.has("fwd_time_ms")) {
    benchmark.layout = "results";
  } else if (columns.has("forward_time")) {
    benchmark.layout = "artifacts";
  } else {
    throwInputError(fmt::format("{}:{}:1", name, header.front().line), "",
                    "not a cudnn-frontend sdpa benchmark CSV: the header has neither forward_time (artifacts "
                    "layout) nor fwd_time_ms (results layout)");
  }
  const bool results = benchmark.layout == "results";
  const std::string& layout = benchmark.layout;
  const std::size_t q_seqlen = columns.require("q_seqlen", layout);
  const std::size_t kv_seqlen = columns.require("kv_seqlen", layout);
  const std::size_t forward_time = columns.require(results ? "fwd_time_ms" : "forward_time", layout);
  const std::size_t backward_time = columns.require(results ? "bwd_time_ms" : "backward_time", layout);
  const std::size_t forward_tflops = columns.require(results ? "fwd_tflops" : "fwd_tflops_per_sec", layout);
  const std::size_t backward_tflops = columns.require(results ? "bwd_tflops" : "bwd_tflops_per_sec", layout);
  const std::optional<std::size_t> batch = columns.find("batch_size");
  const std::optional<std::size_t> q_heads = columns.find("num_q_heads");
  std::optional<std::size_t> backend = columns.find("backend");
  std::optional<std::size_t> data_type = columns.find(results ? "data_type" : "precision");
  std::optional<std::size_t> mask;
  std::optional<std::size_t> causal;
  if (results) {
    backend = columns.require("backend", layout);
    data_type = columns.require("data_type", layout);
    mask = columns.require("attn_mask", layout);
  } else {
    causal = columns.require("is_causal", layout);
    if (!backend && !data_type) {
      throwInputError(fmt::format("{}:{}:1", name, header.front().line), "",
                      "the header has neither a backend nor a precision column (cudnn-frontend sdpa benchmark, "
                      "artifacts layout)");
    }
  }
  const std::optional<std::size_t> success = columns.find("success");
  const std::optional<std::size_t> deterministic = columns.find("deterministic_bwd");
  const std::optional<std::size_t> sliding_window = columns.find("sliding_window_size");
  const std::optional<std::size_t> gpu_name = columns.find("gpu_name");

  for (std::size_t r = 1; r < records.size(); ++r) {
    const Record& record = records[r];
    if (record.size() != header.size()) {
      throwInputError(fmt::format("{}:{}:{}", name, record.front().line, record.front().column), "",
                      fmt::format("{} cells, the header has {}", record.size(), header.size()));
    }
    const RowReader cells(record, header, name);
    if (success && !cells.boolean(*success)) {
      ++benchmark.failed_rows;
      continue;
    }
    AttentionBenchmarkRow row;
    row.line = record.front().line;
    if (backend) {
      row.backend = cells.name(*backend);
    } else {
      row.backend = "cudnn_fe";  // benchmark_fp8_sdpa.py's precision-column files: cuDNN only
    }
    if (!results) {
      // benchmark_bf16_sdpa.py names its FP8 cuDNN runs cudnn_fe_fp8; the rest ran BF16.
      row.data_type = "bf16";
      if (row.backend.ends_with("_fp8")) {
        row.backend.resize(row.backend.size() - 4);
        row.data_type = "fp8";
      }
    }
    if (data_type) row.data_type = cells.name(*data_type);
    if (mask) {
      const std::string value = cells.text(*mask);
      row.mask = value == "top_left" || value == "bottom_right" ? AttentionMask::kCausal
                 : value == "no_mask"                           ? AttentionMask::kNone
                                                                : AttentionMask::kOther;
    } else {
      row.mask = cells.boolean(*causal) ? AttentionMask::kCausal : AttentionMask::kNone;
    }
    row.q_seqlen = cells.positiveWholeNumber(q_seqlen);
    row.kv_seqlen = cells.positiveWholeNumber(kv_seqlen);
    if (batch && q_heads) row.sequences = cells.positiveWholeNumber(*batch) * cells.positiveWholeNumber(*q_heads);
    if (deterministic) row.deterministic_backward = cells.boolean(*deterministic);
    if (sliding_window) {
      const std::string value = lower(cells.text(*sliding_window));
      row.sliding_window = !value.empty() && value != "none" && value != "nan";
    }
    row.forward = cells.pass(forward_time, forward_tflops);
    row.backward = cells.pass(backward_time, backward_tflops);
    if (gpu_name) {
      row.gpu_name = cells.name(*gpu_name);
      auto& names = benchmark.gpu_names;
      if (!row.gpu_name.empty() && std::find(names.begin(), names.end(), row.gpu_name) == names.end()) {
        names.push_back(row.gpu_name);
      }
    }
    benchmark.rows.push_back(std::move(row));
  }
  return benchmark;
}

}  // namespace

Expected<AttentionBenchmark> parseAttentionBenchmarkCsv(std::string_view text, const std::string& name) {
  return catchInputErrors([&] { return readAttentionCsv(text, name); });
}

Expected<AttentionBenchmark> loadAttentionBenchmarkCsv(const std::string& path) {
  Expected<std::string> text = readTextFile(path, "a cudnn-frontend sdpa benchmark CSV", kMaxMeasurementFileBytes);
  if (!text.ok()) return text.error();
  return parseAttentionBenchmarkCsv(*text, path);
}

}  // namespace trainsim::calibrate
