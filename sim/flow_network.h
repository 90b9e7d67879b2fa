// Flow-level network model: concurrent flows share directed links by max-min fairness.
//
// A flow is a list of directed links (topology::LinkId), a byte count and a route latency.
// It consumes bandwidth from the moment it starts until its last byte is sent; it is
// delivered `latency` after that. While flows are active, every link's capacity is shared
// among the flows crossing it by max-min fairness (progressive filling): each flow gets
// the largest rate such that no link is over capacity and no flow could go faster without
// slowing a flow that is not faster than it. A flow may also carry its own rate cap (a NIC
// or protocol efficiency limit), which acts as a private link of that capacity.
//
// Cost: when flows start or finish, only the connected components (flows <-> links) that
// contain the touched links are solved again, and all starts/finishes at one simulated
// instant are batched into one solve (an update event at the current time). A solve of a
// component with F flows and L links costs about O(F·hops + L log L), plus O(log N) per
// flow whose rate changed to move its completion time in an indexed heap (rebuilt in
// O(N) when most flows changed). The engine holds only one pending event for the earliest
// completion, not one per flow, so rate changes leave no stale events behind.
//
// When flows only finish (no start, no capacity change since the last update), the solve
// is narrower still: progressive filling runs exactly as before up to the smallest rate r
// of the finished flows (none of them crossed a link that filled below r), so every flow
// slower than r keeps its rate. Only the flows at r or faster that are connected to the
// finished flows' links through such flows are solved again, on the capacity the slower
// flows leave. Flows of equal size finish roughly fastest first, so this set is usually
// small, and a collective whose flows have many different rates (ECMP collisions on an
// oversubscribed fabric) costs O(F) per finish instead of O(component).
//
// Bundles: a flow may stand for several flows that run at one rate (the flows of an
// all-to-all between two nodes, say). Each of its links carries a multiplicity, the number
// of member flows that cross it; max-min fairness then counts the bundle as that many flows
// on the link, all held to the bundle's rate. Its rate, bytes and rate cap are a member's.
// A plain flow has multiplicity 1 on every link.
//
// The network knows nothing of the Cluster: it is built from per-directed-link capacities
// (bytes/s, indexed by LinkId), e.g. linkCapacities(cluster links).
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include "sim/completion_queue.h"
#include "sim/engine.h"
#include "sim/sim_time.h"
#include "topology/link.h"
#include "topology/route.h"

namespace trainsim::sim {

using topology::LinkId;
using FlowId = uint32_t;
// Returned by startFlow for flows that use no bandwidth (no links, or 0 bytes).
inline constexpr FlowId kNoFlow = std::numeric_limits<FlowId>::max();
inline constexpr double kNoRateCap = std::numeric_limits<double>::infinity();

struct LinkStats {
  double bytes_carried = 0.0;  // bytes of finished flows that crossed the link
  SimTime busy_time = 0;       // time with at least one active flow on the link
};

struct FlowNetworkOptions {
  // Send-completion times are rounded up to a multiple of this many picoseconds. 1 keeps
  // timing exact; a coarser grain (e.g. 1000 = 1 ns) lets flows of a symmetric collective
  // whose rates differ only by rounding noise finish at the same instant, so that one
  // solve handles them all, at the cost of at most one grain of delay per rate change.
  SimTime completion_granularity = 1;
};

// Capacities (bytes/s per direction) of topology links, indexed by LinkId.
[[nodiscard]] std::vector<double> linkCapacities(std::span<const topology::Link> links);

class FlowNetwork {
 public:
  struct Counters {
    uint64_t flows_started = 0;   // including flows that use no bandwidth
    uint64_t flows_finished = 0;  // last byte sent (flows that use bandwidth only)
    uint64_t rate_updates = 0;    // batched updates (one per simulated instant with changes)
    uint64_t components_solved = 0;
    uint64_t flows_rerated = 0;  // flows visited by component solves (the solver's work)
    uint64_t completions_rescheduled = 0;
  };

