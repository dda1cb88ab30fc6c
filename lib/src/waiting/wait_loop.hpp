// The one waiting loop, for every lock (Mutex and MultiMutex, on one server, a cluster or a
// quorum): the local line, the retry schedule, release announcements (subscribe once a wait is
// needed, then retry) and fair mode's seat in the queue in Redis. It is a coroutine (wait_steps)
// over what it waits on (a WaitDriver), so the blocking front and an event-driven one run the same
// decisions: the blocking front's driver (BlockingWait) does each step in place.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>

#include "core/lock_target.hpp"
#include "lockbridge/options.hpp"
#include "util/task.hpp"
#include "waiting/local_line.hpp"
#include "waiting/release_channel.hpp"

namespace lockbridge::detail {

struct ClientState;

// What the loop drives: a lock's attempts.
class Contender {
 public:
  virtual ~Contender() = default;
  // One attempt; an acquisition begins the hold. Throws Error.
  virtual Task<TargetAttempt> attempt(const AttemptRequest& request) = 0;
  // Fair and notify mode: a waiter that gives up leaves its queue in Redis. Best effort: the task
  // never throws, and keeps alive what it needs, so that it may also be left to go on by itself
  // (the blocking front runs it in place; an event-driven one does not wait for it).
  virtual Task<void> leave_queue(std::string waiter) = 0;
  // WaitPlan::tells_starving: the wait, queued in Redis, has lasted past starvation_after (`waited`
  // so far). Called once per wait, on the waiting thread.
  virtual void starving(std::chrono::nanoseconds /*waited*/) noexcept {}
  // A release granted this waiter the lock (docs/design.md §10.6): the hold begins, as `attempt`
  // says, without a round trip.
  virtual void hold_granted(const TargetAttempt& attempt, std::chrono::steady_clock::time_point started) = 0;
};

struct WaitPlan {
  const MutexOptions& options;            // retry, wait_mode, lease, fair_waiter_timeout, starvation_after
  ClientState& state;                     // whose subscriber hears the announcements
  std::shared_ptr<LocalLine> line;        // null without MutexOptions::local_queue
  std::optional<ReleaseChannel> channel;  // where releases are announced; nullopt: nowhere (poll)
  // Non-empty: the channel is this Client's own for the lock (ClientState::waiter_tag), and the
  // waiter ids begin with the tag, so releases naming them are announced there.
  std::string waiter_tag;
  // Every failed attempt reports the holder's remaining lease (no fast first attempt needed).
  bool always_learns_remaining = false;
  // The target queues notify mode's waiters (LockTarget::queues_waiters).
  bool queues_waiters = false;
  // Call Contender::starving() when a queued wait passes starvation_after (an observed lock): it
  // costs a starving wait one more wake-up, at the bound, so nothing else pays for it.
  bool tells_starving = false;
  // This lock's last release handed it to a starving waiter: others are queued, so the fast first
  // attempt would only fail; the wait subscribes and joins the queue with its first attempt
  // instead (one round trip less per acquisition while waiters starve).
  bool others_queued = false;
  // The caller's: a stop request ends the wait as its deadline would (false), at once, even asleep.
  std::stop_token stop{};
};

// The loop, awaiting each step of `driver` (the plan and the driver must outlive the task; plan.stop
// is the caller's, and the driver's waits end on it too). It waits in the local line, then attempts
// until acquired (true) or the retry policy gives up at `deadline` (false). Between attempts it sleeps until the
// policy's next attempt is due, unless a release is heard first: from a holder in this process (through the line) or,
// in notify and fair mode, announced by Redis. In notify mode a wait queues in Redis from its second attempt on, so
// that a release wakes the first waiter alone, and once that waiter has waited starvation_after
// (counted from the call, its time in the local line included) the release hands the lock to it
// instead of freeing it (docs/design.md §10.5). A queued waiter (fair, or notify) also attempts at
// least three times per fair_waiter_timeout, each attempt keeping its place in the queue alive,
// and leaves the queue when it gives up, or when plan.stop is requested (then false, at once: no
// attempt is begun after the request). Throws what an attempt throws.
class WaitDriver;
Task<bool> wait_steps(WaitDriver& driver, const WaitPlan& plan, std::chrono::steady_clock::time_point deadline);

}  // namespace lockbridge::detail
