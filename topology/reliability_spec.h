// How a cluster fails and recovers: the `reliability:` section of a cluster file over the
// shipped defaults (configs/defaults/reliability.yaml, every value cited there). The goodput
// model (goodput/) turns it, with the experiment's checkpoint policy, into interruptions, the
// time they cost and the time to train with them.
#pragma once

#include <optional>
#include <string>

#include "base/config_node.h"
#include "base/config_paths.h"
#include "base/expected.h"
#include "topology/cluster_spec.h"

namespace trainsim::topology {

// Interruptions of a job per 1,000 days of one device, by the component that failed. A job's
// rate is the sum over the devices it holds: GPUs, nodes (hosts), NICs; network failures
// (switches, cables, optics) and software failures (bugs, hangs, dependencies) are counted
// per node, as the fleet studies report them.
struct FailureRates {
  double gpu = 0.0;       // per GPU
  double host = 0.0;      // per node: CPU, memory, power, storage, chassis, host maintenance
  double nic = 0.0;       // per NIC
  double network = 0.0;   // per node
  double software = 0.0;  // per node; a restart on the same nodes, no node is replaced
  // Planned interruptions (firmware upgrades, configuration changes) per 1,000 node-days: the
  // job is stopped after a checkpoint, so they cost a restart but no rework.
  double planned = 0.0;
};

// Where checkpoints go: a parallel file system or object store shared by the job's nodes.
// A checkpoint is written by every node of the job at once (each its shard), so it takes
// latency + bytes / min(aggregate, nodes x per node).
struct CheckpointStorage {
  double write_GBps = 0.0;       // aggregate the storage sustains for one job
  double read_GBps = 0.0;        // aggregate, for loading after a restart
  double node_write_GBps = 0.0;  // one node's link to the storage
  double node_read_GBps = 0.0;
  double latency_s = 0.0;  // per checkpoint: metadata, opening the shards, the commit
};

// What a restart after an unplanned failure costs, besides loading the checkpoint (which
// CheckpointStorage sizes) and redoing the lost work.
struct RestartCosts {
  double detection_s = 0.0;      // from the failure until the job is declared failed
  double reschedule_s = 0.0;     // getting a healthy node for a failed one without a hot spare
  double process_start_s = 0.0;  // scheduling, container and process start, communicator setup
  double warmup_s = 0.0;         // the first iterations after a restart run slower
};

// Healthy nodes held idle by the job to replace failed ones in swap_s instead of
// reschedule_s; a failed node returns to the pool after repair_hours.
struct HotSpares {
  int64_t nodes = 0;
  double swap_s = 0.0;
  double repair_hours = 0.0;
};

// Slow GPUs: each GPU of the job is slow with probability `fraction` and then runs its
// compute `slowdown` times longer; a synchronous step waits for its slowest rank.
struct Stragglers {
  double fraction = 0.0;
  double slowdown = 1.0;
};

struct ReliabilitySpec {
  FailureRates failures;
  CheckpointStorage storage;
  RestartCosts restart;
  HotSpares spares;
  Stragglers stragglers;
};

// Reads a `reliability:` section over `base`: every key it gives replaces base's value
// (strict keys, physical ranges; InputError at the key).
[[nodiscard]] ReliabilitySpec readReliabilitySection(const ConfigNode& section, ReliabilitySpec base);

// The shipped defaults, <config_dir>/defaults/reliability.yaml, read once per directory
// (thread-safe); an error when the file is missing or malformed.
[[nodiscard]] Expected<ReliabilitySpec> loadDefaultReliability(const ConfigPaths& paths);

// The cluster's reliability: the defaults of `paths` with the cluster file's section over them.
[[nodiscard]] Expected<ReliabilitySpec> clusterReliability(const ClusterSpec& cluster, const ConfigPaths& paths);

}  // namespace trainsim::topology
