#include "topology/cluster_loader.h"

#include <gtest/gtest.h>

#include <optional>

#include "test_clusters.h"

namespace trainsim::topology {
namespace {

using testing::kTestGpu;
using testing::loadError;
using testing::shippedConfigs;
using testing::specFromYaml;

std::string withGpu(const std::string& rest) { return std::string("gpu:") + kTestGpu + rest; }

TEST(ClusterLoaderTest, AppliesDocumentedDefaults) {
  auto spec = specFromYaml(withGpu("nodes: 2\ngpus_per_node: 8\ninter_node: {nic_bandwidth_Gbps: 400}\n"));
  ASSERT_TRUE(spec.ok()) << spec.error().toString();
  EXPECT_EQ(spec->intra_node.fabric, IntraNodeFabric::kNvSwitch);  // from the GPU's default_fabric
  EXPECT_DOUBLE_EQ(spec->intra_node.bandwidth_GBps, 450);
  EXPECT_DOUBLE_EQ(spec->intra_node.latency_us, 0.7);
  EXPECT_DOUBLE_EQ(spec->pcie.bandwidth_GBps, 64);
  ASSERT_TRUE(spec->inter_node.has_value());
  EXPECT_EQ(spec->inter_node->nics_per_node, 8);
  EXPECT_EQ(spec->inter_node->protocol, NetworkProtocol::kInfiniBand);
  EXPECT_EQ(spec->inter_node->topology, NetworkTopology::kFatTree);
  EXPECT_DOUBLE_EQ(spec->inter_node->latency_us, 2.0);
  EXPECT_EQ(spec->inter_node->switch_radix, 64);
  EXPECT_EQ(spec->inter_node->oversubscription, std::vector<double>{1.0});
}

TEST(ClusterLoaderTest, ReadsAMeasuredNetworkEfficiencyAndRefusesAFractionOutsideZeroToOne) {
  auto unset = specFromYaml(withGpu("nodes: 2\ngpus_per_node: 8\ninter_node: {nic_bandwidth_Gbps: 400}\n"));
  ASSERT_TRUE(unset.ok()) << unset.error().toString();
  EXPECT_FALSE(unset->inter_node->efficiency.has_value());
  auto measured =
      specFromYaml(withGpu("nodes: 2\ngpus_per_node: 8\ninter_node: {nic_bandwidth_Gbps: 400, efficiency: 0.5}\n"));
  ASSERT_TRUE(measured.ok()) << measured.error().toString();
  EXPECT_EQ(measured->inter_node->efficiency, 0.5);
  for (const char* bad : {"1.5", "0", "-0.2"}) {
    auto refused = specFromYaml(withGpu(
        "nodes: 2\ngpus_per_node: 8\ninter_node: {nic_bandwidth_Gbps: 400, efficiency: " + std::string(bad) + "}\n"));
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_NE(refused.error().toString().find("inter_node.efficiency"), std::string::npos)
        << refused.error().toString();
  }
}

TEST(ClusterLoaderTest, ReadsTheNcclProtocolsAndRefusesUnknownOrRepeatedOnes) {
  const std::string network = "nodes: 2\ngpus_per_node: 8\ninter_node: {nic_bandwidth_Gbps: 100, nccl_protocols: ";
  auto unset = specFromYaml(withGpu("nodes: 2\ngpus_per_node: 8\ninter_node: {nic_bandwidth_Gbps: 100}\n"));
  ASSERT_TRUE(unset.ok()) << unset.error().toString();
  EXPECT_TRUE(unset->inter_node->nccl_protocols.empty());
  auto simple = specFromYaml(withGpu(network + "[Simple]}\n"));
  ASSERT_TRUE(simple.ok()) << simple.error().toString();
  EXPECT_EQ(simple->inter_node->nccl_protocols, std::vector<std::string>{"Simple"});
  // A torus pod runs no NCCL over its network.
  auto torus = specFromYaml(withGpu(
      "nodes: 16\ngpus_per_node: 4\ninter_node: {topology: torus, torus_dims: [4, 4, 4], nccl_protocols: [Simple]}\n"));
  ASSERT_FALSE(torus.ok());
  EXPECT_NE(torus.error().toString().find("inter_node.nccl_protocols: not used by a torus"), std::string::npos)
      << torus.error().toString();
  for (const char* bad : {"[Fast]", "[]", "[LL, LL]"}) {
    auto refused = specFromYaml(withGpu(network + std::string(bad) + "}\n"));
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_NE(refused.error().toString().find("inter_node.nccl_protocols"), std::string::npos)
        << refused.error().toString();
  }
}

// Regression test for issue 40: a --set that broke the GPU's fabric-and-bandwidth check was
// blamed on the line of the GPU mapping in the file.
TEST(ClusterLoaderTest, ACheckOfTwoKeysBlamesTheValueThatBrokeIt) {
  const std::string expected =
      "gpu.intra_node_bandwidth_GBps: expected a positive number (default_fabric nvswitch needs the GPU's scale-up "
      "bandwidth, per GPU, per direction), found \"0\"";
  ConfigNode root = parseConfigText(withGpu("nodes: 1\ngpus_per_node: 8\n"), "test.yaml");
  applyOverride(root, parseOverride("gpu.intra_node_bandwidth_GBps=0"));
  const auto set = loadClusterNode(root, shippedConfigs());
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.error().toString(), "--set gpu.intra_node_bandwidth_GBps=0: " + expected);
  // Given as 0 in the file: at its own line, not at the mapping's.
  std::string zero = withGpu("nodes: 1\ngpus_per_node: 8\n");
  zero.replace(zero.find("450"), 3, "0");
  const auto file = specFromYaml(zero);
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.error().toString(), "test.yaml:6:30: " + expected);
}

