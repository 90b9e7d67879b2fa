// Helpers for topology tests: clusters from inline YAML and from the shipped presets.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "topology/cluster.h"
#include "topology/cluster_loader.h"

namespace trainsim::topology::testing {

inline ConfigPaths shippedConfigs() { return ConfigPaths{TRAINSIM_CONFIG_DIR_FOR_TESTS}; }

// A small inline GPU so that tests do not depend on catalog figures.
inline const char* kTestGpu = R"(
  name: test-gpu
  peak_tflops: {bf16: 100}
  memory_GiB: 80
  memory_bandwidth_GBps: 2000
  intra_node_bandwidth_GBps: 450
  default_fabric: nvswitch
  pcie_bandwidth_GBps: 64
)";

inline Expected<ClusterSpec> specFromYaml(const std::string& yaml, const std::string& name = "test.yaml") {
  return catchInputErrors([&] {
    ConfigNode root = parseConfigText(yaml, name);
    return valueOrThrow(loadClusterNode(root, shippedConfigs()));
  });
}

inline Cluster clusterFromYaml(const std::string& yaml) {
  auto spec = specFromYaml(yaml);
  if (!spec.ok()) ADD_FAILURE() << spec.error().toString();
  auto cluster = Cluster::build(spec.value());
  if (!cluster.ok()) ADD_FAILURE() << cluster.error().toString();
  return std::move(cluster).value();
}

inline Cluster presetCluster(const std::string& name, const std::vector<Override>& overrides = {}) {
  auto spec = loadClusterFile(name, shippedConfigs(), overrides);
  if (!spec.ok()) ADD_FAILURE() << spec.error().toString();
  auto cluster = Cluster::build(spec.value());
  if (!cluster.ok()) ADD_FAILURE() << cluster.error().toString();
  return std::move(cluster).value();
}

// The error message of a cluster that must fail to load.
inline std::string loadError(const std::string& yaml) {
  auto spec = specFromYaml(yaml);
  if (spec.ok()) {
    auto cluster = Cluster::build(spec.value());
    if (cluster.ok()) return "(loaded without error)";
    return cluster.error().toString();
  }
  EXPECT_EQ(spec.error().code, ExitCode::kInvalidInput);
  return spec.error().toString();
}

}  // namespace trainsim::topology::testing
