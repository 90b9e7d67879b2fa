// The shipped defaults (configs/defaults/*.yaml): they load, hold the values the models were
// built with, name every catalog GPU's NVLink efficiency as the former rule did, and a
// malformed file is an error at file:line:col.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <string>

#include "perf/default_parameters.h"
#include "perf/parameter_names.h"
#include "perf/parameter_sections.h"
#include "tests/shipped_defaults.h"
#include "topology/gpu_catalog.h"

namespace trainsim::perf {
namespace {

const ConfigPaths kShipped{TRAINSIM_CONFIG_DIR_FOR_TESTS};

TEST(DefaultParametersTest, ShippedComputeDefaultsHoldThePreviousValues) {
  const auto loaded = defaultComputeParameters(kShipped);
  ASSERT_TRUE(loaded.ok()) << loaded.error().toString();
  const ComputeParameters& p = *loaded;
  ASSERT_EQ(p.matmul_ceilings.size(), 20U);
  EXPECT_EQ(p.matmul_ceilings[4].gpu_key, "h100-sxm");
  EXPECT_EQ(p.matmul_ceilings[4].precision, topology::Precision::kFp8);
  EXPECT_EQ(p.matmul_ceilings[4].tflops, 1382.2);
  EXPECT_EQ(p.matmul_ceiling_default, 0.75);
  ASSERT_EQ(p.gemm_tiles.size(), 6U);
  EXPECT_EQ(p.gemm_tiles.front().m, 256);
  EXPECT_EQ(p.gemm_tiles.back().n, 64);
  EXPECT_EQ(p.full_rate_operand_reuse, 48.0);
  EXPECT_EQ(p.tile_fixed_overhead_us, 2.0);
  EXPECT_EQ(p.tileFixedOverheadSeconds("gb200"), 0.2 * 1e-6);
  EXPECT_EQ(p.fallback_compute_units, 132);
  EXPECT_EQ(p.gemmEpilogueExposed("a100-pcie-80gb"), 1.0);
  EXPECT_EQ(p.gemm_epilogue_exposed_default, 0.0);
  EXPECT_EQ(p.memoryEfficiency("b200"), 0.862);
  EXPECT_EQ(p.memory_efficiency_default, 0.87);
  EXPECT_EQ(p.elementwise_compute_efficiency, 1.0);
  ASSERT_EQ(p.attention_rates.size(), 22U);  // 6 one-row GPUs, B200 and GB200 over sequence length
  EXPECT_EQ(p.attention_rates[6].backward_tflops, 994.9);
  EXPECT_EQ(p.attention_rates[0].measured_at, (AttentionShape{64.0, 8192.0, 8192.0}));
  EXPECT_EQ(p.attention_to_matmul_default, 0.5);
  EXPECT_EQ(p.attention_default_measured_at, (AttentionShape{32.0, 8192.0, 8192.0}));
  EXPECT_EQ(p.attentionTileOverhead("b200"), (AttentionTileOverhead{5.0, 8.0}));
  EXPECT_EQ(p.attention_tile_overhead_default, (AttentionTileOverhead{2.0, 3.0}));
  EXPECT_EQ(p.collective_compute_share_default, 16.0 / 108.0);
  EXPECT_THAT(p.collective_offload_vendors, ::testing::ElementsAre("intel", "google"));
  EXPECT_EQ(p.launch_overhead_us, 4.0);
  EXPECT_TRUE(p.gemm_shape_efficiency.empty());
  EXPECT_EQ(p.trainingRateFraction("h100-sxm"), 0.883);
  EXPECT_EQ(p.trainingRateFraction("gb200"), 0.828);
  EXPECT_EQ(p.trainingRateFraction("mi300x"), 1.0);
}

TEST(DefaultParametersTest, ShippedCommunicationDefaultsHoldThePreviousValues) {
  const auto loaded = defaultCommunicationParameters(kShipped);
  ASSERT_TRUE(loaded.ok()) << loaded.error().toString();
  const CommunicationParameters& p = *loaded;
  EXPECT_EQ(p.nvlink_efficiency_default, 0.82);
  EXPECT_EQ(p.infiniband_efficiency, 0.94);
  EXPECT_EQ(p.ethernet_efficiency, 0.90);
  EXPECT_EQ(p.pcie_efficiency, 0.85);
  EXPECT_EQ(p.other_efficiency, 0.85);
  EXPECT_EQ(p.nvls_efficiency, 0.60);
  // NCCL 2.21.5+'s ring LL ".5", LL128 .92; its tree's LL 1/3.8 and LL128 120/128.
  EXPECT_EQ(p.protocol_bandwidth_factor, (std::array<double, 3>{0.5, 0.92, 1.0}));
  EXPECT_DOUBLE_EQ(p.tree_protocol_bandwidth_factor[0], 1.0 / 3.8);
  EXPECT_EQ(p.tree_protocol_bandwidth_factor[1], 0.9375);
  EXPECT_EQ(p.tree_protocol_bandwidth_factor[2], 1.0);
  EXPECT_EQ(p.ring_ll_bandwidth_factor_before_2_21_5, 0.25);
  // NCCL's llMaxBws (N1 by GPU class; Intel hosts' N2 and N4) and LL128 per-channel caps
  // (tuning.cc at 5067397c).
  EXPECT_EQ(p.ll_max_bus_GBps_one_node, (std::array<double, 4>{39.0, 87.7, 141.0, 282.0}));
  EXPECT_EQ(p.ll_max_bus_GBps_two_nodes, 39.0);
  EXPECT_EQ(p.ll_max_bus_GBps_more_nodes, 20.4);
  EXPECT_EQ(p.ll_max_bus_GBps_amd_host_two_nodes, 22.5);
  EXPECT_EQ(p.ll_max_bus_GBps_amd_host_more_nodes, 19.0);
  EXPECT_EQ(p.ring_net_overhead_amd_host_us, 2.0);
  EXPECT_EQ(p.ring_ll128_max_bus_GBps_per_channel, (std::array<double, 4>{20.0, 20.0, 36.7, 40.0}));
  EXPECT_EQ(p.tree_ll128_max_bus_GBps_per_channel,
            (std::array<std::array<double, 2>, 4>{{{20.0, 20.0}, {20.0, 20.0}, {36.7, 29.0}, {31.67, 20.0}}}));
  EXPECT_EQ(p.base_latency_us[1], (std::array<double, 3>{6.8, 14.0, 8.4}));
  // NVLS: one step of 25 us (NCCL 2.21+), no base beside it.
  EXPECT_EQ(p.base_latency_us[2], (std::array<double, 3>{0.0, 0.0, 0.0}));
  EXPECT_EQ(p.ring_step_latency_us[2], (std::array<double, 3>{2.7, 4.0, 14.0}));
  EXPECT_EQ(p.tree_step_latency_us[0], (std::array<double, 3>{0.6, 1.25, 4.0}));
  EXPECT_EQ(p.tree_step_latency_us[1], (std::array<double, 3>{1.0, 1.9, 4.0}));
  EXPECT_EQ(p.nvls_step_latency_us, 25.0);
  EXPECT_EQ(p.nvls_step_latency_us_before_2_21_5, 23.0);
  // NVLS_NCHANNELS_SM90 / SM100_NVL / SM100 and NCCL_NVLS_CHUNKSIZE (src/transport/nvls.cc).
  EXPECT_EQ(p.nvls_channels,
            (std::array<std::array<double, 2>, 4>{{{16.0, 16.0}, {16.0, 16.0}, {16.0, 16.0}, {24.0, 32.0}}}));
  EXPECT_EQ(p.nvls_max_chunk_bytes, 131072.0);
  EXPECT_EQ(p.nvls_max_heads, 32.0);
  EXPECT_EQ(p.nvls_max_heads_before_2_21_5, 8.0);
  EXPECT_EQ(p.nvls_tree_max_chunk_bytes_four_nodes, 65536.0);
  EXPECT_EQ(p.nvls_chunk_overhead_us, 0.66);
  EXPECT_EQ(p.ll_multi_node_intra_step_factor, 1.0);
  EXPECT_EQ(p.ring_net_overhead_us, 1.0);
  EXPECT_EQ(p.ring_net_overhead_simple_factor, 3.0);
  EXPECT_EQ(p.nccl_version, 23007);
  EXPECT_EQ(p.pat_bandwidth_factor, 0.75);
  EXPECT_EQ(p.chunk_bytes, (std::array<double, 3>{32768.0, 576000.0, 524288.0}));
  EXPECT_EQ(p.pipeline_channels, 16.0);
  EXPECT_EQ(p.channel_bandwidth_GBps, 50.0);
  EXPECT_EQ(p.tree_bandwidth_factor, 0.9);
  // NCCL's perChMaxTreeBws (tuning.cc at 5067397c), 2-node and >= 3-node columns.
  using Caps = std::array<std::array<double, 2>, 4>;
  EXPECT_EQ(p.tree_max_bus_GBps_per_channel, (Caps{{{18.5, 10.0}, {23.6, 17.8}, {41.4, 36.0}, {42.8, 24.0}}}));
  EXPECT_EQ(p.tree_max_bus_GBps_two_nodes, 0.0);
  EXPECT_EQ(p.tree_max_bus_GBps_more_nodes, 0.0);
  EXPECT_EQ(p.nccl_max_channels, 32.0);
  EXPECT_EQ(p.channel_duplication_min_GBps, 25.0);
  EXPECT_EQ(p.channel_duplication_full_GBps, 50.0);
  EXPECT_EQ(p.channel_duplication_max_channels, 4.0);
  EXPECT_EQ(p.tree_algorithm_bandwidth_ratio, 0.5);
  EXPECT_EQ(p.launch_overhead_us, 12.0);
}

// The shipped rows: A100 0.78, B200 and GB200 0.76, AMD's xGMI (MI300X, MI325X, MI355X)
// 0.75, every other GPU 0.82.
double expectedNvlinkEfficiency(std::string_view gpu_key) {
  if (gpu_key.starts_with("a100")) return 0.78;
  if (gpu_key.starts_with("b200") || gpu_key.starts_with("gb200")) return 0.76;
  if (gpu_key == "mi300x" || gpu_key == "mi325x" || gpu_key == "mi355x") return 0.75;
  return 0.82;
}

TEST(DefaultParametersTest, NvlinkEfficiencyOfEveryCatalogGpu) {
  const auto parameters = defaultCommunicationParameters(kShipped);
  ASSERT_TRUE(parameters.ok()) << parameters.error().toString();
  const auto catalog = topology::GpuCatalog::load(std::string(TRAINSIM_CONFIG_DIR_FOR_TESTS) + "/gpus.yaml");
  ASSERT_TRUE(catalog.ok()) << catalog.error().toString();
  ASSERT_GE(catalog->keys().size(), 20U);
  for (const std::string& key : catalog->keys()) {
    EXPECT_EQ(parameters->linkEfficiency(topology::LinkType::kNvLink, key), expectedNvlinkEfficiency(key)) << key;
  }
  // An inline GPU (no catalog key of its own) takes the default.
  EXPECT_EQ(parameters->linkEfficiency(topology::LinkType::kNvLink, "inline"), 0.82);
  // Every row names a catalog GPU.
  for (const MeasuredFraction& row : parameters->nvlink_efficiency) {
    EXPECT_NE(catalog->find(row.gpu_key), nullptr) << row.gpu_key;
  }
}

// NCCL's GPU class (the row of its per-generation tables) of every catalog GPU, by its
// compute capability; parts without one (AMD, Intel, Google) take Hopper's.
TEST(DefaultParametersTest, NcclGpuClassOfEveryCatalogGpu) {
  const auto catalog = topology::GpuCatalog::load(std::string(TRAINSIM_CONFIG_DIR_FOR_TESTS) + "/gpus.yaml");
  ASSERT_TRUE(catalog.ok()) << catalog.error().toString();
  const auto expected = [](std::string_view key) {
    for (std::string_view prefix : {"v100", "p100", "k80", "t4", "quadro"}) {
      if (key.starts_with(prefix)) return NcclGpuClass::kVolta;
    }
    for (std::string_view prefix : {"a100", "a10g", "rtx-3090", "l4", "l40s", "rtx-4090"}) {
      if (key.starts_with(prefix)) return NcclGpuClass::kAmpere;
    }
    for (std::string_view prefix : {"b200", "gb200", "b300", "gb300"}) {
      if (key.starts_with(prefix)) return NcclGpuClass::kBlackwell;
    }
    return NcclGpuClass::kHopper;
  };
  for (const std::string& key : catalog->keys()) {
    const topology::GpuSpec* gpu = catalog->find(key);
    ASSERT_NE(gpu, nullptr) << key;
    EXPECT_EQ(gpu->compute_capability.has_value(), gpu->vendor == "nvidia") << key;
    EXPECT_EQ(ncclGpuClass(gpu->compute_capability), expected(key)) << key;
  }
  EXPECT_EQ(ncclGpuClass(8.9), NcclGpuClass::kAmpere);
  EXPECT_EQ(ncclGpuClass(9.0), NcclGpuClass::kHopper);
  EXPECT_EQ(ncclGpuClass(10.3), NcclGpuClass::kBlackwell);
  EXPECT_EQ(ncclGpuClass(std::nullopt), NcclGpuClass::kHopper);
}

TEST(DefaultParametersTest, LoadedOncePerConfigDirectory) {
  const auto first = defaultComputeParameters(kShipped);
  const auto second = defaultComputeParameters(kShipped);
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(first->matmul_ceilings.size(), second->matmul_ceilings.size());
  EXPECT_FALSE(defaultComputeParameters(ConfigPaths{"/nonexistent-trainsim-config"}).ok());
}

TEST(DefaultParametersTest, MalformedKeyIsAnErrorAtFileLineColumn) {
  const std::string text = "compute:\n  launch_overhead_us: 4.0\n  lunch_overhead: 4.0\n";
  const auto parsed = parseComputeDefaults(text, "compute.yaml");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().where, "compute.yaml:3:3");
  EXPECT_THAT(parsed.error().toString(), ::testing::HasSubstr("did you mean"));

