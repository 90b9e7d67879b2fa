// Loading cluster files: preset name, path or inline mapping; --set overrides; strict checks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/config_node.h"
#include "base/config_paths.h"
#include "base/expected.h"
#include "topology/cluster_spec.h"
#include "topology/gpu_catalog.h"

namespace trainsim::topology {

// Bounds on the numbers cluster and GPU files may give: wide enough for any hardware built
// or announced, narrow enough that every duration the simulator derives fits its clock
// (int64 picoseconds, to sim::kTimeLimit: about 46 days) and every count fits what it allocates.
namespace limits {
// 1 MB/s to 1 PB/s: slower than a 10 Mb/s Ethernet port, 500x faster than NVLink 5 (1.8 TB/s).
inline constexpr double kMinBandwidthGBps = 1e-3;
inline constexpr double kMaxBandwidthGBps = 1e6;
// The same span for keys in gigabits per second: 10 Mb/s to 10 Pb/s.
inline constexpr double kMinBandwidthGbps = 1e-2;
inline constexpr double kMaxBandwidthGbps = 1e7;
// 100 ms, one-way fibre delay half-way round the Earth; real hops take 0.1 to 10 us.
inline constexpr double kMaxLatencyUs = 1e5;
// 1 GFLOP/s to 1 EFLOP/s per chip; a B200 peaks at about 10 PFLOP/s (sparse fp4).
inline constexpr double kMinPeakTflops = 1e-3;
inline constexpr double kMaxPeakTflops = 1e6;
// 1 MiB to 1 PiB of device memory; today's GPUs hold 16 to 288 GiB.
inline constexpr double kMinMemoryGiB = 1e-3;
inline constexpr double kMaxMemoryGiB = 1e6;
// 2^20 accelerators (and as many NICs): 5x the largest cluster built (about 200,000 GPUs).
// The whole graph is built: at this size `topology` takes about 4.5 GB and half a minute.
inline constexpr int64_t kMaxGpus = int64_t{1} << 20;
// Ports of one switch: 8x the largest switch ASICs (512 ports).
inline constexpr int64_t kMaxSwitchRadix = 4096;
// Down:up bandwidth of one fat-tree tier: 100x the most oversubscribed tiers deployed (~10:1).
inline constexpr double kMaxOversubscription = 1000.0;
// SMs or compute units of one chip: 3,000x the most built (304 on an MI300X).
inline constexpr int64_t kMaxComputeUnits = 1'000'000;
// Watts per chip and dollars per GPU-hour: reporting figures, bounded only against typos.
inline constexpr double kMaxTdpW = 1e6;
// A power limit or the power rates hold at, which sets clocks: 1 W, under any accelerator's.
inline constexpr double kMinPowerW = 1.0;
inline constexpr double kMaxPricePerGpuHour = 1e6;
}  // namespace limits

// `reference` is a preset name (configs/clusters/<name>.yaml) or a file path.
// `overrides` have key paths relative to the cluster document ("nodes", "inter_node.oversubscription").
[[nodiscard]] Expected<ClusterSpec> loadClusterFile(const std::string& reference, const ConfigPaths& paths,
                                                    const std::vector<Override>& overrides = {});

// `node` is the value of a `cluster:` key: a scalar reference or an inline mapping (whose
// overrides, if any, were already applied by the caller). Overrides listed here apply to a
// referenced file.
[[nodiscard]] Expected<ClusterSpec> loadClusterNode(const ConfigNode& node, const ConfigPaths& paths,
                                                    const std::vector<Override>& overrides = {});

// The catalog of <config_dir>/gpus.yaml, loaded once per process and cached (thread-safe).
[[nodiscard]] Expected<GpuCatalog> loadGpuCatalog(const ConfigPaths& paths);

}  // namespace trainsim::topology
