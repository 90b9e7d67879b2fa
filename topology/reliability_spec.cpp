#include "topology/reliability_spec.h"

#include <filesystem>
#include <map>
#include <mutex>

#include "base/error.h"
#include "topology/cluster_loader.h"

namespace trainsim::topology {
namespace {

// Bounds on the section's numbers: wide enough for any fleet or storage system, narrow
// enough to catch a unit typed wrong.
// 10^6 interruptions per 1,000 device-days: one every 1.4 minutes per device.
constexpr double kMaxFailuresPer1000Days = 1e6;
// A year, for any one restart step or checkpoint latency.
constexpr double kMaxStepSeconds = 365.0 * 86400.0;
// A node repair of up to ten years.
constexpr double kMaxRepairHours = 10.0 * 365.0 * 24.0;
// A straggler at most 1,000 times slower.
constexpr double kMaxSlowdown = 1000.0;

// Reads `key` of `section` into `value` when given; when `required` (the defaults file), a
// missing key is an error, so no default is silently zero.
void readNumber(const ConfigNode& section, std::string_view key, double& value, double min, double max, bool required) {
  if (auto node = section.optionalChild(key)) {
    value = node->asNumberIn(min, max);
  } else if (required) {
    section.failMissing(key);
  }
}

void readFailures(const ConfigNode& section, FailureRates& rates, bool required) {
  section.requireMap();
  section.allowKeys({"gpu", "host", "nic", "network", "software", "planned"});
  readNumber(section, "gpu", rates.gpu, 0.0, kMaxFailuresPer1000Days, required);
  readNumber(section, "host", rates.host, 0.0, kMaxFailuresPer1000Days, required);
  readNumber(section, "nic", rates.nic, 0.0, kMaxFailuresPer1000Days, required);
  readNumber(section, "network", rates.network, 0.0, kMaxFailuresPer1000Days, required);
  readNumber(section, "software", rates.software, 0.0, kMaxFailuresPer1000Days, required);
  readNumber(section, "planned", rates.planned, 0.0, kMaxFailuresPer1000Days, required);
}

void readStorage(const ConfigNode& section, CheckpointStorage& storage, bool required) {
  section.requireMap();
  section.allowKeys({"write_GBps", "read_GBps", "node_write_GBps", "node_read_GBps", "latency_s"});
  readNumber(section, "write_GBps", storage.write_GBps, limits::kMinBandwidthGBps, limits::kMaxBandwidthGBps, required);
  readNumber(section, "read_GBps", storage.read_GBps, limits::kMinBandwidthGBps, limits::kMaxBandwidthGBps, required);
  readNumber(section, "node_write_GBps", storage.node_write_GBps, limits::kMinBandwidthGBps, limits::kMaxBandwidthGBps,
             required);
  readNumber(section, "node_read_GBps", storage.node_read_GBps, limits::kMinBandwidthGBps, limits::kMaxBandwidthGBps,
             required);
  readNumber(section, "latency_s", storage.latency_s, 0.0, kMaxStepSeconds, required);
}

void readRestart(const ConfigNode& section, RestartCosts& restart, bool required) {
  section.requireMap();
  section.allowKeys({"detection_s", "reschedule_s", "process_start_s", "warmup_s"});
  readNumber(section, "detection_s", restart.detection_s, 0.0, kMaxStepSeconds, required);
  readNumber(section, "reschedule_s", restart.reschedule_s, 0.0, kMaxStepSeconds, required);
  readNumber(section, "process_start_s", restart.process_start_s, 0.0, kMaxStepSeconds, required);
  readNumber(section, "warmup_s", restart.warmup_s, 0.0, kMaxStepSeconds, required);
}

void readSpares(const ConfigNode& section, HotSpares& spares, bool required) {
  section.requireMap();
  section.allowKeys({"nodes", "swap_s", "repair_hours"});
  if (auto nodes = section.optionalChild("nodes")) {
    spares.nodes = nodes->asIntegerIn(0, limits::kMaxGpus);
  } else if (required) {
    section.failMissing("nodes");
  }
  readNumber(section, "swap_s", spares.swap_s, 0.0, kMaxStepSeconds, required);
  readNumber(section, "repair_hours", spares.repair_hours, 0.0, kMaxRepairHours, required);
}

void readStragglers(const ConfigNode& section, Stragglers& stragglers, bool required) {
  section.requireMap();
  section.allowKeys({"fraction", "slowdown"});
  readNumber(section, "fraction", stragglers.fraction, 0.0, 1.0, required);
  readNumber(section, "slowdown", stragglers.slowdown, 1.0, kMaxSlowdown, required);
}

ReliabilitySpec readSection(const ConfigNode& section, ReliabilitySpec spec, bool required) {
  if (!section.isMap()) {
    section.failExpected(
        "a reliability section (a mapping of failures, checkpoint_storage, restart, hot_spares, "
        "stragglers)");
  }
  section.allowKeys({"failures", "checkpoint_storage", "restart", "hot_spares", "stragglers"});
  const auto read = [&](std::string_view key, auto reader, auto& into) {
    if (auto child = section.optionalChild(key)) {
      reader(*child, into, required);
    } else if (required) {
      section.failMissing(key);
    }
  };
  read("failures", readFailures, spec.failures);
  read("checkpoint_storage", readStorage, spec.storage);
  read("restart", readRestart, spec.restart);
  read("hot_spares", readSpares, spec.spares);
  read("stragglers", readStragglers, spec.stragglers);
  return spec;
}

}  // namespace

ReliabilitySpec readReliabilitySection(const ConfigNode& section, ReliabilitySpec base) {
  return readSection(section, std::move(base), false);
}

Expected<ReliabilitySpec> loadDefaultReliability(const ConfigPaths& paths) {
  static std::mutex mutex;
  static std::map<std::string, Expected<ReliabilitySpec>> cache;
  std::lock_guard lock(mutex);
  auto found = cache.find(paths.config_dir);
  if (found == cache.end()) {
    const std::string file = (std::filesystem::path(paths.config_dir) / "defaults" / "reliability.yaml").string();
    Expected<ReliabilitySpec> loaded =
        catchInputErrors([&] { return readSection(loadConfigFile(file), ReliabilitySpec{}, true); });
    found = cache.emplace(paths.config_dir, std::move(loaded)).first;
  }
  return found->second;
}

Expected<ReliabilitySpec> clusterReliability(const ClusterSpec& cluster, const ConfigPaths& paths) {
  Expected<ReliabilitySpec> defaults = loadDefaultReliability(paths);
  if (!defaults.ok() || !cluster.reliability) return defaults;
  return catchInputErrors([&] { return readReliabilitySection(*cluster.reliability, defaults.value()); });
}

}  // namespace trainsim::topology
