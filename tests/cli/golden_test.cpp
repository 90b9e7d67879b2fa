// Golden end-to-end results of the shipped experiments: `trainsim simulate EXP --json -`
// must reproduce tests/data/golden/EXP.json. A deliberate model change regenerates them:
//   for e in $(ls tests/data/golden | sed 's/.json//'); do
//     ./build/trainsim simulate $e --json tests/data/golden/$e.json; done
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

namespace {

std::string runSimulate(const std::string& experiment) {
  const std::string command = std::string(TRAINSIM_EXECUTABLE) + " --config-dir " + TRAINSIM_CONFIG_DIR_FOR_TESTS +
                              " simulate " + experiment + " --json -";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  std::string output;
  std::array<char, 4096> buffer{};
  while (pipe && std::fgets(buffer.data(), static_cast<int>(buffer.size()), pipe.get()) != nullptr) {
    output += buffer.data();
  }
  return output;
}

// Numbers equal to 1e-9 relative (bit-identical on one build; the slack absorbs a different
// compiler's floating-point contraction), everything else exactly.
void expectSame(const nlohmann::json& expected, const nlohmann::json& actual, const std::string& path) {
  if (expected.is_number() && actual.is_number()) {
    const double a = expected.get<double>();
    const double b = actual.get<double>();
    EXPECT_LE(std::fabs(a - b), 1e-9 * std::max(std::fabs(a), 1e-30)) << path << ": " << a << " vs " << b;
    return;
  }
  ASSERT_EQ(expected.type(), actual.type()) << path;
  if (expected.is_object()) {
    ASSERT_EQ(expected.size(), actual.size()) << path;
    for (const auto& [key, value] : expected.items()) {
      ASSERT_TRUE(actual.contains(key)) << path << "." << key;
      expectSame(value, actual.at(key), path + "." + key);
    }
  } else {
    EXPECT_EQ(expected, actual) << path;
  }
}

class GoldenSimulateTest : public ::testing::TestWithParam<const char*> {};

TEST_P(GoldenSimulateTest, ReproducesTheGoldenResult) {
  const std::string experiment = GetParam();
  std::ifstream golden(std::string(TRAINSIM_TEST_DATA_DIR) + "/golden/" + experiment + ".json");
  ASSERT_TRUE(golden) << "missing golden file for " << experiment;
  const nlohmann::json expected = nlohmann::json::parse(golden);
  const nlohmann::json actual = nlohmann::json::parse(runSimulate(experiment));
  expectSame(expected, actual, experiment);
}

INSTANTIATE_TEST_SUITE_P(ShippedExperiments, GoldenSimulateTest,
                         ::testing::Values("llama3-8b-dgx-h100", "llama2-70b-h100", "mixtral-8x7b-h100",
                                           "mixtral-8x7b-mi300x", "gpt3-175b-selene"));

}  // namespace
