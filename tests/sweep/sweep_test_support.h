// A small sweep case shared by the sweep tests: an 8-layer GPT with a wide hidden size on
// 8 H100s, so that the space is small enough to check exhaustively and some plans do not fit.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "base/config_paths.h"

namespace trainsim::sweep::testing {

inline constexpr const char* kSmallExperiment = R"(name: small-sweep
model:
  name: wide-8-layer
  architecture: gpt
  layers: 8
  hidden_size: 8192
  attention_heads: 64
  vocab_size: 51200
cluster: dgx-h100
training:
  seq_len: 2048
  global_batch_size: 16
  precision: bf16
  tokens: 1e9
parallelism:
  gpus: 8
)";

inline ConfigPaths testConfigPaths() { return ConfigPaths{TRAINSIM_CONFIG_DIR_FOR_TESTS}; }

// The experiment written to a file of its own (removed with the object).
class ExperimentFile {
 public:
  explicit ExperimentFile(const std::string& text = kSmallExperiment) {
    static int counter = 0;
    path_ = std::filesystem::temp_directory_path() /
            ("trainsim_sweep_test_" + std::to_string(::getpid()) + "_" + std::to_string(++counter) + ".yaml");
    std::ofstream(path_) << text;
  }
  ~ExperimentFile() {
    std::error_code ignored;
    std::filesystem::remove(path_, ignored);
  }
  ExperimentFile(const ExperimentFile&) = delete;
  ExperimentFile& operator=(const ExperimentFile&) = delete;
  [[nodiscard]] std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace trainsim::sweep::testing
