#include "calibrate/gpu_name_match.h"

#include <cctype>
#include <vector>

namespace trainsim::calibrate {
namespace {

std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> result;
  std::string current;
  for (char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      current += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!current.empty()) {
      result.push_back(std::move(current));
      current.clear();
    }
  }
  if (!current.empty()) result.push_back(std::move(current));
  return result;
}

}  // namespace

bool gpuNameMatches(const std::string& measured_name, const topology::GpuSpec& gpu) {
  const auto key_words = words(gpu.key);
  if (key_words.empty()) return true;
  for (const auto& word : words(measured_name)) {
    if (word == key_words.front()) return true;
  }
  return false;
}

}  // namespace trainsim::calibrate
