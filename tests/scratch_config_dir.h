// A config directory of the test's own (a fresh folder under the system's temporary
// directory, removed with the object), for tests that need a malformed or minimal data file
// where the loaders look for the shipped ones.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "base/config_paths.h"

namespace trainsim {

class ScratchConfigDir {
 public:
  // `prefix` names the folder after the test that made it.
  explicit ScratchConfigDir(const std::string& prefix) {
    static int counter = 0;
    root_ = std::filesystem::temp_directory_path() /
            (prefix + "_" + std::to_string(::getpid()) + "_" + std::to_string(++counter));
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_);
  }
  ~ScratchConfigDir() {
    std::error_code ignored;
    std::filesystem::remove_all(root_, ignored);
  }
  ScratchConfigDir(const ScratchConfigDir&) = delete;
  ScratchConfigDir& operator=(const ScratchConfigDir&) = delete;

  // Writes `text` to `relative` (e.g. "validation/gemm.yaml"), making its folders.
  void write(const std::string& relative, const std::string& text) const {
    const std::filesystem::path path = root_ / relative;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << text;
  }
  [[nodiscard]] ConfigPaths paths() const { return {root_.string()}; }
  [[nodiscard]] std::string file(const std::string& relative) const { return (root_ / relative).string(); }

 private:
  std::filesystem::path root_;
};

}  // namespace trainsim
