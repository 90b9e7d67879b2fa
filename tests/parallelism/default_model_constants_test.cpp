// The shipped defaults of the workload and memory constants (configs/defaults/workload.yaml
// and memory.yaml): they load, hold the values the models were built with (the C++
// initialisers, which tests build directly, so the two cannot drift), and a malformed file is
// an error at file:line:col.
#include "parallelism/default_model_constants.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "parallelism/model_constant_sections.h"
#include "tests/shipped_defaults.h"

namespace trainsim::parallelism {
namespace {

using ::testing::HasSubstr;

const ConfigPaths kShipped{TRAINSIM_CONFIG_DIR_FOR_TESTS};

// The values by name, for a readable failure.
std::vector<std::pair<std::string, double>> byName(const std::vector<perf::ParameterValue>& values) {
  std::vector<std::pair<std::string, double>> pairs;
  for (const perf::ParameterValue& value : values) pairs.emplace_back(value.name, value.value);
  return pairs;
}

TEST(DefaultModelConstantsTest, ShippedWorkloadDefaultsEqualTheInitialisers) {
  const auto loaded = defaultWorkloadOptions(kShipped);
  ASSERT_TRUE(loaded.ok()) << loaded.error().toString();
  EXPECT_EQ(byName(workloadValues(*loaded)), byName(workloadValues(FlopsOptions{})));
  // The former values, spelled out.
  EXPECT_EQ(loaded->causal_work_fraction, 0.5);
  EXPECT_EQ(loaded->flash_backward_matmuls_over_forward, 2.5);
  EXPECT_EQ(loaded->flash_dropout_forward_throughput, 0.80);
  EXPECT_EQ(loaded->flash_dropout_backward_throughput, 0.65);
  EXPECT_EQ(loaded->layer_norm_flops_per_element, 5.0);
  EXPECT_EQ(loaded->gelu_flops_per_element, 8.0);
  EXPECT_EQ(loaded->elementwise_backward_flops_factor, 2.0);
  EXPECT_EQ(loaded->cross_entropy_forward_fp32_accesses, 9.0);
  EXPECT_EQ(loaded->fused_cross_entropy_backward_accesses, 2.0);
  EXPECT_EQ(loaded->tp_overlap_compute_streams, 3);
  EXPECT_EQ(loaded->fp8_quantize_bytes_per_element, 4.0);
  EXPECT_EQ(loaded->fp8_current_scaling_amax_bytes_per_element, 2.0);
  EXPECT_EQ(loaded->dropout_mask_bytes, 1.0);
  EXPECT_EQ(loaded->token_id_bytes, 8.0);
  EXPECT_EQ(loaded->loss_element_bytes, 4.0);
  // The kernel choices are the experiment's, not the file's.
  EXPECT_TRUE(loaded->fused_attention);
  EXPECT_FALSE(loaded->fused_cross_entropy);
  EXPECT_EQ(loaded->moe_dispatch_byte_scale, 1.0);
}

TEST(DefaultModelConstantsTest, ShippedMemoryDefaultsEqualTheInitialisers) {
  const auto loaded = defaultMemoryOptions(kShipped);
  ASSERT_TRUE(loaded.ok()) << loaded.error().toString();
  EXPECT_EQ(byName(memoryValues(*loaded)), byName(memoryValues(MemoryOptions{})));
  EXPECT_EQ(loaded->fp8_weight_copy_bytes, 1.0);
  EXPECT_EQ(loaded->allocator_overhead_fraction, 0.05);
  EXPECT_EQ(loaded->runtime_reserved_bytes, 512.0 * 1024.0 * 1024.0);
  EXPECT_EQ(loaded->nccl_bytes_per_communicator, 256.0 * 1024.0 * 1024.0);
  EXPECT_EQ(loaded->grad_buckets_in_flight, 2.0);
  EXPECT_EQ(loaded->zero3_gathered_layers, 2.0);
  EXPECT_EQ(byName(workloadValues(loaded->kernels)), byName(workloadValues(*defaultWorkloadOptions(kShipped))));
}

TEST(DefaultModelConstantsTest, ShippedTextsParse) {
  const auto workload = parseWorkloadDefaults(shippedDefaultsWith("workload.yaml", "", ""), "workload.yaml");
  ASSERT_TRUE(workload.ok()) << workload.error().toString();
  const auto memory = parseMemoryDefaults(shippedDefaultsWith("memory.yaml", "", ""), "memory.yaml");
  ASSERT_TRUE(memory.ok()) << memory.error().toString();
  EXPECT_FALSE(defaultWorkloadOptions(ConfigPaths{"/nonexistent-trainsim-config"}).ok());
  EXPECT_FALSE(defaultMemoryOptions(ConfigPaths{"/nonexistent-trainsim-config"}).ok());
}

TEST(DefaultModelConstantsTest, UnknownKeyIsAnErrorAtFileLineColumnWithTheClosestKey) {
  const auto parsed =
      parseWorkloadDefaults("workload:\n  causal_work_fraction: 0.5\n  causal_work_fractoin: 0.5\n", "workload.yaml");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().where, "workload.yaml:3:3");
  EXPECT_EQ(parsed.error().code, ExitCode::kInvalidInput);
  EXPECT_THAT(parsed.error().toString(), HasSubstr("did you mean 'causal_work_fraction'?"));

