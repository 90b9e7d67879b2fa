#include "sim/flow_network.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <utility>

namespace trainsim::sim {

namespace {

// Min-heap order on (share, local link index): the smallest fair share first, ties by
// the link's position in the component, so the solve order depends only on the input.
struct LargerShare {
  template <class Entry>
  bool operator()(const Entry& a, const Entry& b) const {
    return a.share > b.share || (a.share == b.share && a.local > b.local);
  }
};

}  // namespace

std::vector<double> linkCapacities(std::span<const topology::Link> links) {
  std::vector<double> capacities;
  capacities.reserve(links.size());
  for (const topology::Link& link : links) capacities.push_back(link.bandwidth_Bps);
  return capacities;
}

FlowNetwork::FlowNetwork(Engine& engine, std::vector<double> link_capacity_Bps, FlowNetworkOptions options)
    : engine_(engine), options_(options), capacity_(std::move(link_capacity_Bps)) {
  assert(options_.completion_granularity >= 1);
  for ([[maybe_unused]] double c : capacity_) assert(c > 0.0 && std::isfinite(c));
  const std::size_t n = capacity_.size();
  link_flows_.resize(n);
  bytes_carried_.assign(n, 0.0);
  busy_time_.assign(n, 0);
  busy_since_.assign(n, 0);
  dirty_.assign(n, 0);
  link_visit_.assign(n, LinkVisit{});
  completion_handler_ = engine_.addHandler<&FlowNetwork::onCompletionDue>(this);
  update_handler_ = engine_.addHandler<&FlowNetwork::onUpdate>(this);
}

uint32_t FlowNetwork::allocateHops(uint32_t count) {
  if (count < free_hop_blocks_.size() && !free_hop_blocks_[count].empty()) {
    const uint32_t begin = free_hop_blocks_[count].back();
    free_hop_blocks_[count].pop_back();
    return begin;
  }
  const auto begin = static_cast<uint32_t>(hops_.size());
  hops_.resize(hops_.size() + count);
  return begin;
}

void FlowNetwork::releaseHops(uint32_t begin, uint32_t count) {
  if (count >= free_hop_blocks_.size()) free_hop_blocks_.resize(count + 1);
  free_hop_blocks_[count].push_back(begin);
}

void FlowNetwork::markDirty(LinkId link) {
  if (dirty_[link]) return;
  dirty_[link] = 1;
  dirty_links_.push_back(link);
}

void FlowNetwork::requestUpdate() {
  if (update_scheduled_) return;
  update_scheduled_ = true;
  engine_.schedule(engine_.now(), update_handler_, 0);
}

FlowId FlowNetwork::startFlow(std::span<const LinkId> links, std::span<const uint32_t> multiplicity, double bytes,
                              SimTime latency, EventTarget on_delivered, double rate_cap_Bps) {
  assert(bytes >= 0.0 && std::isfinite(bytes));
  assert(multiplicity.empty() || multiplicity.size() == links.size());
  assert(latency >= 0);
  assert(rate_cap_Bps > 0.0);
  ++counters_.flows_started;
  const SimTime now = engine_.now();
  if (links.empty() || bytes == 0.0) {
    engine_.schedule(now + latency, on_delivered);
    return kNoFlow;
  }

  uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<uint32_t>(flows_.size());
    flows_.emplace_back();
    visit_mark_.push_back(0);
  }
  Flow& flow = flows_[slot];
  flow.remaining = bytes;
  flow.rate = 0.0;
  flow.rate_cap = rate_cap_Bps;
  flow.bytes = bytes;
  flow.last_update = now;
  flow.latency = latency;
  flow.on_delivered = on_delivered;
  flow.hop_count = static_cast<uint32_t>(links.size());
  flow.hop_begin = allocateHops(flow.hop_count);
  flow.active = true;
  ++active_flows_;

