// Output files end to end (issue 40): every output option's path is checked before the
// command computes anything (exit 1 naming it), and a file is replaced only once complete.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "trainsim_run.h"

namespace trainsim::cli_testing {
namespace {

// Each command with each output option it has, writing to `path`.
std::vector<std::vector<std::string>> everyOutputOption(const std::string& path, const std::string& log) {
  return {
      {"simulate", "llama3-8b-dgx-h100", "--json", path},
      {"simulate", "llama3-8b-dgx-h100", "--trace", path},
      {"simulate", "llama3-8b-dgx-h100", "--html", path},
      {"memory", "llama3-8b-dgx-h100", "--json", path},
      {"topology", "dgx-h100", "--no-bisection", "--json", path},
      {"topology", "dgx-h100", "--no-bisection", "--dot", path},
      {"collective", "--cluster", "dgx-a100", "--gpus", "16", "-b", "1M", "-e", "1M", "--json", path},
      {"sweep", "llama3-8b-dgx-h100", "--json", path},
      {"sweep", "llama3-8b-dgx-h100", "--csv", path},
      {"sweep", "llama3-8b-dgx-h100", "--plot", path},
      {"sweep", "llama3-8b-dgx-h100", "--html", path},
      {"validate", "collectives", "--json", path},
      {"calibrate", "--cluster", "dgx-a100", "--nccl-tests", log, "--out", path},
  };
}

// Regression test for issue 40: a path that could not be opened was found only after the
// computation (a sweep ran 14 s first) and exited 2; the contract's code is 1.
TEST(OutputFiles, AnUnwritablePathIsExitOneBeforeAnyComputation) {
  const ScratchDir dir;
  // The log does not exist: a command that read its inputs first would exit 2 on it.
  const std::string log = dir / "missing.log";
  struct Case {
    std::string path;
    std::string reason;
  };
  const std::vector<Case> cases = {
      {dir / "no-such-directory/out.json", "No such file or directory"},
      {dir.path().string(), "Is a directory"},
  };
  for (const auto& c : cases) {
    for (const auto& args : everyOutputOption(c.path, log)) {
      const TrainsimRun run = runTrainsim(args);
      const std::string command = args[0] + " " + args[args.size() - 2];
      EXPECT_EQ(run.exit_code, 1) << command << "\n" << run.err;
      EXPECT_EQ(run.err, "trainsim: error: " + c.path + ": cannot write the output file: " + c.reason + "\n")
          << command;
      EXPECT_EQ(run.out, "") << command;
      // A sweep or a validate suite takes seconds; the check, a fraction of one.
      EXPECT_LT(run.seconds, 5.0) << command;
    }
  }
  EXPECT_FALSE(fs::exists(dir / "no-such-directory"));
}

// A successful run replaces the previous file whole and leaves nothing beside it.
TEST(OutputFiles, AnOutputReplacesThePreviousFileAndLeavesNoTemporary) {
  const ScratchDir dir;
  const std::string json = dir / "memory.json";
  std::ofstream(json) << "previous content, longer than nothing\n";
  const TrainsimRun run = runTrainsim({"memory", "llama3-8b-dgx-h100", "--json", json});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string text = fileText(json);
  EXPECT_EQ(text.rfind("{", 0), 0u) << text.substr(0, 100);
  EXPECT_EQ(text.substr(text.size() - 2), "}\n");
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir.path())) names.push_back(entry.path().filename().string());
  EXPECT_EQ(names, std::vector<std::string>{"memory.json"});
}

// A run that fails leaves the previous output as it was.
TEST(OutputFiles, AFailedRunLeavesThePreviousFile) {
  const ScratchDir dir;
  const std::string json = dir / "simulate.json";
  std::ofstream(json) << "previous\n";
  const TrainsimRun run = runTrainsim({"simulate", "llama3-8b-dgx-h100", "--set", "parallelism.tp=3", "--json", json});
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_EQ(fileText(json), "previous\n");
}

// An experiment without `name:` is named after its file, whose path may hold bytes that are not
// UTF-8: the JSON writer (nlohmann-json) threw on them after the computation (exit 1). They are
// written as U+FFFD.
TEST(OutputFiles, ANameFromAPathThatIsNotUtf8IsWrittenAsReplacementCharacters) {
  const ScratchDir dir;
  const std::string experiment = dir / "run-\xFF.yaml";
  std::ofstream(experiment) << "model: llama3-8b\ncluster: dgx-h100\n"
                               "training: {seq_len: 2048, global_batch_size: 8}\nparallelism: {gpus: 8, zero: 3}\n";
  const std::string json = dir / "result.json";
  const TrainsimRun run = runTrainsim({"memory", experiment, "--json", json});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto result = nlohmann::json::parse(fileText(json));
  EXPECT_EQ(result.at("experiment").get<std::string>(), "run-\xEF\xBF\xBD");
}

}  // namespace
}  // namespace trainsim::cli_testing
