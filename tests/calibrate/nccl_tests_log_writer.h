// Test support: nccl-tests output written by the tests themselves (no shared data), in the
// layouts nccl-tests prints: with or without the root column, plain or under mpirun.
#pragma once

#include <fmt/format.h>

#include <string>
#include <vector>

#include "calibrate/measured_collective.h"
#include "perf/collective.h"

namespace trainsim::calibrate::testing {

struct LogStyle {
  bool mpirun_prefix = false;     // "[1,0]<stdout>:" before every line
  bool root_column = true;        // nccl-tests >= 2.13 prints "redop root"
  bool name_binary = true;        // a command line naming the *_perf binary before the run
  double in_place_factor = 1.02;  // in-place time = out-of-place x this
  // nccl-tests >= 2.17.4: "# nccl-tests version ... nccl-library=CODE" before the header.
  std::string nccl_library;
  // NCCL_DEBUG=INFO: rank 0's "NCCL INFO NCCL version RELEASE" after the rank list.
  std::string nccl_info_release;
};

inline std::string binaryName(perf::CollectiveOp op) {
  switch (op) {
    case perf::CollectiveOp::kAllReduce: return "all_reduce_perf";
    case perf::CollectiveOp::kAllGather: return "all_gather_perf";
    case perf::CollectiveOp::kReduceScatter: return "reduce_scatter_perf";
    case perf::CollectiveOp::kAllToAll: return "alltoall_perf";
    case perf::CollectiveOp::kBroadcast: return "broadcast_perf";
    case perf::CollectiveOp::kSendRecv: return "sendrecv_perf";
  }
  return "";
}

// One nccl-tests run of `op` on nodes x GPUs (ranks_per_node), with the given samples.
inline std::string ncclTestsRun(perf::CollectiveOp op, const std::vector<int64_t>& ranks_per_node,
                                const std::vector<CollectiveSample>& samples, const LogStyle& style = {}) {
  int64_t n = 0;
  for (int64_t count : ranks_per_node) n += count;
  const std::string prefix = style.mpirun_prefix ? "[1,0]<stdout>:" : "";
  std::string text;
  auto line = [&](const std::string& body) { text += prefix + body + "\n"; };
  if (style.name_binary) {
    text += fmt::format("$ mpirun -np {} ./build/{} -b 8 -e 1G -f 2 -g 1\n", n, binaryName(op));
  }
  if (!style.nccl_library.empty()) {
    line("# nccl-tests version 2.17.6 nccl-headers=" + style.nccl_library + " nccl-library=" + style.nccl_library);
    line("# Collective test starting: " + binaryName(op));
  }
  line(
      "# nThread 1 nGpus 1 minBytes 8 maxBytes 1073741824 step: 2(factor) warmup iters: 5 iters: 20 "
      "agg iters: 1 validation: 1 graph: 0");
  line("#");
  line("# Using devices");
  int64_t rank = 0;
  for (std::size_t node = 0; node < ranks_per_node.size(); ++node) {
    for (int64_t local = 0; local < ranks_per_node[node]; ++local) {
      line(fmt::format("#  Rank {:>2} Group  0 Pid {:>6} on  node-{:03d} device {:>2} [0x{:02x}] NVIDIA A100-SXM4-40GB",
                       rank, 1000 + rank, node, local, local));
      ++rank;
    }
  }
  line("#");
  if (!style.nccl_info_release.empty()) {
    line("node-000:1000:1000 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>");
    line("node-000:1000:1000 [0] NCCL INFO NCCL version " + style.nccl_info_release);
  }
  const bool reduction = op == perf::CollectiveOp::kAllReduce || op == perf::CollectiveOp::kReduceScatter;
  const bool divided = op == perf::CollectiveOp::kAllGather || op == perf::CollectiveOp::kReduceScatter ||
                       op == perf::CollectiveOp::kAllToAll;
  const std::string root_head = style.root_column ? "    root" : "";
  line("#                                                              out-of-place                       in-place");
  line(
      fmt::format("#       size         count      type   redop{}     time   algbw   busbw #wrong     time   algbw   "
                  "busbw #wrong",
                  root_head));
  line("#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)");
  const double factor = perf::busBandwidthFactor(op, n);
  for (const auto& sample : samples) {
    const auto bytes = static_cast<int64_t>(sample.bytes);
    const int64_t count = divided ? bytes / 4 / n : bytes / 4;
    const std::string root = !style.root_column                     ? ""
                             : op == perf::CollectiveOp::kBroadcast ? fmt::format(" {:>7}", 0)
                                                                    : fmt::format(" {:>7}", -1);
    const double in_place = sample.time_us * style.in_place_factor;
    const double algbw = sample.bytes / sample.time_us / 1e3;
    const double algbw_in = sample.bytes / in_place / 1e3;
    line(fmt::format(" {:>12} {:>12} {:>9} {:>7}{} {:>8.2f} {:>7.2f} {:>7.2f} {:>6} {:>8.2f} {:>7.2f} {:>7.2f} {:>6}",
                     bytes, count, "float", reduction ? "sum" : "none", root, sample.time_us, algbw, algbw * factor, 0,
                     in_place, algbw_in, algbw_in * factor, 0));
  }
  line("# Out of bounds values : 0 OK");
  line("# Avg bus bandwidth    : 12.34");
  line("#");
  return text;
}

}  // namespace trainsim::calibrate::testing