  const auto nested = parseCommunicationDefaults(
      shippedDefaultsWith("communication.yaml", "ring: {LL: 6.6,", "ring: {LL: 6.6, LL129: 1,"), "communication.yaml");
  ASSERT_FALSE(nested.ok());
  EXPECT_THAT(nested.error().where, ::testing::StartsWith("communication.yaml:"));
  EXPECT_THAT(nested.error().toString(), ::testing::HasSubstr("LL129"));
}

TEST(DefaultParametersTest, MissingOrOutOfRangeValuesAreErrors) {
  const auto missing = parseCommunicationDefaults(
      shippedDefaultsWith("communication.yaml", "  ll_multi_node_intra_step_factor: 1.0\n", ""), "communication.yaml");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().toString(), ::testing::HasSubstr("ll_multi_node_intra_step_factor"));

  const auto out_of_range = parseComputeDefaults(
      shippedDefaultsWith("compute.yaml", "memory_efficiency_default: 0.87", "memory_efficiency_default: 1.5"),
      "compute.yaml");
  ASSERT_FALSE(out_of_range.ok());
  EXPECT_THAT(out_of_range.error().toString(), ::testing::HasSubstr("a fraction in (0, 1]"));

  const auto not_yaml = parseComputeDefaults("compute: [\n", "compute.yaml");
  ASSERT_FALSE(not_yaml.ok());
  EXPECT_THAT(not_yaml.error().where, ::testing::StartsWith("compute.yaml:"));
}

