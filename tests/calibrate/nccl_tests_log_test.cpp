// The nccl-tests log reader, on logs the tests write themselves (nccl_tests_log_writer.h)
// and on malformed ones.
#include "calibrate/nccl_tests_log.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "nccl_tests_log_writer.h"

namespace trainsim::calibrate {
namespace {

using perf::CollectiveOp;
using ::testing::HasSubstr;
using testing::LogStyle;
using testing::ncclTestsRun;

const std::vector<CollectiveSample> kSamples = {{1024, 30.5}, {1048576, 70.25}, {1073741824, 8100.75}};

TEST(NcclTestsLogTest, ReadsAPlainRunWithItsGroupAndTheBetterTime) {
  const auto log = parseNcclTestsLog(ncclTestsRun(CollectiveOp::kAllReduce, {8, 8}, kSamples), "a.log");
  ASSERT_TRUE(log.ok()) << log.error().toString();
  ASSERT_EQ(log->runs.size(), 1u);
  const auto& run = log->runs.front();
  EXPECT_EQ(run.op, CollectiveOp::kAllReduce);
  EXPECT_EQ(run.groupSize(), 16);
  EXPECT_EQ(run.nodes(), 2);
  EXPECT_EQ(run.maxPerNode(), 8);
  EXPECT_EQ(run.layout, "multi_node");
  EXPECT_EQ(run.gpu_name, "NVIDIA A100-SXM4-40GB");
  ASSERT_EQ(run.samples.size(), 3u);
  EXPECT_DOUBLE_EQ(run.samples[1].bytes, 1048576.0);
  EXPECT_DOUBLE_EQ(run.samples[1].time_us, 70.25);  // out-of-place: in-place is 2% slower
}

TEST(NcclTestsLogTest, ReadsMpirunPrefixesSeveralOpsAndOldColumns) {
  LogStyle style;
  style.mpirun_prefix = true;
  style.root_column = false;
  style.in_place_factor = 0.98;  // in-place faster: it is taken
  std::string text = "[1,3]<stderr>:some warning from rank 3\n";
  text += ncclTestsRun(CollectiveOp::kAllGather, {1, 1, 1, 1}, kSamples, style);
  text += "[1,2]<stdout>: 1024 256 float none 1.0 1.0 1.0 0 1.0 1.0 1.0 0\n";  // another rank: ignored
  text += ncclTestsRun(CollectiveOp::kReduceScatter, {1, 1, 1, 1}, kSamples, style);
  const auto log = parseNcclTestsLog(text, "b.log");
  ASSERT_TRUE(log.ok()) << log.error().toString();
  ASSERT_EQ(log->runs.size(), 2u);
  EXPECT_EQ(log->runs[0].op, CollectiveOp::kAllGather);
  EXPECT_EQ(log->runs[0].layout, "one_per_node");
  EXPECT_EQ(log->runs[1].op, CollectiveOp::kReduceScatter);
  EXPECT_NEAR(log->runs[1].samples[0].time_us, 30.5 * 0.98, 0.006);
}

TEST(NcclTestsLogTest, InfersTheOpFromTheColumnsWhenTheLogDoesNotNameIt) {
  LogStyle style;
  style.name_binary = false;
  for (auto op : {CollectiveOp::kAllReduce, CollectiveOp::kReduceScatter, CollectiveOp::kBroadcast}) {
    const auto log = parseNcclTestsLog(ncclTestsRun(op, {8}, kSamples, style), "c.log");
    ASSERT_TRUE(log.ok()) << log.error().toString();
    EXPECT_EQ(log->runs.front().op, op) << perf::collectiveOpName(op);
  }
  // all_gather and all_to_all print the same columns: a hint is needed, and used.
  const std::string gather = ncclTestsRun(CollectiveOp::kAllGather, {8}, kSamples, style);
  const auto ambiguous = parseNcclTestsLog(gather, "d.log");
  ASSERT_FALSE(ambiguous.ok());
  EXPECT_THAT(ambiguous.error().toString(), HasSubstr("--op"));
  EXPECT_THAT(ambiguous.error().toString(), HasSubstr("d.log:1:1"));
  const auto hinted = parseNcclTestsLog(gather, "d.log", CollectiveOp::kAllToAll);
  ASSERT_TRUE(hinted.ok()) << hinted.error().toString();
  EXPECT_EQ(hinted->runs.front().op, CollectiveOp::kAllToAll);
  // A hint the columns contradict is an error.
  const auto wrong = parseNcclTestsLog(gather, "d.log", CollectiveOp::kAllReduce);
  ASSERT_FALSE(wrong.ok());
  EXPECT_THAT(wrong.error().toString(), HasSubstr("does not fit"));
}

TEST(NcclTestsLogTest, SkipsOpsTheSimulatorDoesNotModel) {
  std::string text = ncclTestsRun(CollectiveOp::kAllReduce, {8}, kSamples);
  std::string reduce = ncclTestsRun(CollectiveOp::kAllReduce, {8}, kSamples);
  reduce.replace(reduce.find("all_reduce_perf"), 15, "reduce_perf");
  const auto log = parseNcclTestsLog(reduce + text, "e.log");
  ASSERT_TRUE(log.ok()) << log.error().toString();
  EXPECT_EQ(log->runs.size(), 1u);
  ASSERT_EQ(log->notes.size(), 1u);
  EXPECT_THAT(log->notes.front(), HasSubstr("reduce_perf"));
}

// Replaces the first occurrence of `from` in `text`.
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

// Regression test for issue 40: a size written "4M" made the row look like no row at all, and
// the fit ran on the others (exit 0, a fitted bandwidth moved from 76.7 to 88.1 GB/s).
TEST(NcclTestsLogTest, ARowThatDoesNotReadIsAnErrorNotSkipped) {
  const std::string good = ncclTestsRun(CollectiveOp::kAllReduce, {8}, kSamples);
  // Rows are lines 17-19; the size is the first word of a row, at column 9 ("%12" of "1048576").
  struct Case {
    std::string text;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {replaced(good, " 1048576 ", "      4M "),
       "f.log:18:12: size: expected a whole number of bytes up to 1e15 (digits only), found \"4M\""},
      {replaced(good, "   1048576 ", " 1,048,576 "), "f.log:18:"},
      {replaced(good, "   1048576 ", "  1048576.5 "), "size: expected a whole number of bytes"},
      {replaced(good, " 1048576 ", " 1e6     "), "found \"1e6\""},
      {replaced(good, "1048576 ", "1048576x"), "found \"1048576x\""},
  };
  for (const auto& c : cases) {
    const auto log = parseNcclTestsLog(c.text, "f.log");
    ASSERT_FALSE(log.ok()) << c.expected << "\n" << c.text;
    EXPECT_EQ(log.error().code, ExitCode::kInvalidInput);
    EXPECT_THAT(log.error().toString(), HasSubstr(c.expected));
  }
}

// Regression test for issue 40: a time of 1e300 us was taken, and the printed fit quality went wrong.
TEST(NcclTestsLogTest, ValuesOutOfPhysicalRangeAreRefusedAsInYaml) {
  const std::string good = ncclTestsRun(CollectiveOp::kAllReduce, {8}, kSamples);
  struct Case {
    std::string text;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {replaced(good, "70.25", "1e300"),
       "f.log:18:57: time (us): expected a number between 0.001 and 3600000000, "
       "found \"1e300\""},
      {replaced(good, "70.25", "0.00"), "time (us): expected a number between 0.001 and 3600000000, found \"0.00\""},
      {replaced(good, "70.25", "-70.25"), "found \"-70.25\""},
      {replaced(good, "70.25", "nan"), "found \"nan\""},
      {replaced(good, "70.25", "inf"), "found \"inf\""},
      {replaced(good, "  1073741824 ", " 99999999999999999 "), "size: expected a whole number of bytes up to"},
  };
  for (const auto& c : cases) {
    const auto log = parseNcclTestsLog(c.text, "f.log");
    ASSERT_FALSE(log.ok()) << c.expected;
    EXPECT_EQ(log.error().code, ExitCode::kInvalidInput);
    EXPECT_THAT(log.error().toString(), HasSubstr(c.expected));
  }
  // The bandwidth columns too: the second row's out-of-place busbw (its 8th word) at 1e300 GB/s.
  const auto row_start = good.rfind('\n', good.find(" 1048576 ")) + 1;
  const auto row_end = good.find('\n', row_start);
  std::istringstream words(good.substr(row_start, row_end - row_start));
  std::string row;
  int index = 0;
  for (std::string word; words >> word; ++index) row += " " + (index == 7 ? std::string("1e300") : word);
  std::string wide = good;
  wide.replace(row_start, row_end - row_start, row);
  const auto log = parseNcclTestsLog(wide, "f.log");
  ASSERT_FALSE(log.ok());
  EXPECT_THAT(log.error().toString(), HasSubstr("(GB/s): expected a number between 0 and 1000000, found \"1e300\""));
}

// What nccl-tests and NCCL print between rows stays ignored: only a line meant as a row is read.
TEST(NcclTestsLogTest, LinesBetweenRowsThatAreNotRowsStayIgnored) {
  std::string text = ncclTestsRun(CollectiveOp::kAllReduce, {8}, kSamples);
  const auto second_row = text.find("  1048576 ");
  const auto at = text.rfind('\n', second_row) + 1;
  text.insert(at,
              "10.0.0.1:4242:4242 [0] NCCL INFO Channel 00/02 : 0 1 2 3 4 5 6 7\n"
              "node-001:4242:4300 [3] NCCL WARN NET/IB : Got async event : port error\n"
              "[node-001:04242] 1 more process has sent help message help-mpi-btl-openib.txt\n"
              "#  a comment\n"
              "\n");
  const auto log = parseNcclTestsLog(text, "h.log");
  ASSERT_TRUE(log.ok()) << log.error().toString();
  EXPECT_EQ(log->runs.front().samples.size(), 3u);
}

TEST(NcclTestsLogTest, AGpuNameThatIsNotUtf8IsAnErrorAtItsByte) {
  const std::string good = ncclTestsRun(CollectiveOp::kAllReduce, {8}, kSamples);
  const auto log = parseNcclTestsLog(replaced(good, "NVIDIA A100",
                                              "NVIDIA \xC0\xAF"
                                              "100"),
                                     "u.log");
  ASSERT_FALSE(log.ok());
  EXPECT_EQ(log.error().code, ExitCode::kInvalidInput);
  EXPECT_THAT(log.error().toString(),
              HasSubstr(":5:69: rank line: expected a host and GPU name in UTF-8, found not UTF-8 text (byte 0xC0)"));
}

TEST(NcclTestsLogTest, EachRunKeepsTheNcclReleaseItsLinesName) {
  // nccl-tests' own line before the header, NCCL's INFO line after it (under mpirun too), and
  // a run that says nothing: three runs in one file, each with its own.
  LogStyle library;
  library.nccl_library = "22602";
  LogStyle info;
  info.mpirun_prefix = true;
  info.nccl_info_release = "2.18.5+cuda12.2";
  const std::string text = ncclTestsRun(CollectiveOp::kAllReduce, {8, 8}, kSamples, library) +
                           ncclTestsRun(CollectiveOp::kAllGather, {8, 8}, kSamples, info) +
                           ncclTestsRun(CollectiveOp::kReduceScatter, {8, 8}, kSamples);
  const auto log = parseNcclTestsLog(text, "v.log");
  ASSERT_TRUE(log.ok()) << log.error().toString();
  ASSERT_EQ(log->runs.size(), 3u);
  EXPECT_EQ(log->runs[0].nccl_version, 22602);
  EXPECT_EQ(log->runs[1].nccl_version, 21805);
  EXPECT_EQ(log->runs[2].nccl_version, std::nullopt);
  // A release before 2.9 in ncclGetVersion's old form (major x 1000): 2.8.4.
  library.nccl_library = "2804";
  const auto old = parseNcclTestsLog(ncclTestsRun(CollectiveOp::kAllReduce, {8}, kSamples, library), "o.log");
  ASSERT_TRUE(old.ok()) << old.error().toString();
  EXPECT_EQ(old->runs[0].nccl_version, 20804);
}

TEST(NcclTestsLogTest, AReleaseThatDoesNotReadOrDisagreesIsAnErrorAtItsLine) {
  LogStyle style;
  style.nccl_library = "22602";
  style.nccl_info_release = "2.26.2+cuda12.8";
  const std::string good = ncclTestsRun(CollectiveOp::kAllReduce, {8}, kSamples, style);
  ASSERT_TRUE(parseNcclTestsLog(good, "g.log").ok());
  // Line 1 the command line, 2 nccl-tests' version line, 3 "Collective test starting", 4 the
  // header, 5-6 "#" and "# Using devices", 7-14 ranks, 15 "#", 16-17 NCCL's INFO lines.
  struct Case {
    std::string text;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {replaced(good, "nccl-library=22602", "nccl-library=2.26"), "r.log:2:61: nccl-library: expected NCCL's version"},
      {replaced(good, "nccl-library=22602", "nccl-library=7"), "r.log:2:61: nccl-library: expected NCCL's version"},
      {replaced(good, "NCCL version 2.26.2+", "NCCL version 2.26+"),
       "r.log:17:47: NCCL version: expected MAJOR.MINOR.PATCH"},
      {replaced(good, "NCCL version 2.26.2+", "NCCL version 2.27.3+"),
       "r.log:17:1: NCCL release 2.27.3 here, 2.26.2 at line 2 for the same run"},
  };
  for (const auto& c : cases) {
    const auto log = parseNcclTestsLog(c.text, "r.log");
    ASSERT_FALSE(log.ok()) << c.expected;
    EXPECT_EQ(log.error().code, ExitCode::kInvalidInput);
    EXPECT_THAT(log.error().toString(), HasSubstr(c.expected));
  }
  // A build's hash after the release reads as the release.
  const auto hashed =
      parseNcclTestsLog(replaced(good, "NCCL version 2.26.2+cuda12.8", "NCCL version 2.26.2-7f3a2b1"), "h.log");
  ASSERT_TRUE(hashed.ok()) << hashed.error().toString();
  EXPECT_EQ(hashed->runs[0].nccl_version, 22602);
  const auto suffixed =
      parseNcclTestsLog(replaced(good, "NCCL version 2.26.2+cuda12.8", "NCCL version 2.26.2a0+cuda12.8"), "s.log");
  ASSERT_TRUE(suffixed.ok()) << suffixed.error().toString();
  EXPECT_EQ(suffixed->runs[0].nccl_version, 22602);
  // Words after "NCCL version" that are not a release are not a release line.
  const auto prose =
      parseNcclTestsLog(replaced(good, "NCCL version 2.26.2+cuda12.8", "NCCL version check skipped"), "p.log");
  ASSERT_TRUE(prose.ok()) << prose.error().toString();
  EXPECT_EQ(prose->runs[0].nccl_version, 22602);
}

TEST(NcclTestsLogTest, MalformedLogsAreErrorsAtTheirLine) {
  const std::string good = ncclTestsRun(CollectiveOp::kAllReduce, {8}, kSamples);
  // Line 1 is the command line, 2 the header, 3-4 "#" and "# Using devices", 5-12 ranks,
  // 13 "#", 14-16 the column header, 17-19 the rows.
  struct Case {
    std::string text;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"", "no nccl-tests run found"},
      {"hello\nworld\n", "no nccl-tests run found"},
      {replaced(good, "  70.25", ""), "f.log:18:"},  // a column missing
      {replaced(good, "70.25", "fast"), "time (us): expected a number between 0.001 and 3600000000, found \"fast\""},
      {replaced(good, "#  Rank  1", "#  Rank  0"), "rank 0 is listed twice"},
      {replaced(good, "Pid   1001 on", "Pid on"), "f.log:6:1"},  // a rank line that does not read
      {replaced(good, "1048576", "512"), "does not grow"},
  };
  for (const auto& c : cases) {
    const auto log = parseNcclTestsLog(c.text, "f.log");
    ASSERT_FALSE(log.ok()) << c.expected;
    EXPECT_EQ(log.error().code, ExitCode::kInvalidInput);
    EXPECT_THAT(log.error().toString(), HasSubstr(c.expected));
  }
  // No rank list.
  std::string no_ranks;
  for (const auto& line : {"# nThread 1 nGpus 8 minBytes 8",
                           "#       size         count      type   redop     time   "
                           "algbw   busbw  error     time   algbw   busbw  error",
                           "        1024           256     float     sum    34.66    0.03    0.06    N/A    34.47    "
                           "0.03    0.06    N/A"}) {
    no_ranks += std::string(line) + "\n";
  }
  const auto log = parseNcclTestsLog(no_ranks, "g.log");
  ASSERT_FALSE(log.ok());
  EXPECT_THAT(log.error().toString(), HasSubstr("g.log:1:1: the run has no \"# Using devices\" rank list"));
  // A file that cannot be read.
  const auto missing = loadNcclTestsLog("/nonexistent/trainsim/x.log");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().toString(), HasSubstr("cannot read"));
}

