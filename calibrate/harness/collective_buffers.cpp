#include "calibrate/harness/collective_buffers.h"

#include <cassert>

namespace trainsim::harness {

bool harnessMeasures(perf::CollectiveOp op) { return op != perf::CollectiveOp::kBroadcast; }

std::optional<CollectiveBuffers> collectiveBuffers(perf::CollectiveOp op, int64_t requested_bytes, int64_t group_size,
                                                   int64_t element_bytes) {
  assert(group_size >= 1 && element_bytes >= 1);
  const int64_t count = requested_bytes / element_bytes;
  const int64_t share = count / group_size;  // elements per rank of the split ops
  CollectiveBuffers buffers;
  switch (op) {
    case perf::CollectiveOp::kAllReduce:
    case perf::CollectiveOp::kSendRecv:
    case perf::CollectiveOp::kBroadcast:
      if (count == 0) return std::nullopt;
      buffers.send_count = count;
      buffers.recv_count = count;
      buffers.call_count = count;
      buffers.bytes = count * element_bytes;
      return buffers;
    case perf::CollectiveOp::kAllGather:
      if (share == 0) return std::nullopt;
      buffers.send_count = share;
      buffers.recv_count = share * group_size;
      buffers.call_count = share;
      buffers.bytes = buffers.recv_count * element_bytes;
      return buffers;
    case perf::CollectiveOp::kReduceScatter:
      if (share == 0) return std::nullopt;
      buffers.send_count = share * group_size;
      buffers.recv_count = share;
      buffers.call_count = share;
      buffers.bytes = buffers.send_count * element_bytes;
      return buffers;
    case perf::CollectiveOp::kAllToAll:
      if (share == 0) return std::nullopt;
      buffers.send_count = share * group_size;
      buffers.recv_count = share * group_size;
      buffers.call_count = share;
      buffers.bytes = buffers.send_count * element_bytes;
      return buffers;
  }
  return std::nullopt;
}

}  // namespace trainsim::harness
