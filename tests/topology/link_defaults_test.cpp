// defaults::linkLatencyPs: the latency the builders give a link when the cluster file sets
// none. The collective model charges steps the difference from it, so it must agree with
// every builder exactly (otherwise a cluster with default latencies would pay a difference).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "test_clusters.h"
#include "topology/link_defaults.h"

namespace trainsim::topology {
namespace {

using testing::clusterFromYaml;
using testing::presetCluster;

int64_t linksOffDefault(const Cluster& cluster) {
  int64_t count = 0;
  for (const Link& link : cluster.links()) {
    if (link.latency_ps != defaults::linkLatencyPs(cluster.spec(), link)) ++count;
  }
  return count;
}

TEST(LinkDefaultsTest, EveryShippedClusterHasItsLinksAtTheDefaults) {
  const std::filesystem::path dir = std::filesystem::path(TRAINSIM_CONFIG_DIR_FOR_TESTS) / "clusters";
  int presets = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") continue;
    const std::string name = entry.path().stem().string();
    // Two nodes show every kind of link of a preset without building a whole data centre;
    // a torus slice keeps its size (its dimensions fix the chip count).
    auto spec = loadClusterFile(name, testing::shippedConfigs());
    ASSERT_TRUE(spec.ok()) << spec.error().toString();
    const bool torus = spec->inter_node && spec->inter_node->topology == NetworkTopology::kTorus;
    const Cluster cluster =
        torus || spec->nodes <= 2 ? presetCluster(name) : presetCluster(name, {parseOverride("nodes=2")});
    EXPECT_EQ(linksOffDefault(cluster), 0) << name;
    ++presets;
  }
  EXPECT_GT(presets, 5);
}

TEST(LinkDefaultsTest, ExplicitGraphLinksWithoutLatencyAreAtTheDefaults) {
  const Cluster cluster = clusterFromYaml(R"(
gpu: h100-sxm
devices:
  - {name: gpu, kind: gpu, count: 2}
  - {name: sw, kind: nvswitch}
  - {name: pcie, kind: pcie_switch}
  - {name: cpu, kind: cpu, count: 2}
  - {name: nic, kind: nic}
  - {name: leaf, kind: leaf_switch}
links:
  - {from: gpu0, to: sw, type: nvlink, bandwidth_GBps: 450}
  - {from: gpu1, to: sw, type: nvlink, bandwidth_GBps: 450}
  - {from: gpu0, to: pcie, type: pcie, bandwidth_GBps: 64}
  - {from: nic, to: pcie, type: pcie, bandwidth_GBps: 64}
  - {from: pcie, to: cpu0, type: pcie, bandwidth_GBps: 64}
  - {from: cpu0, to: cpu1, type: socket_interconnect, bandwidth_GBps: 64}
  - {from: nic, to: leaf, type: roce, bandwidth_Gbps: 400}
  - {from: gpu1, to: leaf, type: ethernet, bandwidth_Gbps: 100}
)");
  EXPECT_EQ(linksOffDefault(cluster), 0);
}

TEST(LinkDefaultsTest, AGivenLatencyIsOffTheDefault) {
  const Cluster slow = presetCluster("dgx-h100", {parseOverride("nodes=1"), parseOverride("intra_node.latency_us=2")});
  // The 8 GPU <-> NVSwitch pairs, both directions.
  EXPECT_EQ(linksOffDefault(slow), 16);
  const Cluster graph = clusterFromYaml(R"(
gpu: h100-sxm
devices:
  - {name: gpu, kind: gpu, count: 2}
links:
  - {from: gpu0, to: gpu1, type: nvlink, bandwidth_GBps: 450, latency_us: 0.5}
)");
  EXPECT_EQ(linksOffDefault(graph), 2);
}

}  // namespace
}  // namespace trainsim::topology
