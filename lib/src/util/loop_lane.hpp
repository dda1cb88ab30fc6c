// One user at a time of something on the program's loop (the event-driven front's connection for
// transactions), the others waiting their turn in arrival order, as coroutines. A Pass is the turn:
// while it exists nobody else enters, and when it goes the next waiter is let in, on the loop. A
// waiter whose coroutine is destroyed while it waits (its operation was cancelled) is skipped, also
// when it was let in but not yet resumed: the turn then goes on to the next.
#pragma once

#include <coroutine>
#include <deque>
#include <memory>

#include "lockbridge/event_loop.hpp"
#include "util/task.hpp"

namespace lockbridge::detail {

class LoopLane {
  struct State;

 public:
  // `loop` must outlive the lane and its passes.
  explicit LoopLane(EventLoop& loop);

  class Pass {
   public:
    Pass() noexcept = default;
    explicit Pass(std::shared_ptr<State> state) noexcept : state_(std::move(state)) {}
    Pass(Pass&&) noexcept = default;
    Pass& operator=(Pass&& other) noexcept;
    Pass(const Pass&) = delete;
    Pass& operator=(const Pass&) = delete;
    ~Pass() { leave(); }
    explicit operator bool() const noexcept { return state_ != nullptr; }

   private:
    void leave() noexcept;
    std::shared_ptr<State> state_;
  };

  // On the loop: the turn, at once when nobody has it, else once those before have had theirs.
  Task<Pass> enter();

 private:
  struct Waiter {
    std::coroutine_handle<> handle{};
    bool gone = false;  // its coroutine was destroyed
  };
  struct State {
    explicit State(EventLoop& at) noexcept : loop(at) {}
    EventLoop& loop;
    bool taken = false;
    std::deque<std::shared_ptr<Waiter>> waiting;
    // Lets the next live waiter in (posted to the loop), or frees the lane.
    static void pass_on(const std::shared_ptr<State>& state) noexcept;
  };
  class Turn;  // the awaiter

  std::shared_ptr<State> state_;
};

}  // namespace lockbridge::detail
