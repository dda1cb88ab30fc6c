// What the one waiting loop (waiting/wait_loop.hpp) waits on, done by the front that runs it: the
// blocking front does each step in place on the caller's thread (waiting/blocking_wait.hpp); an
// event-driven front suspends the loop and resumes it when the step's event comes. The loop's
// decisions (when to attempt, queue, subscribe, sleep and give up) are the loop's alone.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "core/lock_target.hpp"
#include "util/task.hpp"
#include "waiting/release_channel.hpp"

namespace lockbridge::detail {

class WaitDriver {
 public:
  using Clock = std::chrono::steady_clock;
  virtual ~WaitDriver() = default;

  // The lock's side (LockCore, for a Mutex or a MultiMutex).
  // One attempt; an acquisition begins the hold. Throws Error.
  virtual Task<TargetAttempt> attempt(const AttemptRequest& request) = 0;
  // Fair and notify mode: a waiter that gives up leaves its queue in Redis. Best effort, not
  // awaited: the wait has already ended.
  virtual void leave_queue(std::string_view waiter) noexcept = 0;
  // WaitPlan::tells_starving: the queued wait has lasted past starvation_after (`waited` so far).
  virtual void starving(std::chrono::nanoseconds waited) noexcept = 0;
  // A release granted the lock to this waiter (docs/design.md §10.6): the hold begins without a
  // round trip, now (`started`), as `attempt` says.
  virtual void hold_granted(const TargetAttempt& attempt, Clock::time_point started) = 0;

  // The process-local line (WaitPlan::line; only asked when it has one).
  // Takes a place in the line and waits to be first in it: false when `deadline` passed or a stop
  // was requested first.
  virtual Task<bool> wait_for_turn(Clock::time_point deadline) = 0;
  // For the first in line: while a lock of this process holds it, waits until that hold ends, its
  // lease runs out, `until` passes or a stop is requested.
  virtual Task<void> wait_while_held_here(Clock::time_point until) = 0;

  // Release announcements (ReleaseListener's calls; see waiting/release_listener.hpp).
  virtual void listen_if_subscribed() = 0;
  virtual Task<bool> listen(Clock::time_point until) = 0;
  virtual void switch_to(ReleaseChannel channel) = 0;
  virtual bool listening() const noexcept = 0;
  virtual void arm() = 0;
  virtual void drop_if_redirected() = 0;
  // Until a release addressed to `me` (or to every waiter) is heard, `until` passes or a stop is
  // requested; true when a release ended it.
  virtual Task<bool> wait_until(Clock::time_point until, std::string_view me) = 0;
  // The terms of a grant to `me` announced since arm() ("<tag> <fence> <value>"), or nullopt.
  virtual std::optional<std::string> grant_heard(std::string_view me) const = 0;
};

}  // namespace lockbridge::detail