TEST(ClusterLoaderTest, EveryShippedPresetLoadsAndBuilds) {
  for (const char* name : {"dgx-a100", "dgx-h100", "dgx-h200", "aws-p4d", "aws-p5", "azure-nd-a100-v4", "gcp-a3",
                           "l40s-pcie-roce", "rtx4090-workstation", "tpu-v4-pod-slice", "mi300x-node"}) {
    auto spec = loadClusterFile(name, shippedConfigs());
    ASSERT_TRUE(spec.ok()) << name << ": " << spec.error().toString();
    auto cluster = Cluster::build(spec.value());
    ASSERT_TRUE(cluster.ok()) << name << ": " << cluster.error().toString();
    EXPECT_EQ(cluster->acceleratorCount(), spec->totalGpus()) << name;
  }
}

TEST(ClusterLoaderTest, OverridesApplyBeforeValidation) {
  auto spec = loadClusterFile("dgx-h100", shippedConfigs(),
                              {parseOverride("nodes=4"), parseOverride("inter_node.oversubscription=2")});
  ASSERT_TRUE(spec.ok()) << spec.error().toString();
  EXPECT_EQ(spec->nodes, 4);
  EXPECT_EQ(spec->inter_node->oversubscription, std::vector<double>{2.0});
  auto bad = loadClusterFile("dgx-h100", shippedConfigs(), {parseOverride("inter_node.nic_bandwidth_Gbps=fast")});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().toString(),
            "--set inter_node.nic_bandwidth_Gbps=fast: inter_node.nic_bandwidth_Gbps: expected a positive number, "
            "found \"fast\"");
}

TEST(ClusterLoaderTest, UnknownPresetNamesTheDirectory) {
  auto spec = loadClusterFile("dgx-z100", ConfigPaths{"/nowhere"});
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.error().toString(),
            "dgx-z100: unknown cluster preset (no /nowhere/clusters/dgx-z100.yaml); give a preset name or a file path");
}

// A name the file system refuses (longer than NAME_MAX) is an unknown preset, not a crash
// (found by fuzz_experiment).
TEST(ClusterLoaderTest, ANameTooLongForAFileIsAnUnknownPreset) {
  const std::string name(300, 'y');
  auto spec = loadClusterFile(name, ConfigPaths{"/nowhere"});
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.error().code, ExitCode::kInvalidInput);
  const ConfigNode experiment = parseConfigText("cluster: " + name + "\n", "test.yaml");
  auto nested = loadClusterNode(experiment.child("cluster"), shippedConfigs(), {});
  ASSERT_FALSE(nested.ok());
  EXPECT_NE(nested.error().toString().find("test.yaml:1:10: cluster: unknown cluster preset"), std::string::npos)
      << nested.error().toString();
}

