#include "sim/engine.h"

#include <utility>

namespace trainsim::sim {

Engine::Engine() { callback_handler_ = addHandler<&Engine::runCallback>(this); }

HandlerId Engine::addHandler(HandlerFunction function, void* context) {
  assert(function != nullptr);
  assert(handlers_.size() <= Event::kHandlerMask);
  handlers_.push_back(Handler{function, context});
  return static_cast<HandlerId>(handlers_.size() - 1);
}

EventTarget Engine::makeCallback(std::function<void()> function) {
  assert(function);
  uint32_t slot;
  if (!free_callback_slots_.empty()) {
    slot = free_callback_slots_.back();
    free_callback_slots_.pop_back();
    callbacks_[slot] = std::move(function);
  } else {
    slot = static_cast<uint32_t>(callbacks_.size());
    callbacks_.push_back(std::move(function));
  }
  return EventTarget{callback_handler_, slot};
}

void Engine::runCallback(uint64_t slot) {
  assert(slot < callbacks_.size() && callbacks_[slot]);
  // Move out first: the callback may schedule callbacks (and grow callbacks_).
  std::function<void()> function = std::move(callbacks_[slot]);
  callbacks_[slot] = nullptr;
  free_callback_slots_.push_back(static_cast<uint32_t>(slot));
  function();
}

bool Engine::step() {
  if (queue_.empty()) return false;
  fire(queue_.pop());
  return true;
}

SimTime Engine::run() {
  stop_requested_ = overflowed_;
  while (!queue_.empty() && !stop_requested_) fire(queue_.pop());
  return now_;
}

SimTime Engine::runUntil(SimTime limit) {
  assert(limit >= now_);
  stop_requested_ = overflowed_;
  while (!queue_.empty() && !stop_requested_ && queue_.top().time <= limit) fire(queue_.pop());
  if (!stop_requested_ && limit != kTimeNever && now_ < limit) now_ = limit;
  return now_;
}

}  // namespace trainsim::sim
