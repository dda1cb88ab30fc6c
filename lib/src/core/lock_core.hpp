// The holder's side of one lock, whatever it is held on (a LockTarget): the current acquisition (a
// Lease, shared with the Client's LeaseKeeper), the reentrant hold count, the place in the
// process-local line, and the handlers. Mutex and MultiMutex are thin fronts over it; waiting is
// the waiting loop's (waiting/wait_loop.hpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <system_error>

#include "core/lock_target.hpp"
#include "lease/lease.hpp"
#include "lockbridge/event_loop.hpp"
#include "lockbridge/options.hpp"
#include "observe/lock_events.hpp"
#include "redis/client_state.hpp"
#include "util/task.hpp"
#include "waiting/local_line.hpp"
#include "waiting/wait_driver.hpp"
#include "waiting/wait_loop.hpp"

namespace lockbridge::detail {

class LockCore final : public Contender {
 public:
  using Clock = std::chrono::steady_clock;

  // `options` are valid (MutexOptions::validate) and suit `target`. `front` names the public type
  // in messages ("Mutex", "MultiMutex"). `loop`: an event-driven front's, on which the lock's own
  // short waits happen (for a renewal in flight) rather than block; null for the blocking front.
  LockCore(std::shared_ptr<ClientState> state, std::unique_ptr<LockTarget> target, MutexOptions options,
           std::string_view front, std::shared_ptr<EventLoop> loop = nullptr);
  ~LockCore() override;  // releases a held lock (every reentrant hold); never throws

  // Whether the lock is held: acquired, not released, and not known lost. No side effects.
  bool holds() const noexcept;

  // One attempt, or one more reentrant hold. Throws Error (bad_option when already held and not
  // reentrant).
  bool try_once();
  // Waits until acquired, or the retry policy gives up at `deadline` or `stop` is requested (then
  // false). Throws Error.
  bool acquire_until(Clock::time_point deadline, std::stop_token stop = {});
  // The acquiring call as a coroutine over a front's WaitDriver (the blocking front's is
  // BlockingWait); `plan` is wait_plan()'s, and outlives the task with the driver. Throws Error.
  Task<bool> acquire_with(WaitDriver& driver, const WaitPlan& plan, Clock::time_point deadline);
  // What the waiting loop needs to know of this lock, and the caller's stop token.
  WaitPlan wait_plan(std::stop_token stop) const;
  // The acquiring call of an event-driven front: the same loop, its steps the loop's (EventWait).
  // Throws Error.
  Task<bool> acquire_on(std::shared_ptr<EventLoop> loop, Clock::time_point deadline, std::stop_token stop);
  // acquire_until(now + acquire_timeout), and Error{timeout} when that gives up.
  void lock();
  // Releases (reentrant: only the last of the holds); `all` releases every hold at once. Never
  // throws: a failed or refused release is recorded in last_error() and passed to the handler.
  void release(bool all = false) noexcept;
  // The same, as a coroutine (never throws).
  Task<void> release_task(bool all = false);
  // Ends the hold here without a release (another holder of the same identity took it over).
  void abandon() noexcept;
  // false (and lease_lost, and the loss notice) when the lock is no longer ours. Throws Error.
  bool extend(std::chrono::milliseconds lease);
  Task<bool> extend_task(std::chrono::milliseconds lease);
  LockInfo inspect() const;
  std::chrono::milliseconds valid_for() const noexcept;

  std::string value() const;
  std::optional<std::uint64_t> fence() const noexcept;
  std::stop_token lease_token() const noexcept;
  std::optional<int> replicas_acknowledged() const noexcept { return target_->replicas_acknowledged(); }
  const LockTarget& target() const noexcept { return *target_; }
  const MutexOptions& options() const noexcept { return options_; }
  std::error_code last_error() const noexcept { return last_error_; }
  void on_release_error(std::function<void(const Error&)> handler) { on_release_error_ = std::move(handler); }
  void on_lease_lost(std::function<void(const Error&)> handler) { on_lease_lost_ = std::move(handler); }

  // Contender: one attempt in Redis, which begins the hold when it acquires.
  Task<TargetAttempt> attempt(const AttemptRequest& request) override;
  Task<void> leave_queue(std::string waiter) override;
  void starving(std::chrono::nanoseconds waited) noexcept override;
  void hold_granted(const TargetAttempt& attempt, Clock::time_point started) override;

 private:
  // Whether the hold is kept: held and not known lost. A hold whose lease was lost behind our
  // back (found by the renewal thread, or run out) is ended here, so the lock can be taken again.
  bool keep_hold_if_valid();
  // lock() while holding: one more hold when reentrant; otherwise refused before any I/O.
  bool hold_again();
  void begin_hold(const TargetAttempt& attempt, Clock::time_point started);
  // Observed locks: the outcome of an acquiring call that began at `started`, its attempts
  // counted in attempts_.
  void tell_acquired(Clock::time_point started) const noexcept;
  void tell_not_acquired(Clock::time_point started, std::error_code error) const noexcept;
  // Observed locks: why extend() found the lease gone (one more read: deleted or taken).
  Task<LeaseLossReason> why_lost_on_extend() const;  // never throws
  // Runs an acquiring call (`acquire()` starts it: a Task<bool>, whether it got the lock) and tells
  // the observer.
  template <class Acquire>
  Task<bool> observed_acquire(Acquire acquire);
  template <class Acquire>
  Task<bool> observing(Acquire acquire);  // observed_acquire's, for an observed lock
  void end_hold() noexcept;               // the hold is over without a release of ours
  // The lease's I/O claim for the holder's release or extend: a renewal in flight finishes first.
  // The blocking front waits for it in place; an event-driven one tries again on its loop's timer.
  Task<Lease::IoClaim> claim_lease_io();
  void report(const Error& error) noexcept;

  const std::shared_ptr<ClientState> state_;
  const std::shared_ptr<LockTarget> target_;  // shared with work that goes on by itself (leave_queue)
  const MutexOptions options_;
  const std::string front_;
  const std::shared_ptr<EventLoop> loop_;  // null: the blocking front
  const std::shared_ptr<LocalLine> line_;  // null without local_queue
  std::uint64_t line_hold_ = 0;            // this lock's hold in line_ (LocalLine::held_here)
  std::shared_ptr<Lease> lease_;           // the current or last acquisition; null before the first
  int hold_count_ = 0;                     // > 0 while held; above 1 only when reentrant
  std::error_code last_error_;
  std::function<void(const Error&)> on_release_error_;
  std::function<void(const Error&)> on_lease_lost_;
  LockEvents events_;               // observes nothing without an observer
  int attempts_ = 0;                // attempts in Redis by the current acquiring call
  bool starved_ = false;            // the current acquiring call's wait starved
  bool handed_over_ = false;        // the last release handed the lock to a starving waiter (WaitPlan)
  Clock::time_point held_since_{};  // the current hold's acquisition
  HoldId hold_id_ = 0;              // observed locks: the current hold's number in events
};

}  // namespace lockbridge::detail