TEST(ClusterLoaderTest, MalformedClustersGiveExactMessages) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {withGpu("nodes: 1\ngpus_per_node: 8\nnodez: 3\n"), "test.yaml:11:1: nodez: unknown key (did you mean 'nodes'?)"},
      {withGpu("nodes: 0\ngpus_per_node: 8\n"), "test.yaml:9:8: nodes: expected a positive integer, found \"0\""},
      {withGpu("nodes: 1.5\ngpus_per_node: 8\n"), "test.yaml:9:8: nodes: expected a positive integer, found \"1.5\""},
      {withGpu("nodes: 1\n"), "test.yaml:1:1: gpus_per_node: missing required key"},
      {withGpu("nodes: 2\ngpus_per_node: 8\n"),
       "test.yaml:1:1: inter_node: missing required key (a cluster with nodes > 1 needs an inter_node section)"},
      {withGpu("nodes: 2\ngpus_per_node: 8\ninter_node:\n  nic_bandwidth_Gbps: fast\n"),
       "test.yaml:12:23: inter_node.nic_bandwidth_Gbps: expected a positive number, found \"fast\""},
      {withGpu("nodes: 2\ngpus_per_node: 8\ninter_node:\n  nic_bandwidth_Gbps: 400\n  topology: dragonfly\n"),
       "test.yaml:13:13: inter_node.topology: expected fat_tree, rail_optimized or torus, found \"dragonfly\""},
      {withGpu("nodes: 2\ngpus_per_node: 8\ninter_node:\n  nic_bandwidth_Gbps: 400\n  oversubscription: 0.5\n"),
       "test.yaml:13:21: inter_node.oversubscription: expected a ratio >= 1 (down:up bandwidth of a tier), found "
       "\"0.5\""},
      {withGpu("nodes: 1\ngpus_per_node: 8\nintra_node: {fabric: pcie, nvls: true}\n"),
       "test.yaml:11:34: intra_node.nvls: NVLink SHARP needs an NVSwitch fabric (intra_node.fabric: nvswitch)"},
      {withGpu("nodes: 1\ngpus_per_node: 8\npcie: {gpus_per_switch: 3}\n"),
       "test.yaml:11:25: pcie.gpus_per_switch: expected a divisor of gpus_per_node (8), found \"3\""},
      {withGpu("nodes: 16\ngpus_per_node: 4\ninter_node: {topology: torus, torus_dims: [4, 4, 2]}\n"),
       "test.yaml:11:43: inter_node.torus_dims: the torus has 32 chips but the cluster has nodes x gpus_per_node = "
       "64; make the product of torus_dims equal to that"},
      {"gpu: h100-sxn\nnodes: 1\ngpus_per_node: 8\n",
       "test.yaml:1:6: gpu: unknown GPU \"h100-sxn\" (did you mean 'h100-sxm'?); see configs/gpus.yaml or give an "
       "inline mapping with peak_tflops, memory_GiB, memory_bandwidth_GBps"},
      {withGpu("nodes: 1\ngpus_per_node: 8\nprice_per_gpu_hour: -2\n"),
       "test.yaml:11:21: price_per_gpu_hour: expected a number >= 0, found \"-2\""},
      {"gpu:\n  peak_tflops: {bf16: fast}\n  memory_GiB: 80\n  memory_bandwidth_GBps: 2000\nnodes: 1\ngpus_per_node: "
       "1\n",
       "test.yaml:2:23: gpu.peak_tflops.bf16: expected a positive number, found \"fast\""},
      {"gpu: h100-sxm\ndevices:\n  - {name: a, kind: gpu}\n  - {name: b, kind: gpu}\nlinks:\n  - {from: a, to: c, "
       "type: nvlink, bandwidth_GBps: 100}\n",
       "test.yaml:6:19: links[0].to: unknown device \"c\"; declare it under devices"},
      {"gpu: h100-sxm\ndevices:\n  - {name: a, kind: gpu}\n  - {name: b, kind: gpu}\nlinks: []\n",
       "test.yaml: links: device b is not connected to a; add links joining them"},
      {"nodes: [1\n", "test.yaml:2:1: invalid YAML: end of sequence flow not found"},
  };
  for (const auto& [yaml, expected] : cases) EXPECT_EQ(loadError(yaml), expected) << yaml;
}