TEST(DefaultParametersTest, ShippedTextsParseToTheCachedDefaults) {
  const auto from_text = parseComputeDefaults(shippedDefaultsWith("compute.yaml", "", ""), "compute.yaml");
  ASSERT_TRUE(from_text.ok()) << from_text.error().toString();
  EXPECT_EQ(from_text->collective_compute_share_default,
            defaultComputeParameters(kShipped)->collective_compute_share_default);
}

TEST(ParameterNamesTest, EveryNamedValueReadsBackWhatWasSet) {
  auto communication = *defaultCommunicationParameters(kShipped);
  for (const auto& name : communicationParameterNames()) {
    name.set(communication, "h100-sxm", 0.125);
    EXPECT_EQ(name.get(communication, "h100-sxm"), 0.125) << name.name;
  }
  auto compute = *defaultComputeParameters(kShipped);
  for (const auto& name : computeParameterNames()) {
    name.set(compute, "", 3.0);
    EXPECT_EQ(name.get(compute, ""), 3.0) << name.name;
  }
}

TEST(ParameterNamesTest, EfficiencyNamesAreTheFieldsTheModelReads) {
  for (auto type : {topology::LinkType::kNvLink, topology::LinkType::kInfiniBand, topology::LinkType::kRoce,
                    topology::LinkType::kPcie, topology::LinkType::kIci}) {
    for (const char* gpu : {"a100-sxm-40gb", "b200", "h100-sxm", "inline"}) {
      auto parameters = *defaultCommunicationParameters(kShipped);
      const auto* entry = findCommunicationParameter(linkEfficiencyParameter(type));
      ASSERT_NE(entry, nullptr);
      entry->set(parameters, gpu, 0.123);
      EXPECT_DOUBLE_EQ(parameters.linkEfficiency(type, gpu), 0.123) << entry->name << " " << gpu;
    }
  }
}

}  // namespace
}  // namespace trainsim::perf