TEST(NcclTestsLogTest, LinesOfOneHundredKilobytesAndOneMegabyteRead) {
  // Regression test for a bug found in review (fixed): the line patterns were std::regex,
  // which recursed once per character and overflowed the stack (SIGSEGV) on a 100 KB line.
  const std::string good = ncclTestsRun(CollectiveOp::kAllReduce, {8}, kSamples);
  for (const std::size_t length : {std::size_t{100'000}, std::size_t{1'000'000}}) {
    const std::string letters(length, 'a');
    std::string words;
    while (words.size() < length) words += "x_perf y ";
    const std::vector<std::string> lines = {
        "# " + letters,                         // a comment
        letters,                                // a banner
        std::string(length, ' '),               // white space only
        "[1,0]<stdout>:# " + letters,           // under mpirun
        "0: # " + letters,                      // under srun
        "#  Rank " + std::string(length, '1'),  // starts like a rank line
        std::string(length, '_') + "_perf",     // names a binary nccl-tests has not
        words,                                  // a binary name many times over
    };
    for (const auto& line : lines) {
      // Before the run, and inside it (between the rank list and the column header).
      for (const std::string& text : {line + "\n" + good, replaced(good, "#\n#   ", "#\n" + line + "\n#   ")}) {
        const auto log = parseNcclTestsLog(text, "long.log");
        ASSERT_TRUE(log.ok()) << length << ": " << log.error().toString().substr(0, 300);
        ASSERT_EQ(log->runs.size(), 1u);
        EXPECT_EQ(log->runs.front().groupSize(), 8);
      }
    }
    // A rank line that does not read is an error that quotes the start of the line only.
    const auto broken = parseNcclTestsLog(replaced(good, "#  Rank  1 ", "#  Rank  1 " + letters + " "), "long.log");
    ASSERT_FALSE(broken.ok());
    EXPECT_THAT(broken.error().toString(), HasSubstr("long.log:6:1: a rank line"));
    EXPECT_THAT(broken.error().toString(), HasSubstr(fmt::format("... ({} characters)", length + 83)));
    EXPECT_LT(broken.error().toString().size(), 400u);
  }
}

TEST(NcclTestsLogTest, RankNumbersBeyondSixtyFourBitsAreErrorsAtTheirColumn) {
  // Regression test for a bug found in review (fixed): std::stoll threw out_of_range (exit 1).
  const std::string good = ncclTestsRun(CollectiveOp::kAllReduce, {8}, kSamples);
  const auto rank =
      parseNcclTestsLog(replaced(good, "#  Rank  1 Group", "#  Rank 99999999999999999999 Group"), "f.log");
  ASSERT_FALSE(rank.ok());
  EXPECT_EQ(rank.error().code, ExitCode::kInvalidInput);
  EXPECT_EQ(rank.error().toString(),
            "f.log:6:9: rank: expected a whole number below 2^63, found \"99999999999999999999\"");

  LogStyle style;
  style.mpirun_prefix = true;
  const std::string tagged = ncclTestsRun(CollectiveOp::kAllReduce, {8}, kSamples, style);
  const auto tag = parseNcclTestsLog(replaced(tagged, "[1,0]", "[1,99999999999999999999]"), "g.log");
  ASSERT_FALSE(tag.ok());
  EXPECT_EQ(tag.error().code, ExitCode::kInvalidInput);
  EXPECT_EQ(tag.error().toString(),
            "g.log:2:4: launcher rank: expected a whole number below 2^63, found \"99999999999999999999\"");
  // The largest rank number that fits is read, and then is out of the list's range.
  const auto large =
      parseNcclTestsLog(replaced(good, "#  Rank  1 Group", "#  Rank 9223372036854775807 Group"), "f.log");
  ASSERT_FALSE(large.ok());
  EXPECT_THAT(large.error().toString(), HasSubstr("rank 9223372036854775807 listed but the list has only 8 ranks"));
}

TEST(NcclTestsLogTest, ADirectoryIsAnErrorNamingIt) {
  const auto log = loadNcclTestsLog(TRAINSIM_CONFIG_DIR_FOR_TESTS);
  ASSERT_FALSE(log.ok());
  EXPECT_EQ(log.error().code, ExitCode::kInvalidInput);
  EXPECT_EQ(log.error().toString(),
            std::string(TRAINSIM_CONFIG_DIR_FOR_TESTS) + ": is a directory, expected an nccl-tests log file");
}

}  // namespace
}  // namespace trainsim::calibrate
