// lockbridge: one lock over several Redis keys, taken all at once or not at all.
//
// MultiMutex acquires every key in one Lua script: either all keys were free and now hold one
// random token with the lease, or nothing was written. It meets the standard TimedLockable
// requirements, so std::unique_lock works with it; like Mutex, one object is one lease holder.
//
//   lockbridge::MultiMutex transfer(redis, {"{bank}:account:7", "{bank}:account:3"});
//   std::unique_lock guard(transfer);   // both accounts, or a wait
//
// - Token strategy only. The legacy protocol (SETNX + GETSET, one key per command) cannot take
//   several keys atomically, and its Java peers lock one key at a time.
// - The keys are deduplicated and sorted. The script is atomic anyway; the fixed order makes
//   "the first blocking key" deterministic, and is the order to follow for anyone who locks
//   subsets of the same keys one by one with Mutex (always ascending), so no two lockers wait on
//   each other in a cycle.
// - Redis Cluster: all keys must hash to one slot; on a redis-cluster:// Client the constructor
//   refuses keys of different slots (Error{bad_option} naming them). Give them one hash tag:
//   "{bank}:account:7". (On a plain redis:// URL of one cluster node the server refuses the
//   script instead: CROSSSLOT, thrown as Error{server_reply}.) Not on a redlock:// Client.
// - Waiting follows options.retry; in notify mode a waiter listens on the release channel of the
//   key that blocked its last attempt. With options.local_queue, waiters of this process for the
//   same set of keys line up locally (a waiter for an overlapping but different set does not).
// - The script looks at every key on each attempt and holds the server meanwhile: keep the key
//   lists short (tens, not thousands).
//
// Deadlines, lease validity and retry waits use std::chrono::steady_clock.
#pragma once

#include <chrono>
#include <memory>
#include <stop_token>
#include <string>
#include <system_error>
#include <vector>

#include "lockbridge/client.hpp"
#include "lockbridge/deadline.hpp"
#include "lockbridge/error.hpp"
#include "lockbridge/export.hpp"
#include "lockbridge/mutex.hpp"

namespace lockbridge {

namespace detail {
class LockCore;
}

// A moved-from MultiMutex may only be destroyed or assigned to (owns_lock() and valid_for() answer
// false and zero).
class LOCKBRIDGE_API MultiMutex {
 public:
  // Throws Error{bad_option} for an empty key list, an empty key, the legacy strategy, invalid
  // options, or options a set of keys does not have yet (watchdog, fair mode, fencing,
  // reentrant). Removes duplicate keys and sorts the rest. Does no I/O.
  MultiMutex(Client client, std::vector<std::string> keys, MutexOptions options = {});
  ~MultiMutex();  // releases held keys; never throws
  MultiMutex(MultiMutex&&) noexcept;
  MultiMutex& operator=(MultiMutex&&) noexcept;  // releases the keys this object held before
  MultiMutex(const MultiMutex&) = delete;
  MultiMutex& operator=(const MultiMutex&) = delete;

  // Waits until every key is acquired, for at most options().acquire_timeout; then throws
  // Error{Errc::timeout}. Throws Error on Redis or connection failures (wrong_type when a key
  // holds another Redis type: nothing is written then), and bad_option if this object already
  // holds the keys.
  void lock();
  // One attempt (one round trip). false = at least one key is held by someone else; nothing was
  // written. Throws like lock().
  [[nodiscard]] bool try_lock();
  // Retries by options().retry and options().wait_mode until acquired or the policy gives up
  // (then false), as Mutex::try_lock_for does. Waits of 100 years or more mean "no deadline".
  template <class Rep, class Period>
  [[nodiscard]] bool try_lock_for(const std::chrono::duration<Rep, Period>& wait) {
    return try_lock_until_steady(deadline_after(wait));
  }
  template <class Clock, class Duration>
  [[nodiscard]] bool try_lock_until(const std::chrono::time_point<Clock, Duration>& deadline) {
    return try_lock_until_steady(deadline_at(deadline));
  }
  // The same, also ending (false) as soon as `stop` is requested, as Mutex's do.
  template <class Rep, class Period>
  [[nodiscard]] bool try_lock_for(const std::chrono::duration<Rep, Period>& wait, std::stop_token stop) {
    return try_lock_until_steady(deadline_after(wait), std::move(stop));
  }
  template <class Clock, class Duration>
  [[nodiscard]] bool try_lock_until(const std::chrono::time_point<Clock, Duration>& deadline, std::stop_token stop) {
    return try_lock_until_steady(deadline_at(deadline), std::move(stop));
  }
  // Releases if held (harmless otherwise): deletes, in one script, every key that still holds our
  // token, and leaves the others alone. Never throws: last_error() is lease_lost when some key no
  // longer held our token, or the failure's code.
  void unlock() noexcept;

  bool owns_lock() const noexcept;
  // Remaining lease on the steady clock, measured from the start of the acquiring request; zero
  // when not held.
  std::chrono::milliseconds valid_for() const noexcept;
  // The keys, deduplicated and sorted.
  const std::vector<std::string>& keys() const noexcept;
  // The token written to every key at the last acquisition; empty before.
  std::string value() const;
  const MutexOptions& options() const noexcept;
  // The error of the last unlock(); empty after a clean one.
  std::error_code last_error() const noexcept;

 private:
  bool try_lock_until_steady(std::chrono::steady_clock::time_point deadline, std::stop_token stop = {});
  std::unique_ptr<detail::LockCore> core_;
};

}  // namespace lockbridge