  // `link_capacity_Bps[l]` is the capacity of directed link l in bytes/s (> 0).
  FlowNetwork(Engine& engine, std::vector<double> link_capacity_Bps, FlowNetworkOptions options = {});
  FlowNetwork(const FlowNetwork&) = delete;
  FlowNetwork& operator=(const FlowNetwork&) = delete;

  // Starts a flow now. `on_delivered` is scheduled on the engine `latency` after the
  // flow's last byte is sent. A flow with no links or no bytes uses no bandwidth and is
  // delivered after `latency` alone (kNoFlow is returned). `links` is copied.
  FlowId startFlow(std::span<const LinkId> links, double bytes, SimTime latency, EventTarget on_delivered,
                   double rate_cap_Bps = kNoRateCap) {
    return startFlow(links, {}, bytes, latency, on_delivered, rate_cap_Bps);
  }
  // A bundle: `multiplicity[i]` member flows cross `links[i]` (distinct links); empty: 1 each.
  // `bytes` and `rate_cap_Bps` are a member's; the bundle finishes when its members would.
  FlowId startFlow(std::span<const LinkId> links, std::span<const uint32_t> multiplicity, double bytes, SimTime latency,
                   EventTarget on_delivered, double rate_cap_Bps = kNoRateCap);

  FlowId startFlow(const topology::Route& route, double bytes, EventTarget on_delivered,
                   double rate_cap_Bps = kNoRateCap) {
    return startFlow(route.links, bytes, route.latency_ps, on_delivered, rate_cap_Bps);
  }

  // Changes a link's capacity from now on (degraded link, straggler NIC).
  void setLinkCapacity(LinkId link, double capacity_Bps);

  // Applies pending flow starts/finishes to the rates now. Normally done by an update
  // event the network schedules at the current time; call it to inspect rates at once.
  void updateRates();

  [[nodiscard]] std::size_t linkCount() const { return capacity_.size(); }
  [[nodiscard]] double linkCapacity(LinkId link) const { return capacity_[link]; }
  // Flows crossing the link (a bundle counts once).
  [[nodiscard]] std::size_t linkFlowCount(LinkId link) const { return link_flows_[link].size(); }
  // Bytes carried and busy time (the open busy interval counted up to now).
  [[nodiscard]] LinkStats linkStats(LinkId link) const;

  [[nodiscard]] std::size_t activeFlowCount() const { return active_flows_; }
  [[nodiscard]] bool isActive(FlowId flow) const { return flow < flows_.size() && flows_[flow].active; }
  // Active flows in increasing id order.
  [[nodiscard]] std::vector<FlowId> activeFlows() const;
  // Current rate in bytes/s (as of the last update; 0 before the first one).
  [[nodiscard]] double rate(FlowId flow) const { return flows_[flow].rate; }
  [[nodiscard]] double rateCap(FlowId flow) const { return flows_[flow].rate_cap; }
  [[nodiscard]] double bytes(FlowId flow) const { return flows_[flow].bytes; }
  // Bytes still to send, extrapolated to now at the current rate.
  [[nodiscard]] double remainingBytes(FlowId flow) const;
  // The flow's links in route order (a copy).
  [[nodiscard]] std::vector<LinkId> flowLinks(FlowId flow) const;

  [[nodiscard]] const Counters& counters() const { return counters_; }
  [[nodiscard]] Engine& engine() const { return engine_; }

 private:
  struct Hop {
    LinkId link;
    uint32_t position;      // index of this hop's entry in link_flows_[link]
    uint32_t multiplicity;  // the member flows of its flow that cross its link
  };
  struct LinkEntry {
    uint32_t flow;
    uint32_t hop;  // index into hops_
  };
  struct Flow {
    // Fields read by the solver first.
    double remaining = 0.0;  // bytes to send as of last_update
    double rate = 0.0;
    double rate_cap = kNoRateCap;
    SimTime last_update = 0;
    uint32_t hop_begin = 0;
    uint32_t hop_count = 0;
    double bytes = 0.0;
    SimTime latency = 0;
    EventTarget on_delivered;
    bool active = false;
  };
  struct ShareEntry {
    double share;    // a lower bound of the link's current fair share
    uint32_t local;  // the link's index in the component
  };

