#include "validate/harness/collective_buffers.h"

#include <cassert>

namespace trainsim::harness {

bool harnessMeasures(sim::CollectiveOp op) { return op != sim::CollectiveOp::kBroadcast; }

std::optional<CollectiveBuffers> collectiveBuffers(sim::CollectiveOp op, int64_t requested_bytes, int64_t group_size,
                                                   int64_t element_bytes) {
  assert(group_size >= 1 && element_bytes >= 1);
  const int64_t count = requested_bytes / element_bytes;
  const int64_t share = count / group_size;  // elements per rank of the split ops
  CollectiveBuffers buffers;
  switch (op) {
    case sim::CollectiveOp::kAllReduce:
    case sim::CollectiveOp::kSendRecv:
    case sim::CollectiveOp::kBroadcast:
      if (count == 0) return std::nullopt;
      buffers.send_count = count;
      buffers.recv_count = count;
      buffers.call_count = count;
      buffers.bytes = count * element_bytes;
      return buffers;
    case sim::CollectiveOp::kAllGather:
      if (share == 0) return std::nullopt;
      buffers.send_count = share;
      buffers.recv_count = share * group_size;
      buffers.call_count = share;
      buffers.bytes = buffers.recv_count * element_bytes;
      return buffers;
    case sim::CollectiveOp::kReduceScatter:
      if (share == 0) return std::nullopt;
      buffers.send_count = share * group_size;
      buffers.recv_count = share;
      buffers.call_count = share;
      buffers.bytes = buffers.send_count * element_bytes;
      return buffers;
    case sim::CollectiveOp::kAllToAll:
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