  full_update_pending_ = true;
  for (uint32_t i = 0; i < flow.hop_count; ++i) {
    const LinkId link = links[i];
    assert(link < capacity_.size());
    std::vector<LinkEntry>& entries = link_flows_[link];
    if (entries.empty()) busy_since_[link] = now;
    const uint32_t hop = flow.hop_begin + i;
    hops_[hop] = Hop{link, static_cast<uint32_t>(entries.size()), multiplicity.empty() ? 1 : multiplicity[i]};
    assert(hops_[hop].multiplicity >= 1);
    entries.push_back(LinkEntry{slot, hop});
    markDirty(link);
  }
  requestUpdate();
  return slot;
}

void FlowNetwork::setLinkCapacity(LinkId link, double capacity_Bps) {
  assert(link < capacity_.size());
  assert(capacity_Bps > 0.0 && std::isfinite(capacity_Bps));
  capacity_[link] = capacity_Bps;
  full_update_pending_ = true;
  markDirty(link);
  requestUpdate();
}

void FlowNetwork::armCompletionEvent() {
  const SimTime next = completions_.topTime();
  if (next >= armed_time_) return;  // an event at or before `next` is already pending
  armed_time_ = next;
  engine_.schedule(next, completion_handler_, 0);
}

void FlowNetwork::onCompletionDue(uint64_t /*payload*/) {
  const SimTime now = engine_.now();
  if (now == armed_time_) armed_time_ = kTimeNever;
  // Flows due at the same instant finish in slot order.
  due_.clear();
  completions_.popUntil(now, due_);
  for (const uint32_t slot : due_) finishFlow(slot);
  armCompletionEvent();
}

void FlowNetwork::finishFlow(uint32_t slot) {
  Flow& flow = flows_[slot];
  const SimTime now = engine_.now();
  for (uint32_t i = 0; i < flow.hop_count; ++i) {
    const Hop hop = hops_[flow.hop_begin + i];
    std::vector<LinkEntry>& entries = link_flows_[hop.link];
    assert(hop.position < entries.size() && entries[hop.position].flow == slot);
    const LinkEntry moved = entries.back();
    entries[hop.position] = moved;
    hops_[moved.hop].position = hop.position;
    entries.pop_back();
    bytes_carried_[hop.link] += flow.bytes * hop.multiplicity;
    if (entries.empty()) busy_time_[hop.link] += now - busy_since_[hop.link];
    markDirty(hop.link);
  }
  releaseHops(flow.hop_begin, flow.hop_count);
  finished_min_rate_ = std::min(finished_min_rate_, flow.rate);
  flow.active = false;
  flow.remaining = 0.0;
  flow.rate = 0.0;
  --active_flows_;
  free_slots_.push_back(slot);
  ++counters_.flows_finished;
  engine_.schedule(now + flow.latency, flow.on_delivered);
  requestUpdate();
}

void FlowNetwork::onUpdate(uint64_t /*payload*/) {
  update_scheduled_ = false;
  updateRates();
}

void FlowNetwork::updateRates() {
  if (dirty_links_.empty()) return;
  ++counters_.rate_updates;
  if (++epoch_ == 0) {  // wrapped: forget every old mark
    std::fill(link_visit_.begin(), link_visit_.end(), LinkVisit{});
    std::fill(visit_mark_.begin(), visit_mark_.end(), 0);
    epoch_ = 1;
  }
  // Only finishes since the last update: flows slower than the slowest finished one keep
  // their rates (see the header), so they are left out of the solve.
  const double min_rate = full_update_pending_ ? 0.0 : finished_min_rate_;
  full_update_pending_ = false;
  finished_min_rate_ = kNoRateCap;
  // dirty_links_ is in first-touch order, so components are solved in a reproducible order.
  for (std::size_t i = 0; i < dirty_links_.size(); ++i) {
    const LinkId link = dirty_links_[i];
    dirty_[link] = 0;
    if (link_visit_[link].mark == epoch_ || link_flows_[link].empty()) continue;
    collectComponent(link, min_rate);
    if (!component_flows_.empty()) solveComponent();
  }
  dirty_links_.clear();
}

