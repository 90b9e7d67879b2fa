#include "topology/router.h"

#include <cassert>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <queue>

#include "topology/link_defaults.h"

namespace trainsim::topology {
namespace {

constexpr int64_t kInfinity = std::numeric_limits<int64_t>::max() / 4;

// splitmix64: a well-mixed, platform-independent hash for ECMP choices.
uint64_t mix(uint64_t value) {
  value += 0x9e3779b97f4a7c15ULL;
  value = (value ^ (value >> 30)) * 0xbf58476d1ce4e5b9ULL;
  value = (value ^ (value >> 27)) * 0x94d049bb133111ebULL;
  return value ^ (value >> 31);
}

using QueueEntry = std::pair<int64_t, DeviceId>;
using MinQueue = std::priority_queue<QueueEntry, std::vector<QueueEntry>, std::greater<>>;

// The distance a search has reached v at in this query (epoch), or infinity if not yet.
int64_t distanceIfSeen(const std::vector<uint32_t>& seen, const std::vector<int64_t>& dist, DeviceId v,
                       uint32_t epoch) {
  return seen[v] == epoch ? dist[v] : kInfinity;
}

// The smallest key among the queue's vertices not yet settled in this query (epoch);
// settled ones are popped off the top on the way, as Dijkstra skips them anyway.
int64_t topKey(MinQueue& queue, const std::vector<uint32_t>& settled, uint32_t epoch) {
  while (!queue.empty() && settled[queue.top().second] == epoch) queue.pop();
  return queue.empty() ? kInfinity : queue.top().first;
}

}  // namespace

int64_t routingCost(const Link& link) { return std::max<int64_t>(1, std::llround(1e15 / link.bandwidth_Bps)); }

Router::Router(const Cluster& cluster) : cluster_(cluster) {
  cost_.reserve(cluster.links().size());
  for (const Link& link : cluster.links()) cost_.push_back(routingCost(link));
  const std::size_t devices = cluster.devices().size();
  seen_forward_.assign(devices, 0);
  seen_backward_.assign(devices, 0);
  settled_forward_.assign(devices, 0);
  settled_backward_.assign(devices, 0);
  on_path_forward_.assign(devices, 0);
  dist_forward_.assign(devices, kInfinity);
  dist_backward_.assign(devices, kInfinity);
}

const Route& Router::route(DeviceId from, DeviceId to) {
  const uint64_t key = (static_cast<uint64_t>(from) << 32) | to;
  auto found = cache_.find(key);
  if (found != cache_.end()) return found->second;
  // Between GPUs of different nodes, traffic leaves through the source GPU's own NIC and
  // enters through the destination GPU's own NIC, as NCCL picks NICs by PCI locality
  // (GPU i -> NIC i on DGX systems); only the path between the NICs is searched.
  const std::optional<DeviceId> from_nic = ownNic(from);
  const std::optional<DeviceId> to_nic = ownNic(to);
  if (from_nic && to_nic && cluster_.device(from).node != cluster_.device(to).node) {
    // The GPU <-> NIC legs are cached too: every pair from (to) a GPU shares them.
    Route joined = route(from, *from_nic);
    const Route middle = networkRoute(*from_nic, *to_nic);
    const Route& last = route(*to_nic, to);
    joined.links.reserve(joined.links.size() + middle.links.size() + last.links.size());
    for (const Route* part : {&middle, &last}) {
      joined.links.insert(joined.links.end(), part->links.begin(), part->links.end());
      joined.latency_ps += part->latency_ps;
      joined.reference_latency_ps += part->reference_latency_ps;
      joined.bottleneck_Bps = std::min(joined.bottleneck_Bps, part->bottleneck_Bps);
    }
    return cache_.emplace(key, std::move(joined)).first->second;
  }
  return cache_.emplace(key, computeRoute(from, to)).first->second;
}

Route Router::networkRoute(DeviceId from_nic, DeviceId to_nic) {
  if (!cluster_.closFabric()) return computeRoute(from_nic, to_nic, /*network_only=*/true);
  // Up/down routing through the folded Clos: climb to the lowest tier whose block holds
  // both leaves, then descend along the only downward path to the destination leaf. Every
  // such path is a shortest path.
  //  - ECMP (Ethernet): each uplink is chosen by a hash of the endpoints, so a pair always
  //    takes the same path and two pairs may share an uplink.
  //  - Adaptive routing (ClosFabric::adaptive_routing): switches spread a flow's packets
  //    over all the uplinks by load, so the flow holds no single switch-to-switch link; it
  //    crosses each oversubscribed tier as a share of that block's trunk (ClosTier::up_trunks)
  //    and the tiers that are not oversubscribed not at all (they cannot limit it). The
  //    hops still set the latency (any plane: all have the same).
  const ClosFabric& fabric = *cluster_.closFabric();
  const auto& tiers = fabric.tiers;
  auto leafOf = [&](DeviceId nic) {
    for (LinkId id : cluster_.outLinks(nic)) {
      const DeviceId next = cluster_.link(id).to;
      if (cluster_.device(next).kind == DeviceKind::kLeafSwitch) return next;
    }
    assert(false && "NIC without a leaf switch");
    return DeviceId{0};
  };
  const DeviceId leaf_a = leafOf(from_nic);
  const DeviceId leaf_b = leafOf(to_nic);
  const int64_t a = leaf_a - tiers[0].first_switch;
  const int64_t b = leaf_b - tiers[0].first_switch;
  std::vector<DeviceId> hops = {from_nic, leaf_a};
  std::size_t top = 0;
  if (a != b) {
    top = 1;
    while (a / tiers[top].leaves_per_block != b / tiers[top].leaves_per_block) ++top;
    const uint64_t pair_hash = mix((static_cast<uint64_t>(from_nic) << 32) | to_nic);
    int64_t plane = 0;
    for (std::size_t k = 1; k <= top; ++k) {
      const auto choice = fabric.adaptive_routing
                              ? int64_t{0}
                              : static_cast<int64_t>(mix(pair_hash + k) % static_cast<uint64_t>(tiers[k - 1].up_ports));
      plane = k == 1 ? choice : plane * tiers[k - 1].up_ports + choice;
      hops.push_back(tiers[k].first_switch +
                     static_cast<DeviceId>((a / tiers[k].leaves_per_block) * tiers[k].planes + plane));
    }
    for (std::size_t k = top - 1; k >= 1; --k) {
      plane /= tiers[k].up_ports;
      hops.push_back(tiers[k].first_switch +
                     static_cast<DeviceId>((b / tiers[k].leaves_per_block) * tiers[k].planes + plane));
    }
    hops.push_back(leaf_b);
  }
  hops.push_back(to_nic);

  Route route;
  route.bottleneck_Bps = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i + 1 < hops.size(); ++i) {
    bool found = false;
    for (LinkId id : cluster_.outLinks(hops[i])) {
      const Link& link = cluster_.link(id);
      if (link.to != hops[i + 1]) continue;
      // The NIC legs are the route's own; switch-to-switch hops only under ECMP.
      const bool nic_leg = i == 0 || i + 2 == hops.size();
      if (nic_leg || !fabric.adaptive_routing) route.links.push_back(id);
      route.latency_ps += link.latency_ps;
      route.reference_latency_ps += defaults::referenceLinkLatencyPs(cluster_.spec(), link);
      route.bottleneck_Bps = std::min(route.bottleneck_Bps, link.bandwidth_Bps);
      found = true;
      break;
    }
    assert(found && "Clos structure and links disagree");
    (void)found;
  }
  if (fabric.adaptive_routing && top > 0) {
    // Up through the source side's trunks, down through the destination side's, between the
    // first NIC leg and the last.
    std::vector<LinkId> trunks;
    for (std::size_t k = 0; k < top; ++k) {
      if (tiers[k].up_trunks.empty()) continue;
      trunks.push_back(tiers[k].up_trunks[static_cast<std::size_t>(a / tiers[k].leaves_per_block)]);
    }
    for (std::size_t k = top; k-- > 0;) {
      if (tiers[k].up_trunks.empty()) continue;
      trunks.push_back(
          cluster_.link(tiers[k].up_trunks[static_cast<std::size_t>(b / tiers[k].leaves_per_block)]).reverse);
    }
    for (LinkId id : trunks) route.bottleneck_Bps = std::min(route.bottleneck_Bps, cluster_.link(id).bandwidth_Bps);
    route.links.insert(route.links.begin() + 1, trunks.begin(), trunks.end());
  }
  return route;
}