  const auto section = parseMemoryDefaults(shippedDefaultsWith("memory.yaml", "\nmemory:", "\nmemroy:"), "memory.yaml");
  ASSERT_FALSE(section.ok());
  EXPECT_THAT(section.error().toString(), HasSubstr("did you mean 'memory'?"));
}

TEST(DefaultModelConstantsTest, WrongTypeOutOfRangeAndMissingValuesAreErrors) {
  const auto wrong_type = parseMemoryDefaults(
      shippedDefaultsWith("memory.yaml", "allocator_overhead_fraction: 0.05", "allocator_overhead_fraction: lots"),
      "memory.yaml");
  ASSERT_FALSE(wrong_type.ok());
  EXPECT_THAT(wrong_type.error().where, ::testing::MatchesRegex("memory\\.yaml:[0-9]+:[0-9]+"));
  EXPECT_THAT(wrong_type.error().toString(), HasSubstr("expected a number"));

  const auto out_of_range = parseWorkloadDefaults(
      shippedDefaultsWith("workload.yaml", "causal_work_fraction: 0.5", "causal_work_fraction: 1.5"), "workload.yaml");
  ASSERT_FALSE(out_of_range.ok());
  EXPECT_THAT(out_of_range.error().toString(), HasSubstr("a fraction in (0, 1]"));

  const auto not_integer = parseWorkloadDefaults(
      shippedDefaultsWith("workload.yaml", "tp_overlap_compute_streams: 3", "tp_overlap_compute_streams: 2.5"),
      "workload.yaml");
  ASSERT_FALSE(not_integer.ok());
  EXPECT_THAT(not_integer.error().toString(), HasSubstr("integer"));

  const auto missing =
      parseMemoryDefaults(shippedDefaultsWith("memory.yaml", "  zero3_gathered_layers: 2.0\n", ""), "memory.yaml");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().toString(), HasSubstr("zero3_gathered_layers"));

  const auto empty = parseWorkloadDefaults("", "workload.yaml");
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(empty.error().toString(), HasSubstr("expected a `workload:` section"));
}

TEST(DefaultModelConstantsTest, SectionsApplyOverOptionsAndWriteBack) {
  const ConfigNode section = parseConfigText(
      "workload: {flash_dropout_forward_throughput: 0.5, tp_overlap_compute_streams: 2}\n"
      "memory: {allocator_overhead_fraction: 0.15}\n",
      "calib.yaml");
  const auto workload = readWorkloadSection(section.child("workload"));
  const auto memory = readMemorySection(section.child("memory"));
  FlopsOptions flops;
  applyWorkloadValues(workload, flops);
  EXPECT_EQ(flops.flash_dropout_forward_throughput, 0.5);
  EXPECT_EQ(flops.tp_overlap_compute_streams, 2);
  EXPECT_EQ(flops.flash_dropout_backward_throughput, FlopsOptions{}.flash_dropout_backward_throughput);
  MemoryOptions options;
  applyMemoryValues(memory, options);
  EXPECT_EQ(options.allocator_overhead_fraction, 0.15);
  EXPECT_EQ(constantSectionYaml(workload),
            "  flash_dropout_forward_throughput: 0.5\n  tp_overlap_compute_streams: 2\n");
}

}  // namespace
}  // namespace trainsim::parallelism