void FlowNetwork::collectComponent(LinkId start, double min_rate) {
  component_links_.clear();
  component_flows_.clear();
  flow_link_offset_.assign(1, 0);
  flow_link_local_.clear();
  flow_link_multiplicity_.clear();
  capped_.clear();
  base_capacity_.clear();
  link_visit_[start] = LinkVisit{epoch_, 0};
  component_links_.push_back(start);
  // Each component link's entries are read once: the flows at min_rate or faster join the
  // component, the slower (fixed) ones only reduce the capacity the link has for it.
  for (std::size_t i = 0; i < component_links_.size(); ++i) {
    const LinkId current = component_links_[i];
    fixed_rates_.clear();
    for (const LinkEntry& entry : link_flows_[current]) {
      if (visit_mark_[entry.flow] == epoch_) continue;
      const Flow& flow = flows_[entry.flow];
      if (flow.rate < min_rate) {
        fixed_rates_.emplace_back(flow.rate, hops_[entry.hop].multiplicity);
        continue;
      }
      visit_mark_[entry.flow] = epoch_;
      const auto local_flow = static_cast<uint32_t>(component_flows_.size());
      component_flows_.push_back(entry.flow);
      if (flow.rate_cap != kNoRateCap) capped_.emplace_back(flow.rate_cap, local_flow);
      for (uint32_t h = flow.hop_begin; h < flow.hop_begin + flow.hop_count; ++h) {
        const Hop& hop = hops_[h];
        LinkVisit& visit = link_visit_[hop.link];
        if (visit.mark != epoch_) {
          visit = LinkVisit{epoch_, static_cast<uint32_t>(component_links_.size())};
          component_links_.push_back(hop.link);
        }
        flow_link_local_.push_back(visit.local);
        flow_link_multiplicity_.push_back(hop.multiplicity);
      }
      flow_link_offset_.push_back(static_cast<uint32_t>(flow_link_local_.size()));
    }
    // The capacity the link has for the component: all of it, less the rates of the fixed
    // flows, subtracted in increasing order as progressive filling would have frozen them.
    double capacity = capacity_[current];
    if (!fixed_rates_.empty()) {
      std::sort(fixed_rates_.begin(), fixed_rates_.end());
      for (const auto& [rate, multiplicity] : fixed_rates_) capacity -= rate * multiplicity;
    }
    base_capacity_.push_back(capacity);
  }
}

void FlowNetwork::freezeFlow(uint32_t local_flow, double rate) {
  new_rate_[local_flow] = rate;
  for (uint32_t k = flow_link_offset_[local_flow]; k < flow_link_offset_[local_flow + 1]; ++k) {
    const uint32_t link = flow_link_local_[k];
    const uint32_t multiplicity = flow_link_multiplicity_[k];
    residual_[link] -= rate * multiplicity;
    unfrozen_[link] -= multiplicity;
    if (unfrozen_[link] == 0) ++dead_shares_;
  }
}

void FlowNetwork::rateSingleFlow() {
  // What progressive filling comes to with one flow: it freezes at the smallest fair share
  // of its links, or at its cap where the cap is no larger.
  double link_share = kNoRateCap;
  for (std::size_t k = 0; k < flow_link_local_.size(); ++k) {
    const double share = std::max(base_capacity_[flow_link_local_[k]], 0.0) / flow_link_multiplicity_[k];
    link_share = std::min(link_share, share);
  }
  const double cap = flows_[component_flows_[0]].rate_cap;
  new_rate_.assign(1, cap <= link_share ? cap : link_share);
}

void FlowNetwork::popShare() {
  share_heap_.front() = share_heap_.back();
  share_heap_.pop_back();
  siftShareDown();
}

void FlowNetwork::dropDeadShares() {
  std::erase_if(share_heap_, [this](const ShareEntry& entry) { return unfrozen_[entry.local] == 0; });
  std::make_heap(share_heap_.begin(), share_heap_.end(), LargerShare{});
  dead_shares_ = 0;
}