std::optional<DeviceId> Router::ownNic(DeviceId gpu) const {
  const Device& device = cluster_.device(gpu);
  const int nics = cluster_.nicsPerNode();
  if (!isAccelerator(device.kind) || nics == 0) return std::nullopt;
  return cluster_.nic(device.node, static_cast<int>(int64_t{device.index} * nics / cluster_.spec().gpus_per_node));
}

Route Router::computeRoute(DeviceId from, DeviceId to, bool network_only) {
  if (from == to) return Route{};
  const Query query{from, to, network_only, ++epoch_};
  const int64_t best = searchShortestDistance(query);
  markForwardShortestPathVertices(query, best);
  return walkShortestPath(query, best);
}

bool Router::usable(const Query& query, LinkId id) const {
  if (!query.network_only) return true;
  // NIC to NIC: only network cables, never back through a node's PCIe tree.
  // Other NICs are dead ends there, so they are not even queued.
  const Link& link = cluster_.links()[id];
  const bool cable =
      link.type == LinkType::kInfiniBand || link.type == LinkType::kRoce || link.type == LinkType::kEthernet;
  return cable &&
         (cluster_.devices()[link.to].kind != DeviceKind::kNic || link.to == query.to || link.to == query.from);
}

int64_t Router::backwardSettledDistance(const Query& query, DeviceId v) const {
  return settled_backward_[v] == query.epoch ? dist_backward_[v] : kInfinity;
}

