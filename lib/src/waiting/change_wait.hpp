// How an event-driven waiter waits, without a thread: it suspends until `ready()` holds (asked at
// once, and again whenever its source says something changed: a release announced, the
// subscription answered, its turn come in the local line), until `until` passes, or until `stop`
// is requested, and is resumed on its loop with what ready() said last. The source's threads only
// post to the loop; every check and the resumption happen there. A waiter whose coroutine is destroyed while it waits
// (its operation was cancelled) is never resumed, and leaves nothing armed.
#pragma once

#include <chrono>
#include <coroutine>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>

#include "lockbridge/event_loop.hpp"
#include "util/task.hpp"

namespace lockbridge::detail {

// Where a ChangeWait hears that something changed: called with the function to call on each change
// (from any thread, perhaps with the source's mutex held: it only posts to the loop), and with an
// empty one to stop. Empty: nothing to hear (a plain sleep until `until` or the stop).
using ChangeSource = std::function<void(std::function<void()>)>;

class ChangeWait {
 public:
  using Clock = std::chrono::steady_clock;
  // `ready` is asked on the loop, and must not block.
  ChangeWait(std::shared_ptr<EventLoop> loop, ChangeSource source, Clock::time_point until, std::stop_token stop,
             std::function<bool()> ready);
  ~ChangeWait();
  ChangeWait(const ChangeWait&) = delete;
  ChangeWait& operator=(const ChangeWait&) = delete;

  bool await_ready();
  void await_suspend(std::coroutine_handle<> waiting);
  bool await_resume() const noexcept;

 private:
  struct State;
  static void finish(const std::shared_ptr<State>& state, bool result);
  static void check(const std::shared_ptr<State>& state);

  std::shared_ptr<State> state_;
};

// A plain sleep on the loop for `pause` (a ChangeWait that hears nothing and is never ready).
Task<void> sleep_on(std::shared_ptr<EventLoop> loop, ChangeWait::Clock::duration pause);

}  // namespace lockbridge::detail