TEST(ClusterLoaderTest, ExplicitGraphBuildsWhatItSays) {
  auto spec = specFromYaml(R"(
name: two-boxes
gpu: h100-sxm
devices:
  - {name: gpu, kind: gpu, count: 2, node: 0}
  - {name: sw, kind: pcie_switch}
links:
  - {from: gpu0, to: sw, type: pcie, bandwidth_GBps: 32}
  - {from: gpu1, to: sw, type: pcie, bandwidth_Gbps: 256, latency_us: 0.25}
)");
  ASSERT_TRUE(spec.ok()) << spec.error().toString();
  auto cluster = Cluster::build(spec.value());
  ASSERT_TRUE(cluster.ok());
  EXPECT_EQ(cluster->acceleratorCount(), 2);
  EXPECT_EQ(cluster->links().size(), 4u);
  EXPECT_DOUBLE_EQ(cluster->link(2).bandwidth_Bps, 32e9);
  EXPECT_EQ(cluster->link(2).latency_ps, 250'000);
}

}  // namespace
}  // namespace trainsim::topology

namespace trainsim::topology {
namespace {

TEST(ClusterLoaderTest, OddGpuCountsDefaultToOneGpuPerPcieSwitch) {
  auto spec = testing::specFromYaml("gpu: h100-sxm\nnodes: 1\ngpus_per_node: 3\n");
  ASSERT_TRUE(spec.ok()) << spec.error().toString();
  EXPECT_EQ(spec->pcie.gpus_per_switch, 1);
  EXPECT_EQ(spec->pcie.sockets, 1);
  auto six = testing::specFromYaml("gpu: h100-sxm\nnodes: 1\ngpus_per_node: 6\npcie: {gpus_per_switch: 3}\n");
  ASSERT_TRUE(six.ok()) << six.error().toString();
  EXPECT_EQ(six->pcie.sockets, 2);
  EXPECT_TRUE(Cluster::build(spec.value()).ok());
}

// --- Bounds: values the simulator cannot represent are refused where they are written ------

// The error a preset gets from one --set, after checking it is an input error (exit code 2).
std::string presetError(const std::string& set, const std::string& preset = "dgx-h100") {
  auto spec = loadClusterFile(preset, testing::shippedConfigs(), {parseOverride(set)});
  if (spec.ok()) return "(loaded without error)";
  EXPECT_EQ(spec.error().code, ExitCode::kInvalidInput);
  return spec.error().toString();
}

TEST(ClusterLoaderBounds, LatenciesAndBandwidthsFromTheCommandLine) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"inter_node.latency_us=1e12",
       "--set inter_node.latency_us=1e12: inter_node.latency_us: expected a number between 0 and 100000, found "
       "\"1e12\""},
      {"inter_node.latency_us=1e300",
       "--set inter_node.latency_us=1e300: inter_node.latency_us: expected a number between 0 and 100000, found "
       "\"1e300\""},
      {"intra_node.latency_us=2e5",
       "--set intra_node.latency_us=2e5: intra_node.latency_us: expected a number between 0 and 100000, found "
       "\"2e5\""},
      {"pcie.latency_us=1e9",
       "--set pcie.latency_us=1e9: pcie.latency_us: expected a number between 0 and 100000, found \"1e9\""},
      {"inter_node.nic_bandwidth_Gbps=1e-300",
       "--set inter_node.nic_bandwidth_Gbps=1e-300: inter_node.nic_bandwidth_Gbps: expected a number between 0.01 "
       "and 10000000, found \"1e-300\""},
      {"inter_node.nic_bandwidth_Gbps=1e300",
       "--set inter_node.nic_bandwidth_Gbps=1e300: inter_node.nic_bandwidth_Gbps: expected a number between 0.01 "
       "and 10000000, found \"1e300\""},
      {"intra_node.bandwidth_GBps=1e-300",
       "--set intra_node.bandwidth_GBps=1e-300: intra_node.bandwidth_GBps: expected a number between 0.001 and "
       "1000000, found \"1e-300\""},
      {"intra_node.bandwidth_GBps=1e300",
       "--set intra_node.bandwidth_GBps=1e300: intra_node.bandwidth_GBps: expected a number between 0.001 and "
       "1000000, found \"1e300\""},
      {"pcie.bandwidth_GBps=1e-300",
       "--set pcie.bandwidth_GBps=1e-300: pcie.bandwidth_GBps: expected a number between 0.001 and 1000000, found "
       "\"1e-300\""},
      {"pcie.socket_interconnect_GBps=1e-300",
       "--set pcie.socket_interconnect_GBps=1e-300: pcie.socket_interconnect_GBps: expected a number between 0.001 "
       "and 1000000, found \"1e-300\""},
      {"inter_node.oversubscription=1e300",
       "--set inter_node.oversubscription=1e300: inter_node.oversubscription: expected a number between 1 and 1000, "
       "found \"1e300\""},
      {"inter_node.oversubscription=[1, 5000]",
       "--set inter_node.oversubscription=[1, 5000]: inter_node.oversubscription[1]: expected a number between 1 "
       "and 1000, found \"5000\""},
      {"price_per_gpu_hour=1e300",
       "--set price_per_gpu_hour=1e300: price_per_gpu_hour: expected a number between 0 and 1000000, found "
       "\"1e300\""},
  };
  for (const auto& [set, expected] : cases) EXPECT_EQ(presetError(set), expected) << set;
}

