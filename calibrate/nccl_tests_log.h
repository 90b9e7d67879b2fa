// Reading the text nccl-tests prints (all_reduce_perf, all_gather_perf, ...), as printed
// directly or under `mpirun --tag-output` (`[1,0]<stdout>:` before every line) or
// `srun --label` (`0: `), with any number of runs (one per binary invocation) in one file.
//
// Per run it takes:
//   - the group from the "# Using devices" list: one "#  Rank  r [Group g] Pid p on HOST
//     device d [bus] NAME" line per rank; ranks are grouped by HOST in the order the hosts
//     first appear, which gives the group size, the nodes and the GPUs per node;
//   - the columns from the header line ("# size count type redop [root] time algbw busbw
//     error|#wrong time algbw busbw error|#wrong"), so that old (no root column) and new
//     layouts both read;
//   - per size row, the better (smaller) of the out-of-place and in-place times: both run
//     the same algorithm, the difference between them is noise (or a copy the in-place
//     variant saves), and the simulator models neither; "N/A" in one column uses the other;
//   - the operation: from the binary's name where the file shows it (a command line or
//     banner containing e.g. "all_gather_perf" before the run's header), else from the
//     caller's hint (`trainsim calibrate --op`), else inferred from the columns: the bus
//     factor busbw / algbw (all_reduce 2(n-1)/n, all_gather / reduce_scatter / all_to_all
//     (n-1)/n, broadcast / send_recv 1), the reduction column (none for all_gather,
//     all_to_all and broadcast) and the root column (broadcast has one). all_gather and
//     all_to_all print the same columns: such a run needs the binary name or a hint;
//   - the NCCL release that ran it (MeasuredCollective::nccl_version), where the file says:
//     nccl-tests' "nccl-library=22602" before the run's header (nccl-tests 2.17.4 on) or
//     NCCL's "NCCL version 2.26.2+cuda12.8" (NCCL_DEBUG=VERSION or INFO) after it.
//
// Runs of operations the simulator does not model (reduce, gather, scatter, hypercube) are
// skipped with a note. Anything else that does not read is an InputError at file:line:col.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/expected.h"
#include "calibrate/measured_collective.h"
#include "perf/collective.h"

namespace trainsim::calibrate {

struct NcclTestsLog {
  std::vector<MeasuredCollective> runs;  // in file order
  std::vector<std::string> notes;        // runs skipped, hints used, ...
};

// `name` is what messages print as the file (and MeasuredCollective::source).
[[nodiscard]] Expected<NcclTestsLog> parseNcclTestsLog(std::string_view text, const std::string& name,
                                                       std::optional<perf::CollectiveOp> op_hint = std::nullopt);
// Reads the file at `path` and parses it; a file that cannot be read is an error.
[[nodiscard]] Expected<NcclTestsLog> loadNcclTestsLog(const std::string& path,
                                                      std::optional<perf::CollectiveOp> op_hint = std::nullopt);

}  // namespace trainsim::calibrate
