// One measured collective curve, whatever file it came from: a run of an nccl-tests binary
// (calibrate/nccl_tests_log.h) or one collective of a trainsim-calib-nccl results file
// (calibrate/harness_results_reader.h). `trainsim calibrate` fits these.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "perf/collective.h"

namespace trainsim::calibrate {

struct CollectiveSample {
  double bytes = 0.0;    // nccl-tests' "size" column for the op (perf::CollectiveRequest::bytes)
  double time_us = 0.0;  // the time of one call as measured (see the parsers for which column)
};

struct MeasuredCollective {
  std::string source;  // the file's name as given on the command line
  std::string where;   // "file:line" of the run's header, for messages
  perf::CollectiveOp op = perf::CollectiveOp::kAllReduce;
  // Group members per node, node by node in the order the nodes first appear (the log's
  // rank/host list, or the harness file's nodes x gpus_per_node).
  std::vector<int64_t> ranks_per_node;
  std::string layout;    // harness layout name (intra_node, one_per_node, ...) or one derived from the nodes
  std::string gpu_name;  // as the file prints it ("A100-SXM4-40GB"); may be empty
  // The NCCL release that ran it (NCCL_VERSION_CODE, 22703 for 2.27.3), where the file says.
  std::optional<double> nccl_version;
  std::vector<CollectiveSample> samples;  // ascending bytes

  [[nodiscard]] int64_t groupSize() const {
    int64_t total = 0;
    for (int64_t count : ranks_per_node) total += count;
    return total;
  }
  [[nodiscard]] int64_t nodes() const { return static_cast<int64_t>(ranks_per_node.size()); }
  [[nodiscard]] int64_t maxPerNode() const {
    int64_t result = 0;
    for (int64_t count : ranks_per_node) result = count > result ? count : result;
    return result;
  }
};

// The layout name for a group that spans `nodes` nodes with at most `max_per_node` members
// on one: "intra_node" (one node), "one_per_node", or "multi_node" (several per node).
[[nodiscard]] std::string derivedLayoutName(int64_t nodes, int64_t max_per_node);

}  // namespace trainsim::calibrate