// pcie.host_cpu: the vendors NCCL's tuner tells apart (intel, amd) and the others; the presets
// say theirs where their source does (DGX A100: AMD EPYC 7742; DGX H100: Intel Xeon 8480C).
TEST(ClusterLoaderTest, HostCpuIsOneOfTheVendorsAndUnknownWhereNotGiven) {
  const auto vendor = [](const std::string& preset, const std::vector<Override>& overrides = {}) {
    auto spec = loadClusterFile(preset, testing::shippedConfigs(), overrides);
    EXPECT_TRUE(spec.ok()) << spec.error().toString();
    return spec.ok() ? std::string(hostCpuName(spec->pcie.host_cpu)) : std::string();
  };
  EXPECT_EQ(vendor("dgx-a100"), "amd");
  EXPECT_EQ(vendor("dgx-h100"), "intel");
  EXPECT_EQ(vendor("dgx-gb200"), "arm");
  EXPECT_EQ(vendor("gcp-a3"), "unknown");
  EXPECT_EQ(vendor("dgx-h100", {parseOverride("pcie.host_cpu=amd")}), "amd");
  EXPECT_EQ(presetError("pcie.host_cpu=via"),
            "--set pcie.host_cpu=via: pcie.host_cpu: expected intel, amd, arm or other, found \"via\"");
}

TEST(ClusterLoaderBounds, CountsThatWouldExhaustMemory) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"nodes=1250000", "--set nodes=1250000: nodes: expected an integer between 1 and 1048576, found \"1250000\""},
      {"nodes=131073",
       "--set nodes=131073: nodes: nodes x gpus_per_node = 131073 x 8 = 1048584 GPUs; at most 1048576 are "
       "supported"},
      {"gpus_per_node=4294967296",
       "--set gpus_per_node=4294967296: gpus_per_node: expected an integer between 1 and 1048576, found "
       "\"4294967296\""},
      {"pcie.gpus_per_switch=4294967296",
       "--set pcie.gpus_per_switch=4294967296: pcie.gpus_per_switch: expected an integer between 1 and 8, found "
       "\"4294967296\""},
      {"pcie.sockets=1e15",
       "--set pcie.sockets=1e15: pcie.sockets: expected an integer between 1 and 4, found \"1e15\""},
      {"inter_node.switch_radix=1e15",
       "--set inter_node.switch_radix=1e15: inter_node.switch_radix: expected an integer between 4 and 4096, found "
       "\"1e15\""},
      {"inter_node.switch_radix=2",
       "--set inter_node.switch_radix=2: inter_node.switch_radix: expected an integer between 4 and 4096, found "
       "\"2\""},
      {"inter_node.nics_per_node=1e15",
       "--set inter_node.nics_per_node=1e15: inter_node.nics_per_node: expected an integer between 1 and 1048576, "
       "found \"1e15\""},
  };
  for (const auto& [set, expected] : cases) EXPECT_EQ(presetError(set), expected) << set;
  EXPECT_EQ(presetError("inter_node.nics_per_node=1048576"),
            "--set inter_node.nics_per_node=1048576: inter_node.nics_per_node: nodes x nics_per_node = 32 x 1048576 "
            "NICs; at most 1048576 are supported");
  // The limit itself is accepted.
  EXPECT_EQ(presetError("nodes=131072"), "(loaded without error)");
}

