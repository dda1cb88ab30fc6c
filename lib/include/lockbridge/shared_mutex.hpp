// lockbridge: a distributed read/write lock on one Redis key, in Redisson's RReadWriteLock layout,
// so C++ and Java processes share one lock name: readers hold together, a writer alone.
//
// SharedMutex meets the standard SharedTimedLockable and TimedLockable requirements, so
// std::shared_lock and std::unique_lock work with it. Like Mutex, one SharedMutex object is one
// holder (a Java thread, to the Java peers) and is thread-compatible: threads and processes
// contend through different SharedMutex objects on the same key. One object may hold both sides:
// a writer that takes the read side too keeps reading after its unlock() (a downgrade); a reader
// cannot upgrade.
//
//   lockbridge::Client redis("redis://127.0.0.1:6379");
//   lockbridge::SharedMutex config(redis, "config");   // Redisson's defaults: 30 s lease, watchdog
//   {
//     std::shared_lock reading(config);                // many readers at once
//   }
//   {
//     std::unique_lock writing(config);                // no reader, no other writer
//   }
//
// docs/design.md §4.4d has the layout, the scripts and how they differ from Redisson's.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <stop_token>
#include <string>
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

class LOCKBRIDGE_API SharedMutex {
 public:
  // `options` as for Mutex, with the redisson strategy (Redisson's own defaults:
  // MutexOptions::redisson_lock()); both sides use them. Throws Error{bad_option} for an empty key,
  // invalid options, another strategy, fair mode or fencing (Redisson's read/write lock has
  // neither), and a Redlock Client. local_queue does not apply: this process's readers must hold
  // together. Does no I/O.
  SharedMutex(Client client, std::string key, MutexOptions options = MutexOptions::redisson_lock());
  ~SharedMutex();  // releases what it holds; never throws
  SharedMutex(SharedMutex&&) noexcept;
  SharedMutex& operator=(SharedMutex&&) noexcept;
  SharedMutex(const SharedMutex&) = delete;
  SharedMutex& operator=(const SharedMutex&) = delete;

  // ---- exclusive (the write side) ----
  // As Mutex's: waits up to acquire_timeout, then throws Error{timeout}. Each acquiring call
  // throws Error{bad_option} at once while this object holds the read side: a reader cannot
  // upgrade (it would wait for itself).
  void lock();
  [[nodiscard]] bool try_lock();
  template <class Rep, class Period>
  [[nodiscard]] bool try_lock_for(const std::chrono::duration<Rep, Period>& wait, std::stop_token stop = {}) {
    return try_lock_until_steady(false, deadline_after(wait), std::move(stop));
  }
  template <class Clock, class Duration>
  [[nodiscard]] bool try_lock_until(const std::chrono::time_point<Clock, Duration>& deadline,
                                    std::stop_token stop = {}) {
    return try_lock_until_steady(false, deadline_at(deadline), std::move(stop));
  }
  // Releases the write side (the read side stays, if held: a downgrade). Called while only the
  // read side is held, it releases nothing and last_error() says bad_option.
  void unlock() noexcept;

  // ---- shared (the read side) ----
  void lock_shared();
  [[nodiscard]] bool try_lock_shared();
  template <class Rep, class Period>
  [[nodiscard]] bool try_lock_shared_for(const std::chrono::duration<Rep, Period>& wait, std::stop_token stop = {}) {
    return try_lock_until_steady(true, deadline_after(wait), std::move(stop));
  }
  template <class Clock, class Duration>
  [[nodiscard]] bool try_lock_shared_until(const std::chrono::time_point<Clock, Duration>& deadline,
                                           std::stop_token stop = {}) {
    return try_lock_until_steady(true, deadline_at(deadline), std::move(stop));
  }
  // Releases the read side; the same rule the other way round.
  void unlock_shared() noexcept;

  // Whether this object holds the write side, the read side (each: acquired, not released, not
  // known lost).
  bool owns_lock() const noexcept;
  bool owns_shared() const noexcept;
  // Remaining lease of a side; zero when not held.
  std::chrono::milliseconds valid_for() const noexcept;
  std::chrono::milliseconds valid_for_shared() const noexcept;

  // The loss notice of either side (the Error names the key); as Mutex::on_lease_lost.
  void on_lease_lost(std::function<void(const Error&)> handler);
  void on_release_error(std::function<void(const Error&)> handler);
  // The error of the last unlock() or unlock_shared(); empty after a clean one.
  std::error_code last_error() const noexcept;
  // Reads the key without changing it: `value` is one owner field (a reader's, or the writer's
  // "<uuid>:<n>:write"), held_by_me whether either side of this object holds it. Throws Error.
  LockInfo inspect() const;

  const std::string& key() const noexcept;
  const MutexOptions& options() const noexcept;

 private:
  bool try_lock_until_steady(bool shared, std::chrono::steady_clock::time_point deadline, std::stop_token stop);
  std::unique_ptr<detail::LockCore> writer_;
  std::unique_ptr<detail::LockCore> reader_;
  std::error_code last_error_;
};

}  // namespace lockbridge
