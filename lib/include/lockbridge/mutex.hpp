// lockbridge: one distributed lock on one Redis key.
//
// Mutex meets the standard TimedLockable requirements, so std::unique_lock, std::lock_guard and
// std::scoped_lock work with it. One Mutex object is one lease holder and is thread-compatible
// (like std::unique_lock, not like std::mutex): threads and processes contend through different
// Mutex objects on the same key.
//
//   lockbridge::Client redis("redis://127.0.0.1:6379");
//   lockbridge::Mutex m(redis, "orders:42");            // token strategy, 60 s lease
//   std::unique_lock guard(m);                          // waits up to acquire_timeout
//
// Deadlines, lease validity and retry waits use std::chrono::steady_clock.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <system_error>

#include "lockbridge/client.hpp"
#include "lockbridge/deadline.hpp"
#include "lockbridge/error.hpp"
#include "lockbridge/export.hpp"
#include "lockbridge/lock_info.hpp"
#include "lockbridge/options.hpp"

namespace lockbridge {

namespace detail {
class LockCore;
}

// One Mutex object is one lease holder. A moved-from Mutex may only be destroyed or assigned to
// (owns_lock() and valid_for() answer false and zero).
class LOCKBRIDGE_API Mutex {
 public:
  static constexpr std::chrono::hours kNoDeadline = lockbridge::kNoDeadline;

  // Throws Error{bad_option} for an empty key or invalid options. Does no I/O.
  Mutex(Client client, std::string key, MutexOptions options = {});
  ~Mutex();  // releases a held lock; never throws
  Mutex(Mutex&&) noexcept;
  Mutex& operator=(Mutex&&) noexcept;  // releases the lock this object held before
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  // Waits until acquired, for at most options().acquire_timeout; then throws Error{Errc::timeout}.
  // Throws Error on Redis or connection failures, and bad_option if this Mutex already holds it
  // (unless options().reentrant: then it counts one more hold).
  void lock();
  // One attempt. false = someone else holds it. Throws like lock().
  [[nodiscard]] bool try_lock();
  // Retries by options().retry and options().wait_mode until acquired or the policy gives up
  // (then false); the deadline bounds the wait as the policy counts it (lockbridge/waiting.hpp).
  // Waits of 100 years or more (e.g. duration::max()) mean "no deadline".
  // A wait that is not positive (zero, negative, NaN, a time point already past) is one attempt.
  template <class Rep, class Period>
  [[nodiscard]] bool try_lock_for(const std::chrono::duration<Rep, Period>& wait) {
    return try_lock_until_steady(deadline_after(wait));
  }
  template <class Clock, class Duration>
  [[nodiscard]] bool try_lock_until(const std::chrono::time_point<Clock, Duration>& deadline) {
    return try_lock_until_steady(deadline_at(deadline));
  }
  // The same, also ending (false) as soon as `stop` is requested, even while asleep: a wait that
  // another thread (a signal handler's flag, a shutdown) can cancel. A stop already requested makes
  // the call one attempt (none when threads of this process wait ahead of it in the local line). A
  // waiter queued in Redis leaves its queue as on its deadline.
  template <class Rep, class Period>
  [[nodiscard]] bool try_lock_for(const std::chrono::duration<Rep, Period>& wait, std::stop_token stop) {
    return try_lock_until_steady(deadline_after(wait), std::move(stop));
  }
  template <class Clock, class Duration>
  [[nodiscard]] bool try_lock_until(const std::chrono::time_point<Clock, Duration>& deadline, std::stop_token stop) {
    return try_lock_until_steady(deadline_at(deadline), std::move(stop));
  }
  // Releases if held (harmless otherwise); reentrant: only the last of the holds releases. Never
  // throws: a failed or refused release is recorded in last_error() (lease_lost when the key no
  // longer held our value) and passed to the release-error handler.
  void unlock() noexcept;
  // Ends the hold here without releasing it in Redis: no I/O, and the key keeps its value until
  // the lease ends or someone takes it over. For holders that share one identity (the same
  // LegacyOptions::owner or TokenOptions::fixed_value), once another Mutex of that identity has
  // taken the hold over: this one's release would delete the new hold. Harmless when not held.
  void abandon() noexcept;

  // Resets the lease of a held lock to `lease` from now. false (and last_error() = lease_lost,
  // and the loss notice) when the lock is no longer ours. Throws Error on failures, and bad_option
  // for the faithful legacy preset, whose protocol has no extend.
  bool extend(std::chrono::milliseconds lease);

  // true from an acquisition until unlock(), or until the lease is known lost (a renewal or extend
  // found it gone) or ran out.
  bool owns_lock() const noexcept;
  // Remaining lease on the steady clock, measured from the start of the request that acquired or
  // last renewed it; zero when not held or lost.
  std::chrono::milliseconds valid_for() const noexcept;
  // The value in Redis at the last acquisition or renewal (token or timestamp); empty before.
  std::string value() const;
  // The fencing token of the current (or last) acquisition, with TokenOptions::fencing.
  std::optional<std::uint64_t> fence() const noexcept;
  // With MutexOptions::replica_ack: how many replicas acknowledged the last acquire or extend
  // (Redis WAIT's answer); nullopt before, or without replica_ack.
  std::optional<int> replicas_acknowledged() const noexcept;

  // The loss notice. The handler runs once per acquisition whose lease is lost: a renewal or
  // extend found the key deleted or taken over, or the lease ran out unrenewed (no watchdog, the
  // server unreachable, or watchdog.max_hold reached). It runs on the Client's renewal thread (or
  // in extend()), so it must be quick and must not call this Mutex; set it before lock().
  void on_lease_lost(std::function<void(const Error&)> handler);
  // Stop is requested when the current acquisition ends: lost, ran out or released. Work done
  // under the lock can poll it. Before the first acquisition: a token that never stops.
  std::stop_token lease_token() const noexcept;
  // Reads the key without changing it. Throws Error on failures.
  LockInfo inspect() const;

  const std::string& key() const noexcept;
  const MutexOptions& options() const noexcept;
  // The error of the last unlock() or extend(); empty after a clean one.
  std::error_code last_error() const noexcept;
  void on_release_error(std::function<void(const Error&)> handler);

 private:
  bool try_lock_until_steady(std::chrono::steady_clock::time_point deadline, std::stop_token stop = {});
  std::unique_ptr<detail::LockCore> core_;
};

}  // namespace lockbridge