int64_t Router::searchShortestDistance(const Query& query) {
  // The search runs until the smallest keys of the two queues add up to MORE than the best
  // distance, so every vertex of every shortest path ends up settled by at least one of
  // the searches (needed to enumerate equal-cost paths).
  const uint32_t epoch = query.epoch;
  const auto& links = cluster_.links();
  MinQueue forward_queue;
  MinQueue backward_queue;
  seen_forward_[query.from] = epoch;
  dist_forward_[query.from] = 0;
  forward_queue.emplace(0, query.from);
  seen_backward_[query.to] = epoch;
  dist_backward_[query.to] = 0;
  backward_queue.emplace(0, query.to);
  forward_order_.clear();
  int64_t best = kInfinity;

  while (true) {
    const int64_t top_forward = topKey(forward_queue, settled_forward_, epoch);
    const int64_t top_backward = topKey(backward_queue, settled_backward_, epoch);
    if (top_forward == kInfinity && top_backward == kInfinity) break;
    if (top_forward != kInfinity && top_backward != kInfinity && top_forward + top_backward > best) break;
    if (top_forward == kInfinity && top_backward > best) break;
    if (top_backward == kInfinity && top_forward > best) break;
    const bool expand_forward = top_forward <= top_backward;
    if (expand_forward) {
      const auto [d, v] = forward_queue.top();
      forward_queue.pop();
      settled_forward_[v] = epoch;
      forward_order_.push_back(v);
      for (LinkId id : cluster_.outLinks(v)) {
        if (!usable(query, id)) continue;
        const DeviceId w = links[id].to;
        const int64_t candidate = d + cost_[id];
        if (candidate < distanceIfSeen(seen_forward_, dist_forward_, w, epoch)) {
          seen_forward_[w] = epoch;
          dist_forward_[w] = candidate;
          forward_queue.emplace(candidate, w);
        }
        const int64_t other = distanceIfSeen(seen_backward_, dist_backward_, w, epoch);
        if (other != kInfinity) best = std::min(best, candidate + other);
      }
    } else {
      const auto [d, v] = backward_queue.top();
      backward_queue.pop();
      settled_backward_[v] = epoch;
      // Links into v are the reverses of v's out-links (every link has a reverse of equal cost).
      for (LinkId id : cluster_.outLinks(v)) {
        if (!usable(query, id)) continue;
        const DeviceId w = links[id].to;
        const int64_t candidate = d + cost_[links[id].reverse];
        if (candidate < distanceIfSeen(seen_backward_, dist_backward_, w, epoch)) {
          seen_backward_[w] = epoch;
          dist_backward_[w] = candidate;
          backward_queue.emplace(candidate, w);
        }
        const int64_t other = distanceIfSeen(seen_forward_, dist_forward_, w, epoch);
        if (other != kInfinity) best = std::min(best, candidate + other);
      }
    }
  }
  assert(best != kInfinity && "route between disconnected devices");
  return best;
}

