// End to end: `trainsim memory` on shipped experiments, run as a user would.
#include <sys/wait.h>

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

namespace {

struct CommandResult {
  int exit_code = -1;
  std::string out;  // stdout only; stderr is discarded
};

CommandResult runTrainsim(const std::string& arguments) {
  const std::string command = std::string(TRAINSIM_EXECUTABLE) + " --config-dir " + TRAINSIM_CONFIG_DIR_FOR_TESTS +
                              " " + arguments + " 2>/dev/null";
  CommandResult run;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return run;
  std::array<char, 4096> buffer{};
  std::size_t read = 0;
  while ((read = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) run.out.append(buffer.data(), read);
  const int status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

TEST(MemoryCommand, PrintsTheBreakdownOfAShippedExperiment) {
  const CommandResult run = runTrainsim("memory gpt3-175b-selene");
  EXPECT_EQ(run.exit_code, 0) << run.out;
  EXPECT_NE(run.out.find("per-GPU memory (GiB)"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("<- peak"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find(": fits"), std::string::npos) << run.out;
}

TEST(MemoryCommand, JsonHasTheSpecKeys) {
  const CommandResult run = runTrainsim("memory llama3-405b-16k-h100 --json -");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const auto json = nlohmann::json::parse(run.out);  // nothing but JSON on stdout
  EXPECT_EQ(json.at("experiment"), "llama3-405b-16k-h100");
  EXPECT_EQ(json.at("gpus"), 16384);
  const auto& parallelism = json.at("parallelism");
  for (const char* key : {"dp", "tp", "pp", "cp", "ep", "virtual_stages", "microbatches"}) {
    EXPECT_TRUE(parallelism.contains(key)) << key;
  }
  EXPECT_EQ(parallelism.at("dp"), 128);
  EXPECT_EQ(parallelism.at("microbatches"), 16);
  const auto& memory = json.at("memory");
  for (const char* key :
       {"peak_bytes_per_gpu", "capacity_bytes", "fits", "weights", "gradients", "optimizer", "activations", "other"}) {
    EXPECT_TRUE(memory.contains(key)) << key;
  }
  EXPECT_EQ(memory.at("capacity_bytes"), 80LL << 30);
  EXPECT_TRUE(memory.at("fits").get<bool>());
  const auto parts = memory.at("weights").get<int64_t>() + memory.at("gradients").get<int64_t>() +
                     memory.at("optimizer").get<int64_t>() + memory.at("activations").get<int64_t>() +
                     memory.at("other").get<int64_t>();
  EXPECT_NEAR(static_cast<double>(parts), memory.at("peak_bytes_per_gpu").get<double>(), 8.0);
  ASSERT_EQ(json.at("stages").size(), 16u);
  EXPECT_EQ(json.at("stages").at(0).at("layers"), 7);  // first_stage_layers
}

TEST(MemoryCommand, DoesNotFitExitsWith3) {
  // Llama 3 8B without context parallelism: twice the activations of the shipped plan.
  const CommandResult run = runTrainsim(
      "memory llama3-8b-dgx-h100 --set parallelism.cp=1 --set parallelism.dp=8 --set parallelism.zero=0 --json -");
  EXPECT_EQ(run.exit_code, 3);
  const auto json = nlohmann::json::parse(run.out);
  EXPECT_FALSE(json.at("memory").at("fits").get<bool>());
  EXPECT_GT(json.at("memory").at("peak_bytes_per_gpu").get<double>(),
            json.at("memory").at("capacity_bytes").get<double>());
}

TEST(MemoryCommand, UnfusedAttentionHoldsTheScoresInActivationMemory) {
  // training.flash_attention: false keeps each layer's s x s softmax output (seq 8192 here).
  const CommandResult flash = runTrainsim("memory llama3-8b-dgx-h100 --json -");
  const CommandResult unfused = runTrainsim("memory llama3-8b-dgx-h100 --set training.flash_attention=false --json -");
  ASSERT_EQ(flash.exit_code, 0) << flash.out;
  ASSERT_TRUE(unfused.exit_code == 0 || unfused.exit_code == 3) << unfused.out;
  const auto activations = [](const CommandResult& run) {
    return nlohmann::json::parse(run.out).at("memory").at("activations").get<double>();
  };
  EXPECT_GT(activations(unfused), activations(flash) + 1e9);
  const CommandResult text = runTrainsim("memory llama3-8b-dgx-h100 --set training.flash_attention=false");
  EXPECT_NE(text.out.find(", unfused attention\n"), std::string::npos) << text.out;
  EXPECT_EQ(runTrainsim("memory llama3-8b-dgx-h100").out.find("unfused"), std::string::npos);
}

TEST(MemoryCommand, Fp8WeightsAreNamedAndHoldLess) {
  // The shipped Llama 3 8B plan in FP8 on H100: bf16 weights with cached FP8 copies (4 bytes
  // per parameter), or FP8 weights with their transposes (2).
  const std::string fp8 = "memory llama3-8b-dgx-h100 --set training.precision=fp8";
  const CommandResult copies = runTrainsim(fp8 + " --json -");
  const CommandResult weights = runTrainsim(fp8 + " --set training.fp8_param_gather=true --json -");
  // (Exit code 3 also prints the breakdown: with its 16-bit copy the plan is near the limit.)
  ASSERT_TRUE(copies.exit_code == 0 || copies.exit_code == 3) << copies.out;
  ASSERT_TRUE(weights.exit_code == 0 || weights.exit_code == 3) << weights.out;
  const auto held = [](const CommandResult& run) {
    return nlohmann::json::parse(run.out).at("memory").at("weights").get<double>();
  };
  EXPECT_NEAR(held(weights) / held(copies), 0.5, 1e-6);
  EXPECT_NE(runTrainsim(fp8 + " --set training.fp8_param_gather=true").out.find(", fp8 weights"), std::string::npos);
  EXPECT_EQ(runTrainsim(fp8).out.find("fp8 weights"), std::string::npos);
  EXPECT_EQ(runTrainsim("memory llama3-8b-dgx-h100 --set training.fp8_param_gather=true").exit_code, 2);
}

TEST(MemoryCommand, InvalidPlanExitsWith2) {
  EXPECT_EQ(runTrainsim("memory gpt3-175b-selene --set parallelism.tp=5").exit_code, 2);
  EXPECT_EQ(runTrainsim("memory no-such-experiment").exit_code, 2);
}

}  // namespace
