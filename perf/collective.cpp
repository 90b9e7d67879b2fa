#include "perf/collective.h"

#include <array>

namespace trainsim::perf {

namespace {
constexpr std::array<std::pair<CollectiveOp, std::string_view>, 6> kOpNames = {{
    {CollectiveOp::kAllReduce, "all_reduce"},
    {CollectiveOp::kAllGather, "all_gather"},
    {CollectiveOp::kReduceScatter, "reduce_scatter"},
    {CollectiveOp::kAllToAll, "all_to_all"},
    {CollectiveOp::kBroadcast, "broadcast"},
    {CollectiveOp::kSendRecv, "send_recv"},
}};
}  // namespace

std::string_view collectiveOpName(CollectiveOp op) {
  for (const auto& [value, name] : kOpNames) {
    if (value == op) return name;
  }
  return "unknown";
}

std::optional<CollectiveOp> parseCollectiveOp(std::string_view name) {
  for (const auto& [value, op_name] : kOpNames) {
    if (op_name == name) return value;
  }
  return std::nullopt;
}

double busBandwidthFactor(CollectiveOp op, int64_t ranks) {
  const auto n = static_cast<double>(ranks);
  switch (op) {
    case CollectiveOp::kAllReduce: return 2.0 * (n - 1.0) / n;
    case CollectiveOp::kAllGather:
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAllToAll: return (n - 1.0) / n;
    case CollectiveOp::kBroadcast:
    case CollectiveOp::kSendRecv: return 1.0;
  }
  return 1.0;
}

}  // namespace trainsim::perf
