#include "calibrate/nccl_tests_log.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <set>

#include "base/config_node.h"
#include "base/text_file.h"
#include "base/utf8.h"
#include "calibrate/measurement_limits.h"
#include "calibrate/message_excerpt.h"
#include "calibrate/nccl_version.h"

namespace trainsim::calibrate {
namespace {

using perf::CollectiveOp;

// One whitespace-separated word of a line and its 1-based column in the file's line.
struct Token {
  std::string_view text;
  std::size_t column = 0;
};

std::vector<Token> tokenize(std::string_view text, std::size_t first_column) {
  std::vector<Token> tokens;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r')) ++i;
    const std::size_t start = i;
    while (i < text.size() && text[i] != ' ' && text[i] != '\t' && text[i] != '\r') ++i;
    if (i > start) tokens.push_back({text.substr(start, i - start), first_column + start});
  }
  return tokens;
}

std::optional<double> parseNumber(std::string_view text) {
  double value = 0.0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

bool isWholeNumber(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Whether a line under a run's column header is meant as a result row: its first word starts
// with a digit and reads as a number would be written (digits, letters, '.', ',', '+', '-'),
// such as "1048576", or "4M" or "1,024" that do not read. Such a line is a row, read or
// refused, never skipped: a dropped row moves the fit without a word. What else appears
// between rows (NCCL's "host:pid:tid [0] NCCL INFO" lines, even with a numeric host; other
// programs' output) has a first word that starts otherwise or holds ':', '[' or '/'.
bool looksLikeResultRow(std::string_view first_word) {
  if (first_word.empty() || !(first_word.front() >= '0' && first_word.front() <= '9')) return false;
  return std::all_of(first_word.begin(), first_word.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '.' || c == ',' ||
           c == '+' || c == '-';
  });
}

// Matching is by hand, left to right, in time linear in the line: std::regex recurses once
// per character it matches and overflows the stack on a long line (a 100 KB comment).
bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f' || c == '\n'; }
bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isWordChar(char c) { return isDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }

// A read position in one line, for the fixed formats of launcher tags and rank lines.
class Cursor {
 public:
  explicit Cursor(std::string_view text) : text_(text) {}

  [[nodiscard]] std::size_t position() const { return position_; }
  [[nodiscard]] std::string_view rest() const { return text_.substr(position_); }
  [[nodiscard]] bool atEnd() const { return position_ == text_.size(); }

  // Skips white space; true when there was some (a `\s+` of the format).
  bool spaces() {
    const std::size_t start = position_;
    while (position_ < text_.size() && isSpace(text_[position_])) ++position_;
    return position_ > start;
  }
  // Takes `word` when the text continues with it.
  bool literal(std::string_view word) {
    if (!rest().starts_with(word)) return false;
    position_ += word.size();
    return true;
  }
  // One or more digits, or nothing (empty) when there are none.
  std::string_view digits() {
    const std::size_t start = position_;
    while (position_ < text_.size() && isDigit(text_[position_])) ++position_;
    return text_.substr(start, position_ - start);
  }
  // One or more characters that are not white space.
  std::string_view word() {
    const std::size_t start = position_;
    while (position_ < text_.size() && !isSpace(text_[position_])) ++position_;
    return text_.substr(start, position_ - start);
  }
  // Up to and including `end`; false (and nothing taken) when `end` does not follow.
  bool through(char end) {
    const std::size_t found = text_.find(end, position_);
    if (found == std::string_view::npos) return false;
    position_ = found + 1;
    return true;
  }

 private:
  std::string_view text_;
  std::size_t position_ = 0;
};

// A line of the file with the launcher's tag removed.
struct LogLine {
  std::string_view text;      // after the tag
  std::size_t column = 1;     // column of text[0] in the file's line
  int number = 0;             // 1-based
  std::string_view raw;       // the whole line
  std::string_view tag_rank;  // the launcher's rank digits (in raw); empty without a tag
  bool is_stderr = false;
};

// "[1,3]<stdout>:" (mpirun --tag-output: job, rank, stream) or "3: " (srun --label).
LogLine stripTag(std::string_view raw, int number) {
  LogLine line{raw, 1, number, raw, {}, false};
  Cursor mpirun(raw);
  if (mpirun.literal("[") && !mpirun.digits().empty() && mpirun.literal(",")) {
    const std::string_view rank = mpirun.digits();
    if (!rank.empty() && mpirun.literal("]<")) {
      const bool is_stderr = mpirun.literal("stderr");
      if ((is_stderr || mpirun.literal("stdout")) && mpirun.literal(">:")) {
        line.tag_rank = rank;
        line.is_stderr = is_stderr;
        line.text = raw.substr(mpirun.position());
        line.column = 1 + mpirun.position();
        return line;
      }
    }
  }
  Cursor srun(raw);
  const std::string_view rank = srun.digits();
  if (!rank.empty() && srun.literal(": ")) {
    line.tag_rank = rank;
    line.text = raw.substr(srun.position());
    line.column = 1 + srun.position();
  }
  return line;
}

// nccl-tests binaries by name: the ops the simulator models, and those it skips.
struct BinaryName {
  std::string_view binary;  // without "_perf"
  std::optional<CollectiveOp> op;
};
constexpr BinaryName kBinaries[] = {
    {"all_reduce", CollectiveOp::kAllReduce},
    {"all_gather", CollectiveOp::kAllGather},
    {"reduce_scatter", CollectiveOp::kReduceScatter},
    {"alltoall", CollectiveOp::kAllToAll},
    {"sendrecv", CollectiveOp::kSendRecv},
    {"broadcast", CollectiveOp::kBroadcast},
    {"reduce", std::nullopt},
    {"gather", std::nullopt},
    {"scatter", std::nullopt},
    {"hypercube", std::nullopt},
};

// The first "NAME_perf" that stands as a word of its own (not inside "x.NAME_perf2" or
// "MyNAME_perf"), NAME in lower case and underscores; nullopt when the first such name is not
// an nccl-tests binary.
std::optional<BinaryName> binaryMentioned(std::string_view text) {
  auto lower = [](char c) { return (c >= 'a' && c <= 'z') || c == '_'; };
  std::size_t i = 0;
  while (i < text.size()) {
    if (!lower(text[i])) {
      ++i;
      continue;
    }
    // A run of [a-z_]: it is a name when no word character touches it on either side.
    const std::size_t start = i;
    while (i < text.size() && lower(text[i])) ++i;
    const bool free_before = start == 0 || !isWordChar(text[start - 1]);
    const bool free_after = i == text.size() || !isWordChar(text[i]);
    const std::string_view run = text.substr(start, i - start);
    if (free_before && free_after && run.size() > 5 && run.ends_with("_perf")) {
      const std::string_view name = run.substr(0, run.size() - 5);
      for (const auto& binary : kBinaries) {
        if (binary.binary == name) return binary;
      }
      return std::nullopt;
    }
  }
  return std::nullopt;
}

int64_t elementBytes(std::string_view type) {
  static const std::map<std::string_view, int64_t> kSizes = {
      {"int8", 1},  {"uint8", 1},   {"char", 1},     {"f8e4m3", 1}, {"f8e5m2", 1}, {"fp8_e4m3", 1}, {"fp8_e5m2", 1},
      {"half", 2},  {"float16", 2}, {"bfloat16", 2}, {"bf16", 2},   {"int32", 4},  {"uint32", 4},   {"int", 4},
      {"float", 4}, {"float32", 4}, {"int64", 8},    {"uint64", 8}, {"double", 8}, {"float64", 8},
  };
  const auto it = kSizes.find(type);
  return it == kSizes.end() ? 0 : it->second;
}

struct ResultRow {
  int line = 0;
  double size = 0.0;
  double count = 0.0;
  std::string type;
  std::string redop;  // empty without a redop column
  std::optional<int64_t> root;
  double time_us = 0.0;
  double algbw_GBps = 0.0;
  double busbw_GBps = 0.0;
};

struct RankEntry {
  int64_t rank = 0;
  std::string host;
  std::string gpu;
  int line = 0;
};

struct ColumnIndices {
  int line = 0;
  std::size_t count = 0;  // tokens per row
  std::size_t size = 0, elements = 0, type = 0;
  std::optional<std::size_t> redop, root;
  std::vector<std::size_t> times;  // index of each "time" column (out-of-place first)
};

// The NCCL release a line names: nccl-tests' "# nccl-tests version V nccl-headers=H
// nccl-library=L" (printed before a run's header since nccl-tests 2.17.4), or NCCL's own
// "NCCL version 2.18.5+cuda12.2" (NCCL_DEBUG=VERSION or INFO, at the first communicator's
// creation, after the header).
struct ReleaseLine {
  double code = 0.0;  // NCCL_VERSION_CODE
  int line = 0;
  bool before_header = false;  // the nccl-tests line, which names the run that follows
};

struct PendingRun {
  int header_line = 0;
  std::optional<ReleaseLine> release;
  std::optional<BinaryName> binary;
  int binary_line = 0;
  std::vector<RankEntry> ranks;
  std::optional<ColumnIndices> columns;
  std::vector<ResultRow> rows;
};

class LogParser {
 public:
  LogParser(std::string name, std::optional<CollectiveOp> hint) : name_(std::move(name)), hint_(hint) {}

  NcclTestsLog parse(std::string_view text) {
    int number = 0;
    std::size_t begin = 0;
    while (begin <= text.size()) {
      std::size_t end = text.find('\n', begin);
      if (end == std::string_view::npos) end = text.size();
      ++number;
      const std::string_view raw = text.substr(begin, end - begin);
      if (!(end == text.size() && raw.empty())) handle(stripTag(raw, number));
      if (end == text.size()) break;
      begin = end + 1;
    }
    finish(number);
    if (log_.runs.empty() && skipped_ == 0) {
      throwInputError(name_, "",
                      "no nccl-tests run found: expected a \"# nThread ... nGpus ...\" header followed by a "
                      "\"# Using devices\" rank list and result rows");
    }
    if (log_.runs.empty()) {
      throwInputError(name_, "", "no run of an operation trainsim models (all_reduce, all_gather, ...) in the file");
    }
    return std::move(log_);
  }

 private:
  [[noreturn]] void fail(int line, std::size_t column, const std::string& message) const {
    throwInputError(fmt::format("{}:{}:{}", name_, line, column), "", message);
  }

  // Digits as a rank number; more than int64 holds is an error at the digits' column.
  int64_t wholeNumber(std::string_view digits, int line, std::size_t column, std::string_view what) const {
    int64_t value = 0;
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (error != std::errc() || end != digits.data() + digits.size()) {
      fail(line, column,
           fmt::format("{}: expected a whole number below 2^63, found \"{}\"", what, messageExcerpt(digits)));
    }
    return value;
  }

  // "#  Rank  R [Group G] Pid P on HOST device D [BUS] NAME"; nullopt when the line is not one.
  struct RankLine {
    std::string_view rank;
    std::size_t rank_offset = 0;  // of the rank digits in the line's text
    std::string_view host;
    std::string_view gpu;
  };
  static std::optional<RankLine> matchRankLine(std::string_view text) {
    Cursor cursor(text);
    RankLine rank_line;
    if (!cursor.literal("#")) return std::nullopt;
    cursor.spaces();
    if (!cursor.literal("Rank") || !cursor.spaces()) return std::nullopt;
    rank_line.rank_offset = cursor.position();
    rank_line.rank = cursor.digits();
    if (rank_line.rank.empty() || !cursor.spaces()) return std::nullopt;
    if (cursor.literal("Group")) {
      if (!cursor.spaces() || cursor.digits().empty() || !cursor.spaces()) return std::nullopt;
    }
    if (!cursor.literal("Pid") || !cursor.spaces() || cursor.digits().empty() || !cursor.spaces()) return std::nullopt;
    if (!cursor.literal("on") || !cursor.spaces()) return std::nullopt;
    rank_line.host = cursor.word();
    if (rank_line.host.empty() || !cursor.spaces()) return std::nullopt;
    if (!cursor.literal("device") || !cursor.spaces() || cursor.digits().empty() || !cursor.spaces()) {
      return std::nullopt;
    }
    if (!cursor.literal("[") || !cursor.through(']')) return std::nullopt;
    std::string_view gpu = cursor.rest();
    while (!gpu.empty() && isSpace(gpu.front())) gpu.remove_prefix(1);
    while (!gpu.empty() && isSpace(gpu.back())) gpu.remove_suffix(1);
    rank_line.gpu = gpu;
    return rank_line;
  }

  void handle(const LogLine& line) {
    if (line.is_stderr) return;
    const std::vector<Token> tokens = tokenize(line.text, line.column);
    if (tokens.empty()) return;
    const bool comment = tokens[0].text.starts_with('#');
    const bool header = comment && line.text.find("nThread") != std::string_view::npos &&
                        line.text.find("nGpus") != std::string_view::npos;
    std::optional<int64_t> tagged_rank;
    if (!line.tag_rank.empty()) {
      const auto column = static_cast<std::size_t>(line.tag_rank.data() - line.raw.data()) + 1;
      tagged_rank = wholeNumber(line.tag_rank, line.number, column, "launcher rank");
    }
    // Under a launcher only one rank prints the tables; lines other ranks print are ignored.
    if (header && tagged_rank && !printing_rank_) printing_rank_ = tagged_rank;
    if (tagged_rank && printing_rank_ && *tagged_rank != *printing_rank_) return;

    if (header) {
      finish(line.number - 1);
      run_ = PendingRun{};
      run_->header_line = line.number;
      run_->binary = pending_binary_;
      run_->binary_line = pending_binary_line_;
      run_->release = pending_release_;
      pending_binary_.reset();
      pending_release_.reset();
      return;
    }
    if (!comment) {
      if (run_ && run_->columns && looksLikeResultRow(tokens[0].text)) {
        addRow(line, tokens);
        return;
      }
    }
    if (comment && run_) {
      if (line.text.find("Out of bounds values") != std::string_view::npos ||
          line.text.find("Avg bus bandwidth") != std::string_view::npos) {
        if (run_->columns) {
          finish(line.number);
          return;
        }
      }
      if (readRankLine(line)) return;
      if (readColumnHeader(line, tokens)) return;
    }
    if (const auto release = readRelease(line)) {
      if (release->before_header || !run_) {
        pending_release_ = release;
      } else {
        if (run_->release && run_->release->code != release->code) {
          fail(line.number, line.column,
               fmt::format("NCCL release {} here, {} at line {} for the same run", versionText(release->code),
                           versionText(run_->release->code), run_->release->line));
        }
        run_->release = release;
      }
      return;
    }
    // Anything else: a command line or banner may name the binary of the next run.
    if (auto binary = binaryMentioned(line.text)) {
      if (run_ && !run_->columns && !run_->binary) {
        run_->binary = binary;
        run_->binary_line = line.number;
      } else {
        pending_binary_ = binary;
        pending_binary_line_ = line.number;
      }
    }
  }

  static std::string versionText(double code) {
    const auto value = static_cast<int64_t>(code);
    return fmt::format("{}.{}.{}", value / 10000, value / 100 % 100, value % 100);
  }

  // The release a line names (ReleaseLine), none when it names none. A release that does not
  // read is an error: the fit would run another release's tuner without a word.
  std::optional<ReleaseLine> readRelease(const LogLine& line) const {
    constexpr std::string_view kLibrary = "nccl-library=";
    constexpr std::string_view kNccl = "NCCL version ";
    if (const std::size_t at = line.text.find(kLibrary); at != std::string_view::npos) {
      Cursor cursor(line.text.substr(at + kLibrary.size()));
      const std::string_view digits = cursor.digits();
      const std::size_t column = line.column + at + kLibrary.size();
      std::optional<double> code;
      if (!digits.empty() && (cursor.atEnd() || cursor.spaces())) {
        code = ncclVersionCodeFromLibrary(wholeNumber(digits, line.number, column, "nccl-library"));
      }
      if (!code) {
        fail(line.number, column,
             fmt::format("nccl-library: expected NCCL's version code (22602 for 2.26.2), found \"{}\"",
                         messageExcerpt(Cursor(line.text.substr(at + kLibrary.size())).word())));
      }
      return ReleaseLine{*code, line.number, true};
    }
    const std::size_t at = line.text.find(kNccl);
    if (at == std::string_view::npos) return std::nullopt;
    Cursor cursor(line.text.substr(at + kNccl.size()));
    const std::string_view word = cursor.word();
    if (word.empty() || !isDigit(word.front())) return std::nullopt;
    // "2.18.5+cuda12.2", a build's "2.18.3-7f3a2b1", a suffixed "2.27.7a0+cuda12.9" or plain
    // "2.18.5": the release is the digits and dots it starts with (RCCL on AMD GPUs prints
    // "RCCL version", which names no NCCL release and is not read).
    const std::optional<double> code = ncclVersionCode(word.substr(0, word.find_first_not_of("0123456789.")));
    if (!code) {
      fail(line.number, line.column + at + kNccl.size(),
           fmt::format("NCCL version: expected MAJOR.MINOR.PATCH (as \"2.18.5+cuda12.2\"), found \"{}\"",
                       messageExcerpt(word)));
    }
    return ReleaseLine{*code, line.number, false};
  }

  bool readRankLine(const LogLine& line) {
    const auto match = matchRankLine(line.text);
    if (!match) {
      if (line.text.find("Rank") != std::string_view::npos && line.text.find("Pid") != std::string_view::npos) {
        fail(line.number, line.column,
             "a rank line of the \"# Using devices\" list should read \"#  Rank  R Pid P on HOST device D [BUS] "
             "NAME\", found \"" +
                 messageExcerpt(line.text) + "\"");
      }
      return false;
    }
    if (run_->columns) {
      fail(line.number, line.column, "a rank line after the run's column header");
    }
    // The GPU's name goes into calib.yaml and the JSON outputs: it must be text those can hold.
    for (const std::string_view name : {match->host, match->gpu}) {
      if (const auto invalid = firstInvalidUtf8(name)) {
        const auto column = line.column + static_cast<std::size_t>(name.data() - line.text.data()) + *invalid;
        fail(line.number, column,
             fmt::format("rank line: expected a host and GPU name in UTF-8, found {}",
                         invalidUtf8Message(name, *invalid)));
      }
    }
    RankEntry entry{wholeNumber(match->rank, line.number, line.column + match->rank_offset, "rank"),
                    std::string(match->host), std::string(match->gpu), line.number};
    for (const auto& other : run_->ranks) {
      if (other.rank == entry.rank) {
        fail(line.number, line.column,
             fmt::format("rank {} is listed twice (first at line {})", entry.rank, other.line));
      }
    }
    run_->ranks.push_back(std::move(entry));
    return true;
  }

  bool readColumnHeader(const LogLine& line, const std::vector<Token>& tokens) {
    // "#  size  count  type  redop  root  time  algbw  busbw  #wrong ..." (the '#' may be
    // glued to the first word).
    std::vector<std::string_view> names;
    for (const auto& token : tokens) names.push_back(token.text);
    if (names[0] == "#") {
      names.erase(names.begin());
    } else {
      names[0].remove_prefix(1);
    }
    if (names.size() < 2 || names[0] != "size" || names[1] != "count") return false;
    ColumnIndices columns;
    columns.line = line.number;
    columns.count = names.size();
    columns.size = 0;
    columns.elements = 1;
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (names[i] == "type") columns.type = i;
      if (names[i] == "redop") columns.redop = i;
      if (names[i] == "root") columns.root = i;
      if (names[i] == "time") {
        if (i + 2 >= names.size() || names[i + 1] != "algbw" || names[i + 2] != "busbw") {
          fail(line.number, tokens.front().column,
               "column header: expected \"time algbw busbw\" together, found \"" + messageExcerpt(line.text) + "\"");
        }
        columns.times.push_back(i);
      }
    }
    if (columns.type == 0 || columns.times.empty()) {
      fail(line.number, tokens.front().column,
           "column header: expected \"size count type ... time algbw busbw\", found \"" + messageExcerpt(line.text) +
               "\"");
    }
    run_->columns = columns;
    return true;
  }

  void addRow(const LogLine& line, const std::vector<Token>& tokens) {
    const ColumnIndices& columns = *run_->columns;
    if (tokens.size() != columns.count) {
      fail(line.number, tokens.back().column,
           fmt::format("expected {} columns as the header at line {} declares, found {}", columns.count, columns.line,
                       tokens.size()));
    }
    // A value outside [min, max] is refused as the YAML readers refuse one (ConfigNode::asNumberIn).
    auto number = [&](std::size_t index, const char* what, double min, double max) {
      const auto value = parseNumber(tokens[index].text);
      if (!value || *value < min || *value > max) {
        fail(line.number, tokens[index].column,
             fmt::format("{}: expected a number between {} and {}, found \"{}\"", what, formatBound(min),
                         formatBound(max), messageExcerpt(tokens[index].text)));
      }
      return *value;
    };
    // Sizes and counts are printed as digits: "4M" or "1,024" is a typo, not a row to skip.
    auto whole = [&](std::size_t index, const char* what, const char* unit) {
      const std::string_view text = tokens[index].text;
      const auto value = parseNumber(text);
      if (!isWholeNumber(text) || !value || *value > static_cast<double>(limits::kMaxBytes)) {
        fail(line.number, tokens[index].column,
             fmt::format("{}: expected a whole number of {} up to {} (digits only), found \"{}\"", what, unit,
                         formatBound(static_cast<double>(limits::kMaxBytes)), messageExcerpt(text)));
      }
      return *value;
    };
    ResultRow row;
    row.line = line.number;
    row.size = whole(columns.size, "size", "bytes");
    row.count = whole(columns.elements, "count", "elements");
    row.type = std::string(tokens[columns.type].text);
    if (columns.redop) row.redop = std::string(tokens[*columns.redop].text);
    if (columns.root) {
      const auto root = parseNumber(tokens[*columns.root].text);
      // nccl-tests prints -1 for "no root"; anything beyond 2^53 cannot be a rank.
      if (!root || std::floor(*root) != *root || std::abs(*root) > 9.007199254740992e15) {
        fail(line.number, tokens[*columns.root].column,
             fmt::format("root: expected a whole number, found \"{}\"", messageExcerpt(tokens[*columns.root].text)));
      }
      row.root = static_cast<int64_t>(*root);
    }
    bool found = false;
    for (std::size_t index : columns.times) {
      if (tokens[index].text == "N/A") continue;
      const double time = number(index, "time (us)", limits::kMinTimeUs, limits::kMaxTimeUs);
      const double algbw = number(index + 1, "algbw (GB/s)", 0.0, limits::kMaxBandwidthGBps);
      const double busbw = number(index + 2, "busbw (GB/s)", 0.0, limits::kMaxBandwidthGBps);
      if (!found || time < row.time_us) {
        row.time_us = time;
        row.algbw_GBps = algbw;
        row.busbw_GBps = busbw;
      }
      found = true;
    }
    if (!found) fail(line.number, tokens[columns.times.front()].column, "no time in this row (every column N/A)");
    if (!(row.size > 0.0)) return;  // nccl-tests prints size-0 rows for tiny ops: nothing to fit
    if (!run_->rows.empty() && row.size <= run_->rows.back().size) {
      fail(line.number, tokens[columns.size].column,
           fmt::format("size {} does not grow from the row before ({})", row.size, run_->rows.back().size));
    }
    run_->rows.push_back(std::move(row));
  }

  // Which ops the columns allow, given the group size.
  std::set<CollectiveOp> opsFromColumns(const PendingRun& run, int64_t n) const {
    std::set<CollectiveOp> ops = {CollectiveOp::kAllReduce, CollectiveOp::kAllGather, CollectiveOp::kReduceScatter,
                                  CollectiveOp::kAllToAll,  CollectiveOp::kBroadcast, CollectiveOp::kSendRecv};
    auto keep = [&](std::initializer_list<CollectiveOp> allowed) {
      std::set<CollectiveOp> result;
      for (auto op : allowed) {
        if (ops.contains(op)) result.insert(op);
      }
      ops = result;
    };
    // Bus factor, from the row with the highest algorithm bandwidth (least rounding).
    const auto best = std::max_element(run.rows.begin(), run.rows.end(),
                                       [](const auto& a, const auto& b) { return a.algbw_GBps < b.algbw_GBps; });
    if (best->algbw_GBps >= 0.5) {
      const double ratio = best->busbw_GBps / best->algbw_GBps;
      // Printed with two decimals: allow the rounding plus 2%.
      const double tolerance = 0.02 + 0.01 / best->algbw_GBps;
      std::set<CollectiveOp> allowed;
      auto matches = [&](double factor) { return std::abs(ratio / factor - 1.0) <= tolerance; };
      if (matches(perf::busBandwidthFactor(CollectiveOp::kAllReduce, n))) allowed.insert(CollectiveOp::kAllReduce);
      if (matches(perf::busBandwidthFactor(CollectiveOp::kAllGather, n))) {
        allowed.insert({CollectiveOp::kAllGather, CollectiveOp::kReduceScatter, CollectiveOp::kAllToAll});
      }
      if (matches(1.0)) allowed.insert({CollectiveOp::kBroadcast, CollectiveOp::kSendRecv});
      std::set<CollectiveOp> result;
      for (auto op : ops) {
        if (allowed.contains(op)) result.insert(op);
      }
      ops = result;
    }
    const ResultRow& row = run.rows.front();
    if (!row.redop.empty()) {
      if (row.redop == "none") {
        keep({CollectiveOp::kAllGather, CollectiveOp::kAllToAll, CollectiveOp::kBroadcast, CollectiveOp::kSendRecv});
      } else {
        keep({CollectiveOp::kAllReduce, CollectiveOp::kReduceScatter, CollectiveOp::kSendRecv});
      }
    }
    if (row.root) {
      if (*row.root >= 0) {
        keep({CollectiveOp::kBroadcast});
      } else {
        ops.erase(CollectiveOp::kBroadcast);
      }
    }
    if (const int64_t element = elementBytes(row.type); element > 0 && row.size >= static_cast<double>(element * n)) {
      const double fraction = row.count * static_cast<double>(element) / row.size;
      if (std::abs(fraction * static_cast<double>(n) - 1.0) < 0.01) {
        keep({CollectiveOp::kAllGather, CollectiveOp::kReduceScatter, CollectiveOp::kAllToAll});
      } else if (std::abs(fraction - 1.0) < 0.01) {
        keep({CollectiveOp::kAllReduce, CollectiveOp::kBroadcast, CollectiveOp::kSendRecv});
      }
    }
    return ops;
  }

  static std::string opList(const std::set<CollectiveOp>& ops) {
    std::string text;
    for (auto op : ops) text += (text.empty() ? "" : " or ") + std::string(perf::collectiveOpName(op));
    return text;
  }

  void finish(int last_line) {
    if (!run_) return;
    PendingRun run = std::move(*run_);
    run_.reset();
    const std::string where = fmt::format("{}:{}", name_, run.header_line);
    if (run.binary && !run.binary->op) {
      ++skipped_;
      log_.notes.push_back(fmt::format("{}: skipped the {}_perf run: trainsim does not model that operation", where,
                                       run.binary->binary));
      return;
    }
    if (run.ranks.empty()) {
      fail(run.header_line, 1,
           "the run has no \"# Using devices\" rank list: trainsim reads the group size and the nodes from it");
    }
    if (!run.columns) {
      fail(run.header_line, 1,
           fmt::format("the run that starts here has no column header (\"# size count type ...\") up to line {}",
                       last_line));
    }
    if (run.rows.empty()) fail(run.columns->line, 1, "the run has no result rows under its column header");
    // Ranks 0 .. n-1, each once.
    const auto n = static_cast<int64_t>(run.ranks.size());
    for (const auto& entry : run.ranks) {
      if (entry.rank >= n) {
        fail(entry.line, 1, fmt::format("rank {} listed but the list has only {} ranks", entry.rank, n));
      }
    }
    MeasuredCollective measured;
    measured.source = name_;
    measured.where = where;
    std::vector<std::string> hosts;
    std::vector<RankEntry> ranks = run.ranks;
    std::sort(ranks.begin(), ranks.end(), [](const auto& a, const auto& b) { return a.rank < b.rank; });
    for (const auto& entry : ranks) {
      auto it = std::find(hosts.begin(), hosts.end(), entry.host);
      if (it == hosts.end()) {
        hosts.push_back(entry.host);
        measured.ranks_per_node.push_back(0);
        it = hosts.end() - 1;
      }
      ++measured.ranks_per_node[static_cast<std::size_t>(it - hosts.begin())];
    }
    measured.layout = derivedLayoutName(measured.nodes(), measured.maxPerNode());
    measured.gpu_name = ranks.front().gpu;
    if (n < 2) fail(run.header_line, 1, "the run has a single rank: nothing to calibrate a collective with");

    const std::set<CollectiveOp> possible = opsFromColumns(run, n);
    if (run.binary) {
      measured.op = *run.binary->op;
      if (!possible.contains(measured.op)) {
        fail(run.binary_line, 1,
             fmt::format("the run is named {}_perf but its columns fit {}", run.binary->binary,
                         possible.empty() ? std::string("no operation") : opList(possible)));
      }
    } else if (hint_) {
      measured.op = *hint_;
      if (!possible.contains(measured.op)) {
        fail(run.header_line, 1,
             fmt::format("--op {} does not fit this run's columns, which fit {}", perf::collectiveOpName(*hint_),
                         possible.empty() ? std::string("no operation") : opList(possible)));
      }
      log_.notes.push_back(fmt::format("{}: operation {} taken from --op", where, perf::collectiveOpName(*hint_)));
    } else if (possible.size() == 1) {
      measured.op = *possible.begin();
    } else {
      fail(run.header_line, 1,
           possible.empty() ? std::string("the run's columns fit no operation trainsim knows (bus factor, redop, "
                                          "root and count disagree)")
                            : "the log does not say which operation this run is (no *_perf command line) and its "
                              "columns fit " +
                                  opList(possible) + ": name it with --op");
    }
    if (run.release) measured.nccl_version = run.release->code;
    for (const auto& row : run.rows) measured.samples.push_back({row.size, row.time_us});
    log_.runs.push_back(std::move(measured));
  }

  std::string name_;
  std::optional<CollectiveOp> hint_;
  NcclTestsLog log_;
  std::optional<PendingRun> run_;
  std::optional<BinaryName> pending_binary_;
  int pending_binary_line_ = 0;
  std::optional<ReleaseLine> pending_release_;
  std::optional<int64_t> printing_rank_;
  int skipped_ = 0;
};

}  // namespace

Expected<NcclTestsLog> parseNcclTestsLog(std::string_view text, const std::string& name,
                                         std::optional<perf::CollectiveOp> op_hint) {
  return catchInputErrors([&] { return LogParser(name, op_hint).parse(text); });
}

Expected<NcclTestsLog> loadNcclTestsLog(const std::string& path, std::optional<perf::CollectiveOp> op_hint) {
  Expected<std::string> text = readTextFile(path, "an nccl-tests log file", kMaxMeasurementFileBytes);
  if (!text.ok()) return text.error();
  return parseNcclTestsLog(*text, path, op_hint);
}

}  // namespace trainsim::calibrate