  void onCompletionDue(uint64_t payload);
  void onUpdate(uint64_t payload);
  void requestUpdate();
  void armCompletionEvent();
  void markDirty(LinkId link);
  void finishFlow(uint32_t slot);
  uint32_t allocateHops(uint32_t count);
  void releaseHops(uint32_t begin, uint32_t count);
  // Collects the component of `start` made of the flows with rate >= `min_rate` (all
  // flows when min_rate is 0); slower flows stay fixed and only reduce link capacities.
  void collectComponent(LinkId start, double min_rate);
  void solveComponent();
  // Progressive filling over the component's local arrays; leaves the rates in new_rate_.
  void fillRates();
  // The same for a component of one flow crossing distinct links (a closed form).
  void rateSingleFlow();
  void freezeFlow(uint32_t local_flow, double rate);
  // The share heap (a min-heap by LargerShare): removes the root / moves it down.
  void popShare();
  void siftShareDown();
  // Removes the entries of links without unfrozen flows and restores the heap order.
  void dropDeadShares();

  Engine& engine_;
  FlowNetworkOptions options_;
  HandlerId completion_handler_;
  HandlerId update_handler_;
  bool update_scheduled_ = false;
  // Since the last update: whether a flow started or a capacity changed (then touched
  // components are solved in full), and the smallest rate of the flows that finished.
  bool full_update_pending_ = false;
  double finished_min_rate_ = kNoRateCap;
  // Time of the earliest engine event armed for completions (kTimeNever when none).
  SimTime armed_time_ = kTimeNever;

  // Per link.
  std::vector<double> capacity_;
  std::vector<std::vector<LinkEntry>> link_flows_;
  std::vector<double> bytes_carried_;
  std::vector<SimTime> busy_time_;
  std::vector<SimTime> busy_since_;
  std::vector<uint8_t> dirty_;
  // Side by side, as the component search reads both.
  struct LinkVisit {
    uint32_t mark = 0;   // component search epoch
    uint32_t local = 0;  // index in the current component
  };
  std::vector<LinkVisit> link_visit_;

  // Per flow slot.
  std::vector<Flow> flows_;
  std::vector<uint32_t> visit_mark_;  // component search epoch
  std::vector<uint32_t> free_slots_;
  std::size_t active_flows_ = 0;
  std::vector<Hop> hops_;
  std::vector<std::vector<uint32_t>> free_hop_blocks_;  // by block size
  CompletionQueue completions_;                         // when each rated flow sends its last byte

  // The component being solved, copied into dense local arrays (CSR both ways) so that
  // progressive filling runs on contiguous memory.
  std::vector<LinkId> dirty_links_;
  std::vector<LinkId> component_links_;    // local link -> LinkId
  std::vector<uint32_t> component_flows_;  // local flow -> slot
  std::vector<uint32_t> flow_link_offset_;
  std::vector<uint32_t> flow_link_local_;
  std::vector<uint32_t> flow_link_multiplicity_;
  std::vector<uint32_t> link_flow_offset_;
  std::vector<uint32_t> link_flow_local_;
  std::vector<double> base_capacity_;  // per local link: capacity less the fixed (slower) flows' rates
  std::vector<std::pair<double, uint32_t>> fixed_rates_;  // scratch: (rate, multiplicity) of a link's fixed flows
  std::vector<double> residual_;                          // per local link: capacity not yet given to frozen flows
  std::vector<uint32_t> unfrozen_;                        // per local link: member flows without a rate yet
  std::vector<uint32_t> fill_;                            // scratch: CSR fill cursors
  std::vector<double> new_rate_;                          // per local flow; < 0 while not frozen
  std::vector<ShareEntry> share_heap_;
  std::size_t dead_shares_ = 0;                      // entries of share_heap_ whose link has no unfrozen flow
  std::vector<std::pair<double, uint32_t>> capped_;  // (cap, local flow)
  std::vector<uint32_t> changed_;
  std::vector<uint32_t> due_;  // flows whose last byte is sent now
  uint32_t epoch_ = 0;

  Counters counters_;
};

}  // namespace trainsim::sim