TEST(ClusterLoaderBounds, TorusDimensions) {
  EXPECT_EQ(loadError(withGpu("nodes: 16\ngpus_per_node: 4\ninter_node: {topology: torus, torus_dims: [4294967296, "
                              "4294967296, 4]}\n")),
            "test.yaml:11:44: inter_node.torus_dims[0]: expected an integer between 1 and 1048576, found "
            "\"4294967296\"");
}

TEST(ClusterLoaderBounds, InlineGpuFigures) {
  const auto gpu = [](const std::string& peaks, const std::string& rest = "") {
    return "gpu:\n  peak_tflops: {bf16: " + peaks + "}\n  memory_GiB: 80\n  memory_bandwidth_GBps: 2000\n" + rest +
           "nodes: 1\ngpus_per_node: 1\n";
  };
  EXPECT_EQ(loadError(gpu("1e-300")),
            "test.yaml:2:23: gpu.peak_tflops.bf16: expected a number between 0.001 and 1000000, found \"1e-300\"");
  EXPECT_EQ(loadError(gpu("1e300")),
            "test.yaml:2:23: gpu.peak_tflops.bf16: expected a number between 0.001 and 1000000, found \"1e300\"");
  EXPECT_EQ(loadError(gpu("100", "  pcie_bandwidth_GBps: 1e-300\n")),
            "test.yaml:5:24: gpu.pcie_bandwidth_GBps: expected a number between 0.001 and 1000000, found \"1e-300\"");
  EXPECT_EQ(loadError(gpu("100", "  intra_node_bandwidth_GBps: 1e-300\n")),
            "test.yaml:5:30: gpu.intra_node_bandwidth_GBps: expected 0 (no NVLink or similar) or a number between "
            "0.001 and 1000000, found \"1e-300\"");
  EXPECT_EQ(loadError(gpu("100", "  compute_units: 1e12\n")),
            "test.yaml:5:18: gpu.compute_units: expected an integer between 1 and 1000000, found \"1e12\"");
  EXPECT_EQ(loadError("gpu:\n  peak_tflops: {bf16: 100}\n  memory_GiB: 80\n  memory_bandwidth_GBps: 1e-300\nnodes: "
                      "1\ngpus_per_node: 1\n"),
            "test.yaml:4:26: gpu.memory_bandwidth_GBps: expected a number between 0.001 and 1000000, found "
            "\"1e-300\"");
  EXPECT_EQ(loadError("gpu:\n  peak_tflops: {bf16: 100}\n  memory_GiB: 1e300\n  memory_bandwidth_GBps: 2000\nnodes: "
                      "1\ngpus_per_node: 1\n"),
            "test.yaml:3:15: gpu.memory_GiB: expected a number between 0.001 and 1000000, found \"1e300\"");
  // A GPU without NVLink still says so with 0.
  EXPECT_EQ(loadError(gpu("100", "  intra_node_bandwidth_GBps: 0\n")), "(loaded without error)");
  // FP8 GEMM layouts only mean something on a GPU that runs FP8.
  EXPECT_EQ(loadError(gpu("100", "  fp8_gemm_any_layout: true\n")),
            "test.yaml:5:24: gpu.fp8_gemm_any_layout: needs an fp8 rate in peak_tflops");
  EXPECT_EQ(loadError(gpu("100, fp8: 200", "  fp8_gemm_any_layout: true\n")), "(loaded without error)");
  // A compute capability is a CUDA major.minor.
  EXPECT_EQ(loadError(gpu("100", "  compute_capability: 9.0\n")), "(loaded without error)");
  EXPECT_EQ(loadError(gpu("100", "  compute_capability: 0.5\n")),
            "test.yaml:5:23: gpu.compute_capability: expected a number between 1 and 12.9, found \"0.5\"");
}