void FlowNetwork::siftShareDown() {
  // The root's key grew (or the root was replaced): move it down to its place.
  const std::size_t size = share_heap_.size();
  if (size == 0) return;
  const ShareEntry moving = share_heap_.front();
  std::size_t pos = 0;
  for (;;) {
    std::size_t child = 2 * pos + 1;
    if (child >= size) break;
    if (child + 1 < size && LargerShare{}(share_heap_[child], share_heap_[child + 1])) ++child;
    if (!LargerShare{}(moving, share_heap_[child])) break;
    share_heap_[pos] = share_heap_[child];
    pos = child;
  }
  share_heap_[pos] = moving;
}

void FlowNetwork::fillRates() {
  const auto num_flows = static_cast<uint32_t>(component_flows_.size());
  const auto num_links = static_cast<uint32_t>(component_links_.size());
  // Links -> flows of the component (CSR), and the solver state per local link.
  link_flow_offset_.assign(num_links + 1, 0);
  for (const uint32_t link : flow_link_local_) ++link_flow_offset_[link + 1];
  for (uint32_t j = 0; j < num_links; ++j) link_flow_offset_[j + 1] += link_flow_offset_[j];
  link_flow_local_.resize(flow_link_local_.size());
  fill_.assign(link_flow_offset_.begin(), link_flow_offset_.end() - 1);
  unfrozen_.assign(num_links, 0);
  for (uint32_t i = 0; i < num_flows; ++i) {
    for (uint32_t k = flow_link_offset_[i]; k < flow_link_offset_[i + 1]; ++k) {
      const uint32_t link = flow_link_local_[k];
      link_flow_local_[fill_[link]++] = i;
      unfrozen_[link] += flow_link_multiplicity_[k];
    }
  }
  residual_.resize(num_links);
  share_heap_.clear();
  for (uint32_t j = 0; j < num_links; ++j) {
    residual_[j] = base_capacity_[j];
    share_heap_.push_back(ShareEntry{residual_[j] / unfrozen_[j], j});
  }
  std::make_heap(share_heap_.begin(), share_heap_.end(), LargerShare{});
  dead_shares_ = 0;
  new_rate_.assign(num_flows, -1.0);
  std::sort(capped_.begin(), capped_.end());

  // Progressive filling: raise all rates together; a link that runs full freezes its flows
  // at its fair share, a flow that reaches its cap freezes at the cap.
  //
  // A link's fair share residual/unfrozen never decreases while flows freeze (a flow
  // freezes at most at the share of each of its links), so each link keeps one heap entry
  // whose key is a lower bound of its share: when the minimum entry turns out to be
  // outdated it is filed again under the current share, otherwise it is the true minimum.
  // The keys with the links' indices are distinct, so the minima come in one order
  // whatever the heap's layout; that is why the entries of links whose flows all froze
  // (most links: a bundle's own links go with it) can be dropped in bulk, in O(1) each,
  // instead of one by one from the top.
  double level = 0.0;
  std::size_t next_capped = 0;
  for (;;) {
    if (dead_shares_ * 2 > share_heap_.size()) dropDeadShares();
    double link_share = kNoRateCap;
    while (!share_heap_.empty()) {
      ShareEntry& top = share_heap_.front();
      if (unfrozen_[top.local] == 0) {
        popShare();
        --dead_shares_;
        continue;
      }
      const double share = std::max(residual_[top.local], 0.0) / unfrozen_[top.local];
      if (share > top.share) {
        top.share = share;
        siftShareDown();
        continue;
      }
      link_share = share;
      break;
    }
    while (next_capped < capped_.size() && new_rate_[capped_[next_capped].second] >= 0.0) ++next_capped;
    if (next_capped < capped_.size() && capped_[next_capped].first <= link_share) {
      level = std::max(level, capped_[next_capped].first);
      freezeFlow(capped_[next_capped].second, level);
      ++next_capped;
      continue;
    }
    if (share_heap_.empty()) break;
    const uint32_t bottleneck = share_heap_.front().local;
    // Rounding may make a later share a hair smaller than the level already reached.
    level = std::max(level, link_share);
    popShare();
    for (uint32_t k = link_flow_offset_[bottleneck]; k < link_flow_offset_[bottleneck + 1]; ++k) {
      const uint32_t flow = link_flow_local_[k];
      if (new_rate_[flow] < 0.0) freezeFlow(flow, level);
    }
    --dead_shares_;  // the bottleneck ran empty too, but it has left the heap already
  }
}

