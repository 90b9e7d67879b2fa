#include "base/config_node.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "base/error.h"
#include "base/text_file.h"

namespace trainsim {
namespace {

// The error `body` throws, as printed; it must be an input error (exit code 2).
std::string errorOf(const std::function<void()>& body) {
  try {
    body();
  } catch (const InputError& e) {
    EXPECT_EQ(e.error().code, ExitCode::kInvalidInput);
    return e.error().toString();
  }
  return "<no error>";
}

std::string parseError(const std::string& text) {
  return errorOf([&] { (void)parseConfigText(text, "bad.yaml"); });
}

// --- Duplicate keys and extra documents (yaml-cpp keeps the first value silently) ---------

TEST(ConfigNodeDuplicates, BlockMappingNamesBothLines) {
  EXPECT_EQ(parseError("training:\n  seq_len: 4096\nparallelism:\n  tp: 2\n  pp: 1\n  tp: 3\n"),
            "bad.yaml:6:3: parallelism.tp: duplicate key \"tp\" (first at line 4); a mapping holds each key once");
}

TEST(ConfigNodeDuplicates, FlowMappingNamesTheColumn) {
  EXPECT_EQ(parseError("parallelism: {tp: 2, tp: 3}\n"),
            "bad.yaml:1:22: parallelism.tp: duplicate key \"tp\" (first at column 15); a mapping holds each key "
            "once");
}

TEST(ConfigNodeDuplicates, TopLevelAndInsideLists) {
  EXPECT_EQ(parseError("name: a\nmodel: x\nname: b\n"),
            "bad.yaml:3:1: name: duplicate key \"name\" (first at line 1); a mapping holds each key once");
  EXPECT_EQ(parseError("links:\n  - {from: a, to: b}\n  - {from: a, to: c, to: d}\n"),
            "bad.yaml:3:22: links[1].to: duplicate key \"to\" (first at column 15); a mapping holds each key once");
}

TEST(ConfigNodeDuplicates, QuotedAndPlainSpellingsAreTheSameKey) {
  EXPECT_EQ(parseError("tp: 2\n\"tp\": 3\n"),
            "bad.yaml:2:1: tp: duplicate key \"tp\" (first at line 1); a mapping holds each key once");
}

TEST(ConfigNodeDuplicates, EqualKeysInDifferentMappingsAreFine) {
  const ConfigNode root = parseConfigText("a: {tp: 1}\nb: {tp: 2}\nc: [{tp: 1}, {tp: 2}]\n", "ok.yaml");
  EXPECT_EQ(root.child("b").child("tp").asInteger(), 2);
}

TEST(ConfigNodeDuplicates, InASetValue) {
  ConfigNode root = parseConfigText("parallelism: {tp: 1}\n", "exp.yaml");
  EXPECT_EQ(errorOf([&] { applyOverride(root, parseOverride("parallelism={tp: 2, tp: 3}")); }),
            "--set parallelism={tp: 2, tp: 3}: parallelism.tp: duplicate key \"tp\" (first at column 2); a mapping "
            "holds each key once");
}

// --- Text that is not UTF-8 (issue 40: a name of such bytes failed every --json writer) ----

TEST(ConfigNodeUtf8, AnInvalidByteIsAnErrorAtItsPosition) {
  EXPECT_EQ(parseError("name: bad\xFFname\nlayers: 2\n"),
            "bad.yaml:1:10: invalid YAML: not UTF-8 text (byte 0xFF); YAML and JSON files are UTF-8");
  // In a quoted string, a comment, a key: anywhere in the file. Columns count bytes, as yaml-cpp's do.
  EXPECT_EQ(parseError("a: 1\nname: \"\xC3\xA9\xC3(\"\n"),
            "bad.yaml:2:10: invalid YAML: not UTF-8 text (byte 0xC3); YAML and JSON files are UTF-8");
  EXPECT_EQ(parseError("a: 1 # \xE9t\xE9\n"),
            "bad.yaml:1:8: invalid YAML: not UTF-8 text (byte 0xE9); YAML and JSON files are UTF-8");
  // After a byte order mark, positions count from after it.
  EXPECT_EQ(parseError("\xEF\xBB\xBFn\xC0\xAF: 1\n"),
            "bad.yaml:1:2: invalid YAML: not UTF-8 text (byte 0xC0); YAML and JSON files are UTF-8");
}

TEST(ConfigNodeUtf8, ValidUtf8IsRead) {
  const ConfigNode root =
      parseConfigText("\xEF\xBB\xBFname: \"caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x9A\x80\"\n", "ok.yaml");
  EXPECT_EQ(root.child("name").asString(), "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x9A\x80");
}

TEST(ConfigNodeUtf8, InASetValueBlamesTheSet) {
  ConfigNode root = parseConfigText("name: x\n", "exp.yaml");
  EXPECT_EQ(errorOf([&] { applyOverride(root, parseOverride("name=bad\xFF")); }),
            "--set name=bad\xFF: expected KEY=VALUE, found not UTF-8 text (byte 0xFF) at byte 9");
}

TEST(ConfigNodeFiles, ADeviceIsRefusedBeforeReading) {
  if (!std::filesystem::exists("/dev/zero")) GTEST_SKIP() << "no /dev/zero";
  EXPECT_EQ(errorOf([] { (void)loadConfigFile("/dev/zero"); }),
            "/dev/zero: is not a regular file (a character device), expected a YAML file");
}

TEST(ConfigNodeFiles, AFileOverTheLimitIsRefusedBeforeParsing) {
  const auto path = (std::filesystem::temp_directory_path() / "trainsim_config_node_test_large.yaml").string();
  {
    std::ofstream file(path, std::ios::binary);
    // Not YAML at all from the first line: the size, not the parse, is what is reported.
    file << "[[[\n" << std::string(kMaxConfigFileBytes, '#');
  }
  EXPECT_EQ(errorOf([&] { (void)loadConfigFile(path); }), path + ": is larger than the 4 MiB limit on a YAML file");
  std::filesystem::remove(path);
}

TEST(ConfigNodeDocuments, SecondDocumentIsAnError) {
  EXPECT_EQ(parseError("a: 1\n---\nb: 2\n"),
            "bad.yaml:2:1: a second YAML document starts here; a config file holds one document (remove the --- "
            "line and what follows it)");
}

TEST(ConfigNodeDocuments, LeadingMarkerAndTrailingEmptyDocumentAreFine) {
  EXPECT_EQ(parseConfigText("---\na: 1\n", "ok.yaml").child("a").asInteger(), 1);
  EXPECT_EQ(parseConfigText("a: 1\n---\n", "ok.yaml").child("a").asInteger(), 1);
  EXPECT_EQ(parseConfigText("a: 1\n...\n", "ok.yaml").child("a").asInteger(), 1);
}

// --- Positions and syntax ---------------------------------------------------------------

TEST(ConfigNodePositions, EmptyValueIsReportedAtItsOwnKey) {
  const ConfigNode root = parseConfigText("training:\n  seq_len:\n  global_batch_size: 8\n", "bad.yaml");
  EXPECT_EQ(errorOf([&] { (void)root.child("training").child("seq_len").asPositiveInteger(); }),
            "bad.yaml:2:3: training.seq_len: expected a positive integer, found nothing");
  // At the end of the file too.
  const ConfigNode last = parseConfigText("a: 1\nseq_len:\n", "bad.yaml");
  EXPECT_EQ(errorOf([&] { (void)last.child("seq_len").asPositiveInteger(); }),
            "bad.yaml:2:1: seq_len: expected a positive integer, found nothing");
  // An explicit null keeps its own position.
  const ConfigNode null_value = parseConfigText("seq_len: ~\n", "bad.yaml");
  EXPECT_EQ(errorOf([&] { (void)null_value.child("seq_len").asPositiveInteger(); }),
            "bad.yaml:1:10: seq_len: expected a positive integer, found nothing");
}

TEST(ConfigNodePositions, EmptyValueFromEntriesIsAtItsKey) {
  const ConfigNode root = parseConfigText("gpus:\n  a:\n  b: {}\n", "bad.yaml");
  const auto entries = root.child("gpus").entries();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(errorOf([&] { entries[0].second.requireMap(); }),
            "bad.yaml:2:3: gpus.a: expected a mapping, found nothing");
}

TEST(ConfigNodeSyntax, UnclosedDoubleQuoteIsASyntaxErrorAtTheQuote) {
  EXPECT_EQ(parseError("name: \"llama\nseq_len: 4096\n"),
            "bad.yaml:1:7: name: invalid YAML: unclosed quote (the string that starts here has no closing \")");
}

TEST(ConfigNodeSyntax, UnclosedSingleQuote) {
  EXPECT_EQ(parseError("training:\n  precision: 'bf16\n  seq_len: 4096\n"),
            "bad.yaml:2:14: training.precision: invalid YAML: unclosed quote (the string that starts here has no "
            "closing ')");
}

TEST(ConfigNodeSyntax, UnclosedQuoteEndingAtALaterQuoteIsBlamedOnTheString) {
  // The string runs on to the quote in the comment, and yaml-cpp fails just after it.
  EXPECT_EQ(parseError("model: \"llama3-8b\ncluster: dgx-a100\ntraining:\n  tokens: 15e12   # \"over 15T "
                       "tokens\"\n  seq_len: 4096\n"),
            "bad.yaml:1:8: model: invalid YAML: end of map not found at line 4, column 22; the quoted string that "
            "starts here runs on to line 4: is its closing \" missing?");
  // A string that spans lines on purpose is not blamed for an error further on.
  EXPECT_EQ(parseError("description: \"two\n  lines\"\nmodel: [\n"),
            "bad.yaml:4:1: invalid YAML: end of sequence flow not found");
}

TEST(ConfigNodeSyntax, EscapedQuotesAndMultiLineStringsAreFine) {
  const ConfigNode root =
      parseConfigText("a: 'it''s'\nb: \"say \\\"hi\\\"\"\nc: \"two\n  lines\"\nd: \"h\xc3\xa9\"\n", "ok.yaml");
  EXPECT_EQ(root.child("a").asString(), "it's");
  EXPECT_EQ(root.child("b").asString(), "say \"hi\"");
  EXPECT_EQ(root.child("c").asString(), "two lines");
  // After a UTF-8 byte order mark too (yaml-cpp's positions skip it).
  EXPECT_EQ(parseConfigText("\xef\xbb\xbf"
                            "a: \"x\"\n",
                            "ok.yaml")
                .child("a")
                .asString(),
            "x");
}

TEST(ConfigNodeSyntax, DeepNestingSaysSoAtItsPosition) {
  const std::string deep = "a: " + std::string(5000, '[') + std::string(5000, ']') + "\n";
  EXPECT_EQ(parseError(deep),
            "bad.yaml:1:67: invalid YAML: nesting too deep (more than 64 levels of mappings and lists)");
  std::string nested_maps = "a: ";
  for (int i = 0; i < 3000; ++i) nested_maps += "{b: ";
  nested_maps += "1" + std::string(3000, '}') + "\n";
  EXPECT_NE(parseError(nested_maps).find("nesting too deep"), std::string::npos);
}

TEST(ConfigNodeSyntax, OtherSyntaxErrorsKeepYamlCppsMessage) {
  EXPECT_EQ(parseError("a: [1, 2\n"), "bad.yaml:2:1: invalid YAML: end of sequence flow not found");
}

// Found by fuzz_hf_config: yaml-cpp's parser never moves past a ',' after a document (a
// config.json with a comma after its closing brace) and the reader looped for ever.
TEST(ConfigNodeSyntax, CommaAfterTheDocumentIsAnErrorNotAHang) {
  EXPECT_EQ(parseError("{\"model_type\": \"llama\"},\n"), "bad.yaml:1:24: invalid YAML: unexpected \",\"");
  EXPECT_EQ(parseError("[1, 2],"), "bad.yaml:1:7: invalid YAML: unexpected \",\"");
  EXPECT_EQ(parseError(",\n"), "bad.yaml:1:1: invalid YAML: unexpected \",\"");
  EXPECT_EQ(parseError("\"llama\",\n  \"hidden_size\": 4096\n"), "bad.yaml:1:8: invalid YAML: unexpected \",\"");
  EXPECT_EQ(parseError("a: 1\n...\n,\n"), "bad.yaml:3:1: invalid YAML: unexpected \",\"");
  // A --set value goes through the same check.
  ConfigNode root = parseConfigText("training: {seq_len: 4096}\n", "exp.yaml");
  EXPECT_EQ(errorOf([&] { applyOverride(root, parseOverride("training.seq_len=,")); }),
            "--set training.seq_len=,: invalid YAML: unexpected \",\"");
}

TEST(ConfigNodeFiles, DirectoryIsAnInputError) {
  const std::string directory = TRAINSIM_TEST_DATA_DIR;
  EXPECT_EQ(errorOf([&] { (void)loadConfigFile(directory); }), directory + ": is a directory, expected a YAML file");
}

// --- Bounded numbers ----------------------------------------------------------------------

ConfigNode value(const std::string& text) { return parseConfigText("x: " + text + "\n", "v.yaml").child("x"); }

TEST(ConfigNodeRanges, NumberOutsideTheRange) {
  EXPECT_DOUBLE_EQ(value("400").asNumberIn(1e-2, 1e7), 400.0);
  EXPECT_EQ(errorOf([] { (void)value("1e-300").asNumberIn(1e-3, 1e6); }),
            "v.yaml:1:4: x: expected a number between 0.001 and 1000000, found \"1e-300\"");
  EXPECT_EQ(errorOf([] { (void)value("1e300").asNumberIn(1e-3, 1e6); }),
            "v.yaml:1:4: x: expected a number between 0.001 and 1000000, found \"1e300\"");
  EXPECT_EQ(errorOf([] { (void)value("2e5").asNumberIn(0.0, 1e5); }),
            "v.yaml:1:4: x: expected a number between 0 and 100000, found \"2e5\"");
}

TEST(ConfigNodeRanges, TypeAndSignMessagesAreUnchanged) {
  EXPECT_EQ(errorOf([] { (void)value("fast").asNumberIn(1e-3, 1e6); }),
            "v.yaml:1:4: x: expected a positive number, found \"fast\"");
  EXPECT_EQ(errorOf([] { (void)value("-1").asNumberIn(0.0, 1e6); }),
            "v.yaml:1:4: x: expected a number >= 0, found \"-1\"");
  EXPECT_EQ(errorOf([] { (void)value("0").asIntegerIn(1, 10); }),
            "v.yaml:1:4: x: expected a positive integer, found \"0\"");
  EXPECT_EQ(errorOf([] { (void)value("1.5").asIntegerIn(1, 10); }),
            "v.yaml:1:4: x: expected a positive integer, found \"1.5\"");
}

TEST(ConfigNodeRanges, IntegerAboveTheRangeWhateverItsSize) {
  EXPECT_EQ(value("1048576").asIntegerIn(1, int64_t{1} << 20), int64_t{1} << 20);
  for (const char* text : {"1048577", "1e15", "1e300", "9007199254740993", "2.5e6"}) {
    EXPECT_EQ(errorOf([&] { (void)value(text).asIntegerIn(1, int64_t{1} << 20); }),
              std::string("v.yaml:1:4: x: expected an integer between 1 and 1048576, found \"") + text + "\"");
  }
  EXPECT_EQ(errorOf([] { (void)value("3").asIntegerIn(4, 4096); }),
            "v.yaml:1:4: x: expected an integer between 4 and 4096, found \"3\"");
}

TEST(ConfigNodeRanges, KeyedForms) {
  const ConfigNode root = parseConfigText("a: 5\n", "v.yaml");
  EXPECT_EQ(root.integerIn("a", 1, 1, 10), 5);
  EXPECT_EQ(root.integerIn("b", 7, 1, 10), 7);
  EXPECT_DOUBLE_EQ(root.numberIn("b", 0.5, 0.0, 1.0), 0.5);
  EXPECT_EQ(errorOf([&] { (void)root.numberIn("a", 0.5, 0.0, 1.0); }),
            "v.yaml:1:4: a: expected a number between 0 and 1, found \"5\"");
}

TEST(ConfigNodeRanges, FormatBound) {
  EXPECT_EQ(formatBound(0.001), "0.001");
  EXPECT_EQ(formatBound(1048576), "1048576");
  EXPECT_EQ(formatBound(1e18), "1e18");
  EXPECT_EQ(formatBound(1e-300), "1e-300");
  EXPECT_EQ(formatBound(2.5), "2.5");
  EXPECT_EQ(formatBound(0), "0");
}

}  // namespace
}  // namespace trainsim