// A cluster runs its GPUs at their tdp_W unless gpu_power_limit_W says otherwise; a catalog part
// may hold its rates at another power (rates_power_W), which needs its own limit (tdp_W).
TEST(ClusterLoaderTest, ReadsAGpuPowerLimitAndThePowerItsRatesHoldAt) {
  auto spec = specFromYaml("gpu: h100-sxm\ngpu_power_limit_W: 450\nnodes: 1\ngpus_per_node: 8\n");
  ASSERT_TRUE(spec.ok()) << spec.error().toString();
  EXPECT_DOUBLE_EQ(spec->gpu.power_limit_W, 450.0);
  EXPECT_DOUBLE_EQ(spec->gpu.powerLimitRatio(), 450.0 / 700.0);
  auto shipped = specFromYaml("gpu: h100-sxm-96gb\nnodes: 1\ngpus_per_node: 8\n");
  ASSERT_TRUE(shipped.ok()) << shipped.error().toString();
  EXPECT_DOUBLE_EQ(shipped->gpu.rates_power_W, 700.0);
  EXPECT_DOUBLE_EQ(shipped->gpu.powerLimitRatio(), 500.0 / 700.0);
  const auto inline_gpu = [](const std::string& rest) {
    return "gpu:\n  peak_tflops: {bf16: 100}\n  memory_GiB: 80\n  memory_bandwidth_GBps: 2000\n" + rest +
           "nodes: 1\ngpus_per_node: 1\n";
  };
  EXPECT_EQ(loadError(inline_gpu("gpu_power_limit_W: 300\n")),
            "test.yaml:5:20: gpu_power_limit_W: gpu_power_limit_W needs the GPU's tdp_W (the power its rates hold "
            "at); inline has none");
  EXPECT_EQ(loadError(inline_gpu("  rates_power_W: 700\n")),
            "test.yaml:5:18: gpu.rates_power_W: rates_power_W needs tdp_W, the power limit the part runs at");
  EXPECT_EQ(loadError(inline_gpu("  tdp_W: 500\n  rates_power_W: 700\n")), "(loaded without error)");
  EXPECT_EQ(loadError(withGpu("gpu_power_limit_W: 0\nnodes: 1\ngpus_per_node: 8\n")),
            "test.yaml:9:20: gpu_power_limit_W: expected a positive number, found \"0\"");
}

TEST(ClusterLoaderTest, BlackwellFp8GemmsTakeAnyLayoutHopperOnlyTn) {
  for (const auto& [preset, any_layout] :
       std::vector<std::pair<std::string, bool>>{{"dgx-h100", false}, {"dgx-b200", true}, {"dgx-gb200", true}}) {
    auto spec = loadClusterFile(preset, shippedConfigs());
    ASSERT_TRUE(spec.ok()) << preset << ": " << spec.error().toString();
    EXPECT_EQ(spec->gpu.fp8_gemm_any_layout, any_layout) << preset;
  }
}

TEST(ClusterLoaderTest, CatalogGpusCarryTheirComputeCapability) {
  for (const auto& [preset, capability] : std::vector<std::pair<std::string, std::optional<double>>>{
           {"dgx-a100", 8.0}, {"dgx-h100", 9.0}, {"dgx-b200", 10.0}, {"mi300x-node", std::nullopt}}) {
    auto spec = loadClusterFile(preset, shippedConfigs());
    ASSERT_TRUE(spec.ok()) << preset << ": " << spec.error().toString();
    EXPECT_EQ(spec->gpu.compute_capability, capability) << preset;
  }
}

