#include "util/loop_lane.hpp"

#include <utility>

namespace lockbridge::detail {

class LoopLane::Turn {
 public:
  Turn(std::shared_ptr<State> state, std::shared_ptr<Waiter> waiter) noexcept
      : state_(std::move(state)), waiter_(std::move(waiter)) {}
  ~Turn() { waiter_->gone = true; }  // destroyed before (or without) its turn: skipped
  Turn(const Turn&) = delete;
  Turn& operator=(const Turn&) = delete;
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<> handle) noexcept { waiter_->handle = handle; }
  Pass await_resume() noexcept {
    waiter_->gone = true;  // resumed: the turn is the Pass's now, not the waiter's
    return Pass(state_);
  }

 private:
  std::shared_ptr<State> state_;
  std::shared_ptr<Waiter> waiter_;
};

LoopLane::LoopLane(EventLoop& loop) : state_(std::make_shared<State>(loop)) {}

Task<LoopLane::Pass> LoopLane::enter() {
  if (!state_->taken) {
    state_->taken = true;
    co_return Pass(state_);
  }
  auto waiter = std::make_shared<Waiter>();
  state_->waiting.push_back(waiter);
  Turn turn(state_, waiter);
  co_return co_await turn;
}

LoopLane::Pass& LoopLane::Pass::operator=(Pass&& other) noexcept {
  if (this != &other) {
    leave();
    state_ = std::move(other.state_);
  }
  return *this;
}

void LoopLane::Pass::leave() noexcept {
  if (const auto state = std::exchange(state_, nullptr)) State::pass_on(state);
}

void LoopLane::State::pass_on(const std::shared_ptr<State>& state) noexcept {
  while (!state->waiting.empty()) {
    std::shared_ptr<Waiter> next = std::move(state->waiting.front());
    state->waiting.pop_front();
    if (next->gone) continue;
    // Resumed from the loop, never inside the Pass's destructor (its owner may be mid-teardown).
    try {
      state->loop.post([state, next] {
        if (next->gone) {
          pass_on(state);  // cancelled after it was let in: the turn goes on
          return;
        }
        next->handle.resume();
      });
      return;
    } catch (...) {  // out of memory: the lane is freed rather than left taken forever
      next->gone = true;
    }
  }
  state->taken = false;
}

}  // namespace lockbridge::detail
