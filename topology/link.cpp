#include "topology/link.h"

namespace trainsim::topology {

std::string_view linkTypeName(LinkType type) {
  switch (type) {
    case LinkType::kNvLink: return "nvlink";
    case LinkType::kPcie: return "pcie";
    case LinkType::kInfiniBand: return "infiniband";
    case LinkType::kRoce: return "roce";
    case LinkType::kEthernet: return "ethernet";
    case LinkType::kIci: return "ici";
    case LinkType::kSocketInterconnect: return "socket_interconnect";
  }
  return "unknown";
}

}  // namespace trainsim::topology