TEST(ClusterLoaderBounds, ExplicitGraphs) {
  const std::string links = "links:\n  - {from: gpu0, to: sw, type: pcie, bandwidth_GBps: 32}\n";
  EXPECT_EQ(loadError("gpu: h100-sxm\ndevices:\n  - {name: gpu, kind: gpu, count: 1e9}\n  - {name: sw, kind: "
                      "pcie_switch}\n" +
                      links),
            "test.yaml:3:35: devices[0].count: expected an integer between 1 and 1048576, found \"1e9\"");
  EXPECT_EQ(loadError("gpu: h100-sxm\ndevices:\n  - {name: gpu, kind: gpu, count: 2, node: 1e15}\n  - {name: sw, kind: "
                      "pcie_switch}\n" +
                      links),
            "test.yaml:3:44: devices[0].node: expected an integer between 0 and 1048575, found \"1e15\"");
  EXPECT_EQ(loadError("gpu: h100-sxm\ndevices:\n  - {name: gpu, kind: gpu, count: 2}\n  - {name: sw, kind: "
                      "pcie_switch}\nlinks:\n  - {from: gpu0, to: sw, type: pcie, bandwidth_Gbps: 1e-300}\n"),
            "test.yaml:6:54: links[0].bandwidth_Gbps: expected a number between 0.01 and 10000000, found \"1e-300\"");
  EXPECT_EQ(loadError("gpu: h100-sxm\ndevices:\n  - {name: gpu, kind: gpu, count: 2}\n  - {name: sw, kind: "
                      "pcie_switch}\nlinks:\n  - {from: gpu0, to: sw, type: pcie, bandwidth_GBps: 32, latency_us: "
                      "1e12}\n"),
            "test.yaml:6:70: links[0].latency_us: expected a number between 0 and 100000, found \"1e12\"");
  // GPU places: nodes up to the highest index, each as wide as the widest node.
  EXPECT_EQ(loadError("gpu: h100-sxm\ndevices:\n  - {name: a, kind: gpu, count: 2, node: 0}\n  - {name: b, kind: gpu, "
                      "node: 1048575}\n  - {name: sw, kind: pcie_switch}\nlinks: []\n"),
            "test.yaml:3:3: devices: nodes 0 to 1048575 with up to 2 GPUs each make 2097152 GPU places; at most "
            "1048576 are supported");
}

// Fat-tree sizing is checked when the file is read, at switch_radix, and agrees with the
// builder: the largest network of 6 tiers loads and builds, one node more is refused.
TEST(ClusterLoaderBounds, FatTreeTooDeepIsReportedAtSwitchRadix) {
  const auto cluster = [](int nodes, const std::string& topology) {
    return withGpu("nodes: " + std::to_string(nodes) +
                   "\ngpus_per_node: 8\ninter_node:\n  nic_bandwidth_Gbps: 400\n  topology: " + topology +
                   "\n  switch_radix: 8\n");
  };
  for (const std::string topology : {"fat_tree", "rail_optimized"}) {
    // Radix 8 at 1:1: leaves of 4 NICs, 4 blocks per tier up to tier 5, 8 under the top: 8192 NICs.
    auto fits = specFromYaml(cluster(1024, topology));
    ASSERT_TRUE(fits.ok()) << fits.error().toString();
    auto built = Cluster::build(fits.value());
    ASSERT_TRUE(built.ok()) << built.error().toString();
    auto too_deep = specFromYaml(cluster(1025, topology));
    ASSERT_FALSE(too_deep.ok()) << topology;
    EXPECT_EQ(too_deep.error().toString(),
              "test.yaml:14:17: inter_node.switch_radix: a fat tree of more than 6 tiers would be needed for 8200 NICs "
              "with switch_radix 8; raise switch_radix");
  }
  // Without switch_radix (the default, 64), at the inter_node section: here 64 NICs per GPU
  // fold into one logical NIC that takes all of a switch's ports.
  auto folded =
      specFromYaml(withGpu("nodes: 2\ngpus_per_node: 8\ninter_node: {nic_bandwidth_Gbps: 400, "
                           "nics_per_node: 512}\n"));
  ASSERT_FALSE(folded.ok());
  EXPECT_EQ(folded.error().toString(),
            "test.yaml:11:13: inter_node.switch_radix: a fat tree of more than 6 tiers would be needed for 16 NICs "
            "with switch_radix 64; raise switch_radix");
}

}  // namespace
}  // namespace trainsim::topology
