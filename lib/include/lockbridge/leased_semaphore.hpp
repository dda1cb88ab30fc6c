// lockbridge: a distributed semaphore whose permits have leases, in Redisson's
// RPermitExpirableSemaphore layout, so C++ and Java processes draw from one pool: the key holds
// the permits available, {key}:timeout each taken permit's id and the end of its lease, and a
// permit whose holder died (or forgot it) comes back when its lease ends.
//
//   lockbridge::LeasedSemaphore workers(redis, "workers");
//   workers.try_set_permits(8);
//   std::string permit = workers.acquire(std::chrono::seconds(30));   // back by itself after 30 s
//   work();
//   workers.release(permit);
//
// docs/design.md §4.4f, docs/compat.md §5f.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "lockbridge/client.hpp"
#include "lockbridge/deadline.hpp"
#include "lockbridge/export.hpp"
#include "lockbridge/options.hpp"

namespace lockbridge {

namespace detail {
struct AnnouncedKey;
}

// How permit ids are kept in {key}:timeout: as Redisson >= 3.17.0 keeps them (16 raw bytes), or as
// older versions did (their 32 hex digits). It must be the Java peers'; ids are handed to callers
// as 32 hex digits either way, as Java hands them.
enum class PermitIds { raw, hex };

struct LOCKBRIDGE_API LeasedSemaphoreOptions {
  // How long acquire() waits before Error{timeout}; 0 to 365 days.
  std::chrono::milliseconds acquire_timeout{10000};
  // While waiting, permits are asked for again on every announcement, when the first lease ends,
  // and at least this often. 1 ms to 365 days.
  std::chrono::milliseconds recheck{5000};
  PermitIds ids = PermitIds::raw;
  // On a Redis Cluster: the Java fleet's shardedSubscriptionMode (lockbridge/options.hpp).
  ShardedSubscription sharded_subscription = ShardedSubscription::automatic;
  void validate() const;  // throws Error{bad_option}
};

// Thread-safe: it holds no state of its own but its names, so one object may be shared.
class LOCKBRIDGE_API LeasedSemaphore {
 public:
  // A permit without a lease: it comes back only when released (Redisson's acquire() without a
  // lease time).
  static constexpr std::chrono::milliseconds kNoLease = std::chrono::milliseconds::max();
  // The most permits one call takes or gives back: the give-back passes every id to one Lua call
  // (unpack), and Lua refuses about 8,000 there.
  static constexpr std::int64_t kMostPermitsAtOnce = 4096;

  // Throws Error{bad_option} for an empty key, bad options or a Redlock Client. Does no I/O.
  LeasedSemaphore(Client client, std::string key, LeasedSemaphoreOptions options = {});

  // Sets the number of permits only when none is set: true when set. `permits` >= 0.
  bool try_set_permits(std::int64_t permits);
  // Adds `permits` (negative: takes them away); returns the permits available after.
  std::int64_t add_permits(std::int64_t permits);
  // The permits available now, after giving back those whose lease ended.
  std::int64_t available();

  // One permit for `lease` (1 ms to 365 days, or kNoLease), at once or not: its id, or nullopt.
  std::optional<std::string> try_acquire(std::chrono::milliseconds lease);
  // Waits for a permit for at most options().acquire_timeout; then throws Error{timeout}.
  std::string acquire(std::chrono::milliseconds lease);
  template <class Rep, class Period>
  std::optional<std::string> try_acquire_for(const std::chrono::duration<Rep, Period>& wait,
                                             std::chrono::milliseconds lease, std::stop_token stop = {}) {
    return acquire_until_steady(deadline_after(wait), lease, std::move(stop));
  }
  // `permits` permits (1 to kMostPermitsAtOnce) at once, each for `lease`, all or none, as
  // Redisson >= 3.23.4's acquire(n, lease): their ids, or none (empty) when they were not free.
  std::vector<std::string> try_acquire(std::int64_t permits, std::chrono::milliseconds lease);
  // Waits until `permits` are free together, for at most options().acquire_timeout; then throws
  // Error{timeout}. A waiter for many is not served before waiters for fewer, as in Redisson.
  std::vector<std::string> acquire(std::int64_t permits, std::chrono::milliseconds lease);
  template <class Rep, class Period>
  std::vector<std::string> try_acquire_for(const std::chrono::duration<Rep, Period>& wait, std::int64_t permits,
                                           std::chrono::milliseconds lease, std::stop_token stop = {}) {
    return acquire_until_steady(deadline_after(wait), permits, lease, std::move(stop));
  }
  // Gives the permit back. true when it was held within its lease; false when the id held no
  // permit, or its lease had ended (it is given back then all the same, as Redisson does).
  bool release(const std::string& permit);
  // Gives the permits back, all or none, as Redisson >= 3.41.0's release(ids): how many
  // (permits.size()), or 0 when any id held no permit within its lease. Then none is given back:
  // those still held stay taken until released one by one, and those whose lease ended come back
  // with the next call that looks at the leases (any but this one). Malformed or repeated ids,
  // none or more than kMostPermitsAtOnce: Error{bad_option}, no I/O. Pass a list as
  // std::vector<std::string>{...}: a braced list of two literals would read as one string.
  std::int64_t release(const std::vector<std::string>& permits);
  // Sets the permit's lease to `lease` from now. false when the id holds no permit (any more).
  bool update_lease(const std::string& permit, std::chrono::milliseconds lease);

  const std::string& key() const noexcept;
  const LeasedSemaphoreOptions& options() const noexcept { return options_; }
  // {key}:timeout, or key:timeout when the key has a '{' (Redisson's suffixName).
  static std::string leases_name(std::string_view key);

 private:
  std::optional<std::string> acquire_until_steady(std::chrono::steady_clock::time_point deadline,
                                                  std::chrono::milliseconds lease, std::stop_token stop);
  std::vector<std::string> acquire_until_steady(std::chrono::steady_clock::time_point deadline, std::int64_t permits,
                                                std::chrono::milliseconds lease, std::stop_token stop);
  std::shared_ptr<const detail::AnnouncedKey> target_;
  LeasedSemaphoreOptions options_;
};

}  // namespace lockbridge
