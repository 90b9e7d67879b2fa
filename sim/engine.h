// The discrete-event engine: a simulated clock and a queue of pending events.
//
// Events are compact PODs (time, sequence, handler id, 64-bit payload); what an event
// does is looked up in a handler table filled by the components that run on the engine
// (the FlowNetwork, the TaskExecutor, ...), so scheduling an event allocates nothing.
// For occasional one-off actions (tests, setup) a std::function can be scheduled too.
//
// Ordering is by (time, sequence number): events at the same time fire in the order they
// were scheduled, so a simulation is bit-for-bit reproducible. There is no global state
// and no wall clock: any number of Engines may run side by side on different threads
// (each Engine itself is single-threaded).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "sim/event_queue.h"
#include "sim/sim_time.h"

namespace trainsim::sim {

// Where an event goes: a handler of the engine and the payload it receives.
struct EventTarget {
  HandlerId handler = 0;
  uint64_t payload = 0;
};

class Engine {
 public:
  // A handler: called with the context it was registered with and the event's payload.
  using HandlerFunction = void (*)(void* context, uint64_t payload);

  Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Registers a handler; the id stays valid for the Engine's lifetime. `context` must
  // outlive every event scheduled for this handler.
  // At most 2^20 handlers per Engine.
  HandlerId addHandler(HandlerFunction function, void* context);
  // Registers `object->Method(payload)` as a handler: addHandler<&FlowNetwork::onEvent>(this).
  template <auto Method, class T>
  HandlerId addHandler(T* object) {
    return addHandler([](void* context, uint64_t payload) { (static_cast<T*>(context)->*Method)(payload); }, object);
  }

  // Schedules `handler(payload)` at absolute time `time` (>= now()). A time past kTimeLimit
  // is not scheduled: the engine marks itself overflowed and run() stops.
  void schedule(SimTime time, HandlerId handler, uint64_t payload) {
    assert(handler < handlers_.size());
    if (time > kTimeLimit) [[unlikely]] {
      overflow();
      return;
    }
    assert(time >= now_);
    queue_.push(Event(time, next_sequence_++, handler, payload));
  }
  void schedule(SimTime time, EventTarget target) { schedule(time, target.handler, target.payload); }
  void scheduleAfter(SimTime delay, HandlerId handler, uint64_t payload) {
    assert(delay >= 0);
    if (delay > kTimeLimit - now_) [[unlikely]] {
      overflow();
      return;
    }
    schedule(now_ + delay, handler, payload);
  }
  void scheduleAfter(SimTime delay, EventTarget target) { scheduleAfter(delay, target.handler, target.payload); }

  // Wraps a std::function as an EventTarget that may be scheduled once (then it is
  // released). Allocates; meant for tests, setup and rare events, not per-task work.
  EventTarget makeCallback(std::function<void()> function);
  void at(SimTime time, std::function<void()> function) { schedule(time, makeCallback(std::move(function))); }
  void after(SimTime delay, std::function<void()> function) { scheduleAfter(delay, makeCallback(std::move(function))); }

  // Calls a handler right now, without going through the queue.
  void invoke(EventTarget target) {
    assert(target.handler < handlers_.size());
    const Handler& h = handlers_[target.handler];
    h.function(h.context, target.payload);
  }

  [[nodiscard]] SimTime now() const { return now_; }

  // Fires the earliest pending event; false when there was none.
  bool step();
  // Fires events until the queue is empty or stop() is called; returns now().
  SimTime run();
  // Fires every event with time <= limit (unless stop() is called), then advances the
  // clock to `limit` if it is not there yet and no stop was requested. Returns now().
  SimTime runUntil(SimTime limit);
  // Makes run()/runUntil() return after the event being processed.
  void stop() { stop_requested_ = true; }
  // Whether an event was asked for past kTimeLimit (and dropped): the run's times are void.
  [[nodiscard]] bool overflowed() const { return overflowed_; }

  [[nodiscard]] bool idle() const { return queue_.empty(); }
  [[nodiscard]] std::size_t pendingEvents() const { return queue_.size(); }
  // Time of the next pending event, kTimeNever when none.
  [[nodiscard]] SimTime nextEventTime() const { return queue_.empty() ? kTimeNever : queue_.top().time; }
  [[nodiscard]] uint64_t eventsProcessed() const { return events_processed_; }
  void reserveEvents(std::size_t n) { queue_.reserve(n); }

 private:
  struct Handler {
    HandlerFunction function;
    void* context;
  };

  void fire(const Event& event) {
    now_ = event.time;
    ++events_processed_;
    const Handler& h = handlers_[event.handler()];
    h.function(h.context, event.payload);
  }
  void runCallback(uint64_t slot);
  void overflow() {
    overflowed_ = true;
    stop_requested_ = true;
  }

  SimTime now_ = 0;
  uint64_t next_sequence_ = 0;
  uint64_t events_processed_ = 0;
  bool stop_requested_ = false;
  bool overflowed_ = false;
  EventQueue queue_;
  std::vector<Handler> handlers_;
  HandlerId callback_handler_ = 0;
  std::vector<std::function<void()>> callbacks_;
  std::vector<uint32_t> free_callback_slots_;
};

}  // namespace trainsim::sim
