// Test support: running the built `trainsim` as a user would (stdout, stderr, exit status and
// wall time captured), and a scratch directory per test.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace trainsim::cli_testing {

namespace fs = std::filesystem;

struct TrainsimRun {
  int exit_code = -1;
  std::string out;
  std::string err;
  double seconds = 0.0;
};

inline std::string shellQuoted(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

inline std::string fileText(const fs::path& path) {
  std::ifstream stream(path, std::ios::binary);
  std::ostringstream text;
  text << stream.rdbuf();
  return text.str();
}

// A scratch directory for one test, removed at the end.
class ScratchDir {
 public:
  ScratchDir() {
    static int counter = 0;
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() / ("trainsim_cli_run_" + std::to_string(::getpid()) + "_" +
                                         (info != nullptr ? info->name() : "x") + "_" + std::to_string(++counter));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  [[nodiscard]] const fs::path& path() const { return path_; }
  [[nodiscard]] std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

// Runs `trainsim [--config-dir <the source tree's presets>] ARGS...`: a hang fails (exit
// 124); with `stdout_to`, stdout goes to that file (and `out` stays empty).
inline TrainsimRun runTrainsim(const std::vector<std::string>& args, int timeout_s = 120, bool with_config_dir = true,
                               const std::string& stdout_to = "") {
  const ScratchDir scratch;
  std::string command = "timeout " + std::to_string(timeout_s) + " " + shellQuoted(TRAINSIM_EXECUTABLE);
  if (with_config_dir) command += " --config-dir " + shellQuoted(TRAINSIM_CONFIG_DIR_FOR_TESTS);
  for (const auto& arg : args) command += " " + shellQuoted(arg);
  const std::string out = stdout_to.empty() ? scratch / "stdout" : stdout_to;
  command += " >" + shellQuoted(out) + " 2>" + shellQuoted(scratch / "stderr") + " </dev/null";
  const auto start = std::chrono::steady_clock::now();
  const int status = std::system(command.c_str());
  TrainsimRun run;
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (status != -1 && WIFEXITED(status)) run.exit_code = WEXITSTATUS(status);
  if (stdout_to.empty()) run.out = fileText(scratch / "stdout");
  run.err = fileText(scratch / "stderr");
  return run;
}

}  // namespace trainsim::cli_testing