void FlowNetwork::solveComponent() {
  const auto num_flows = static_cast<uint32_t>(component_flows_.size());
  ++counters_.components_solved;
  counters_.flows_rerated += num_flows;
  const SimTime now = engine_.now();
  // A single flow over distinct links (each link once in the component) is the common
  // case of the intra-node flows; it needs none of the solver's structures.
  if (num_flows == 1 && component_links_.size() == flow_link_local_.size()) {
    rateSingleFlow();
  } else {
    fillRates();
  }

  // Bring each flow to `now` at its old rate, publish the new rate, and move the
  // completion times of flows whose rate changed.
  changed_.clear();
  for (uint32_t i = 0; i < num_flows; ++i) {
    const uint32_t slot = component_flows_[i];
    Flow& flow = flows_[slot];
    if (now > flow.last_update) {
      flow.remaining -= flow.rate * static_cast<double>(now - flow.last_update) / kPicosecondsPerSecond;
      if (flow.remaining < 0.0) flow.remaining = 0.0;
      flow.last_update = now;
    }
    const double rate = new_rate_[i];
    assert(rate > 0.0);
    if (rate == flow.rate) continue;
    flow.rate = rate;
    changed_.push_back(slot);
  }
  if (changed_.empty()) return;
  counters_.completions_rescheduled += changed_.size();
  // When most entries move, re-heapify once (O(N)) instead of one sift each (O(k log N)).
  const bool bulk = changed_.size() * 8 > completions_.size();
  const SimTime grain = options_.completion_granularity;
  for (const uint32_t slot : changed_) {
    const Flow& flow = flows_[slot];
    SimTime done = now + transferDuration(flow.remaining, flow.rate);
    if (grain > 1) done = (done + grain - 1) / grain * grain;
    if (bulk) {
      completions_.setUnordered(slot, done);
    } else {
      completions_.set(slot, done);
    }
  }
  if (bulk) completions_.rebuild();
  armCompletionEvent();
}

LinkStats FlowNetwork::linkStats(LinkId link) const {
  LinkStats stats{bytes_carried_[link], busy_time_[link]};
  if (!link_flows_[link].empty()) stats.busy_time += engine_.now() - busy_since_[link];
  return stats;
}

std::vector<FlowId> FlowNetwork::activeFlows() const {
  std::vector<FlowId> result;
  result.reserve(active_flows_);
  for (uint32_t slot = 0; slot < flows_.size(); ++slot) {
    if (flows_[slot].active) result.push_back(slot);
  }
  return result;
}

double FlowNetwork::remainingBytes(FlowId flow_id) const {
  const Flow& flow = flows_[flow_id];
  const double sent = flow.rate * static_cast<double>(engine_.now() - flow.last_update) / kPicosecondsPerSecond;
  return std::max(flow.remaining - sent, 0.0);
}

std::vector<LinkId> FlowNetwork::flowLinks(FlowId flow_id) const {
  assert(isActive(flow_id));
  const Flow& flow = flows_[flow_id];
  std::vector<LinkId> links;
  links.reserve(flow.hop_count);
  for (uint32_t h = flow.hop_begin; h < flow.hop_begin + flow.hop_count; ++h) links.push_back(hops_[h].link);
  return links;
}

}  // namespace trainsim::sim
