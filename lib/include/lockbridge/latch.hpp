// lockbridge: a distributed count-down latch on one Redis key, in Redisson's RCountDownLatch
// layout, so C++ and Java processes count down and wait on one latch: the key holds the count,
// absent when the latch is open, and reaching zero announces "0" on
// redisson_countdownlatch__channel__{key}, which wakes every waiter of every process at once.
//
//   lockbridge::Latch ready(redis, "jobs:ready");
//   ready.try_set_count(3);                 // closed until three count_down()s
//   ready.count_down();                     // in each worker
//   ready.wait();                           // elsewhere: until the count is 0
//
// docs/design.md §4.4e has the scripts; docs/compat.md §5e the Java side.
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

struct LOCKBRIDGE_API LatchOptions {
  // While waiting, the count is read again on every announcement and at least this often: an
  // announcement may never come (the key set or deleted by hand, a TTL that ran out). 1 ms to 365 days.
  std::chrono::milliseconds recheck{5000};
  // On a Redis Cluster: the Java fleet's shardedSubscriptionMode (lockbridge/options.hpp).
  ShardedSubscription sharded_subscription = ShardedSubscription::automatic;
  void validate() const;  // throws Error{bad_option}
};

// Thread-safe: a Latch holds no state of its own but its names, so one object may be shared.
class LOCKBRIDGE_API Latch {
 public:
  // Throws Error{bad_option} for an empty key, bad options, a Redlock Client, or on Redis Cluster
  // a key with a '{' (the channel's braces would put it in another slot than the key, which the
  // count-down's script cannot reach). Does no I/O.
  Latch(Client client, std::string key, LatchOptions options = {});

  // Sets the count only when the latch is open (trySetCount): true when set, false when a count
  // was there. `count` must be positive. Throws Error.
  bool try_set_count(std::int64_t count);
  // One count down; at zero the latch opens (the key is deleted) and every waiter wakes. A
  // count-down of an open latch changes nothing. Throws Error (bad_value: the key holds no integer,
  // wrong_type: another type).
  void count_down();
  // The count now: 0 when open. Throws Error.
  std::int64_t count() const;

  // Without waiting: whether the latch is open.
  bool try_wait() const { return count() == 0; }
  // Waits until the latch opens, or `stop` is requested (then false).
  bool wait(std::stop_token stop = {}) const;
  template <class Rep, class Period>
  [[nodiscard]] bool try_wait_for(const std::chrono::duration<Rep, Period>& wait, std::stop_token stop = {}) const {
    return wait_until_steady(deadline_after(wait), std::move(stop));
  }
  template <class Clock, class Duration>
  [[nodiscard]] bool try_wait_until(const std::chrono::time_point<Clock, Duration>& deadline,
                                    std::stop_token stop = {}) const {
    return wait_until_steady(deadline_at(deadline), std::move(stop));
  }

  const std::string& key() const noexcept;
  // redisson_countdownlatch__channel__{key}: braces always, as Redisson builds it.
  static std::string channel_name(std::string_view key);

 private:
  bool wait_until_steady(std::chrono::steady_clock::time_point deadline, std::stop_token stop) const;
  std::shared_ptr<const detail::AnnouncedKey> target_;
  LatchOptions options_;
};

}  // namespace lockbridge
