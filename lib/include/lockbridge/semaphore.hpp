// lockbridge: a distributed counting semaphore on one Redis key, in Redisson's RSemaphore layout,
// so C++ and Java processes draw from one pool of permits: the key holds the number available
// (absent: none set, none available), and every release announces the new number on
// redisson_sc:{key}, which wakes the waiters of every process.
//
//   lockbridge::Semaphore slots(redis, "uploads");
//   slots.try_set_permits(4);               // once, by whoever sets the pool up
//   slots.acquire();                        // waits up to acquire_timeout
//   upload();
//   slots.release();
//
// Permits have no owner, as in Redisson: a process that dies holding some never gives them back.
// docs/design.md §4.4e, docs/compat.md §5e.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <stop_token>
#include <string>

#include "lockbridge/client.hpp"
#include "lockbridge/deadline.hpp"
#include "lockbridge/export.hpp"
#include "lockbridge/options.hpp"

namespace lockbridge {

namespace detail {
struct AnnouncedKey;
}

struct LOCKBRIDGE_API SemaphoreOptions {
  // How long acquire() waits before Error{timeout}; 0 to 365 days.
  std::chrono::milliseconds acquire_timeout{10000};
  // While waiting, permits are asked for again on every announcement and at least this often: an
  // announcement may never come (the key set by hand, a TTL that ran out). 1 ms to 365 days.
  std::chrono::milliseconds recheck{5000};
  // On a Redis Cluster: the Java fleet's shardedSubscriptionMode (lockbridge/options.hpp).
  ShardedSubscription sharded_subscription = ShardedSubscription::automatic;
  void validate() const;  // throws Error{bad_option}
};

// Thread-safe: a Semaphore holds no state of its own but its names, so one object may be shared.
class LOCKBRIDGE_API Semaphore {
 public:
  // Throws Error{bad_option} for an empty key, bad options or a Redlock Client. Does no I/O.
  Semaphore(Client client, std::string key, SemaphoreOptions options = {});

  // Sets the number of permits only when none is set (trySetPermits): true when set. `permits` >= 0.
  bool try_set_permits(std::int64_t permits);
  // Adds `permits` (negative: takes them away, as Redisson's addPermits), and announces the new
  // number. Returns it.
  std::int64_t add_permits(std::int64_t permits);
  // The permits available now (0 when none is set).
  std::int64_t available() const;
  // Takes every available permit; returns how many.
  std::int64_t drain();

  // Takes `permits` (>= 1) at once or none: one attempt, true when taken.
  [[nodiscard]] bool try_acquire(std::int64_t permits = 1);
  // Waits until `permits` are available and takes them, for at most options().acquire_timeout;
  // then throws Error{timeout}.
  void acquire(std::int64_t permits = 1);
  template <class Rep, class Period>
  [[nodiscard]] bool try_acquire_for(const std::chrono::duration<Rep, Period>& wait, std::int64_t permits = 1,
                                     std::stop_token stop = {}) {
    return acquire_until_steady(deadline_after(wait), permits, std::move(stop));
  }
  template <class Clock, class Duration>
  [[nodiscard]] bool try_acquire_until(const std::chrono::time_point<Clock, Duration>& deadline,
                                       std::int64_t permits = 1, std::stop_token stop = {}) {
    return acquire_until_steady(deadline_at(deadline), permits, std::move(stop));
  }
  // Gives back `permits` (>= 1), and announces the new number.
  void release(std::int64_t permits = 1);

  const std::string& key() const noexcept;
  const SemaphoreOptions& options() const noexcept { return options_; }
  // redisson_sc:{key}, or redisson_sc:key when the key has a '{' (Redisson's prefixName).
  static std::string channel_name(std::string_view key);

 private:
  bool acquire_until_steady(std::chrono::steady_clock::time_point deadline, std::int64_t permits, std::stop_token stop);
  std::shared_ptr<const detail::AnnouncedKey> target_;
  SemaphoreOptions options_;
};

}  // namespace lockbridge