void Router::markForwardShortestPathVertices(const Query& query, int64_t best) {
  // Latest settled first, so a vertex's successors on the path are marked before it.
  const uint32_t epoch = query.epoch;
  const auto& links = cluster_.links();
  for (auto it = forward_order_.rbegin(); it != forward_order_.rend(); ++it) {
    const DeviceId v = *it;
    const int64_t dv = dist_forward_[v];
    bool on_path = v == query.to;
    for (LinkId id : cluster_.outLinks(v)) {
      if (on_path) break;
      if (!usable(query, id)) continue;
      const DeviceId w = links[id].to;
      const int64_t next = dv + cost_[id];
      const int64_t remaining = backwardSettledDistance(query, w);
      if (remaining != kInfinity && next + remaining == best) on_path = true;
      if (on_path_forward_[w] == epoch && settled_forward_[w] == epoch && dist_forward_[w] == next) on_path = true;
    }
    if (on_path) on_path_forward_[v] = epoch;
  }
}

Route Router::walkShortestPath(const Query& query, int64_t best) const {
  // From the source, choosing among equal-cost next hops by the endpoint hash.
  const auto& links = cluster_.links();
  const uint64_t pair_hash = mix((static_cast<uint64_t>(query.from) << 32) | query.to);
  Route result;
  DeviceId current = query.from;
  int64_t travelled = 0;
  std::vector<LinkId> candidates;
  result.bottleneck_Bps = std::numeric_limits<double>::infinity();
  while (current != query.to) {
    candidates.clear();
    for (LinkId id : cluster_.outLinks(current)) {
      if (!usable(query, id)) continue;
      const DeviceId w = links[id].to;
      const int64_t next = travelled + cost_[id];
      const int64_t remaining = backwardSettledDistance(query, w);
      const bool via_backward = remaining != kInfinity && next + remaining == best;
      const bool via_forward = on_path_forward_[w] == query.epoch && dist_forward_[w] == next;
      if (via_backward || via_forward) candidates.push_back(id);
    }
    assert(!candidates.empty());
    const LinkId chosen = candidates[mix(pair_hash + result.links.size()) % static_cast<uint64_t>(candidates.size())];
    result.links.push_back(chosen);
    result.latency_ps += links[chosen].latency_ps;
    result.reference_latency_ps += defaults::referenceLinkLatencyPs(cluster_.spec(), links[chosen]);
    result.bottleneck_Bps = std::min(result.bottleneck_Bps, links[chosen].bandwidth_Bps);
    travelled += cost_[chosen];
    current = links[chosen].to;
  }
  return result;
}

}  // namespace trainsim::topology
