// How big each rank's buffers are for one collective of a given nccl-tests "size", with the
// rounding nccl-tests applies (src/*.cu, the Get*CollByteCount functions): element counts
// are whole, and the ops that split a buffer over the group use a multiple of the group size.
#pragma once

#include <cstdint>
#include <optional>

#include "perf/collective.h"

namespace trainsim::harness {

// The collectives the NCCL harness measures (SPEC names): all_reduce, all_gather,
// reduce_scatter, all_to_all, send_recv. Broadcast is not measured.
[[nodiscard]] bool harnessMeasures(perf::CollectiveOp op);

struct CollectiveBuffers {
  int64_t bytes = 0;       // nccl-tests' "size" column after rounding: what the results file records
  int64_t send_count = 0;  // elements in each rank's send buffer
  int64_t recv_count = 0;  // elements in each rank's receive buffer
  // all_gather, reduce_scatter: each rank's share; all_to_all: the block sent to each peer;
  // all_reduce, send_recv: the whole buffer. This is the count NCCL's call takes.
  int64_t call_count = 0;
};

// nullopt when `requested_bytes` rounds down to no element (or to less than one element per
// rank for the split ops): nccl-tests would print a zero-size row; the harness skips it.
[[nodiscard]] std::optional<CollectiveBuffers> collectiveBuffers(perf::CollectiveOp op, int64_t requested_bytes,
                                                                 int64_t group_size, int64_t element_bytes);

}  // namespace trainsim::harness
