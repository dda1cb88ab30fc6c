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
#include "lockbridge/legacy_value.hpp"
#include "lockbridge/waiting.hpp"

namespace lockbridge {

namespace detail {
class MutexCore;
}

enum class StrategyKind {
  legacy,  // SETNX + GETSET expiry timestamp, shared with Java jedis-lock fleets
  token,   // SET NX PX with a random token, Lua release and extend
  redisson,  // Redisson's RLock layout (a hash of owner -> count), shared with Java Redisson fleets
};

enum class LegacyPreset {
  faithful,  // exactly jedis-lock 1.0.0 on the wire, flaws included (docs/design.md)
  hardened,  // the same bytes in Redis, plus a safety TTL, owner-checked release and Redis TIME
};

struct LegacyOptions {
  LegacyPreset preset = LegacyPreset::hardened;
  LegacyFormat format = LegacyFormat::epoch_ms;
  // Hardened only: the key's Redis TTL is lease + grace, so a crashed holder's key cannot live
  // forever, yet never vanishes while the holder's lease is still running.
  std::chrono::milliseconds safety_ttl_grace{1000};
  // Faithful only: added to this host's clock wherever the preset reads it, to show (in tests and
  // `lockbridge bench --fault skew`) what a skewed client clock does. The hardened preset reads the
  // server's TIME and has no client clock to skew. Within +-365 days.
  std::chrono::milliseconds clock_offset{0};
  // uuid_ms: the UUID in the values this Mutex writes, and the one it recognises as "mine"; a
  // canonical lowercase UUID, or empty for a random one per Mutex. Mutex objects given the same
  // UUID are one owner to each other and to jedis-lock master peers, as jedis-lock master objects
  // built with one UUID are (its five-argument constructor; wire-formats.md hazard 12).
  std::string owner;
  // Faithful uuid_ms only: read values as jedis-lock master does (lockbridge::compat::
  // JedisLockMaster). DANGEROUS: a value master cannot read (a bare stamp, a token, garbage) is its
  // NO_LOCK, "expired", and is taken over by GETSET at once, while its real holder still runs
  // (wire-formats.md hazard 1); a GET that finds the key gone is followed by a GETSET too. Off, the
  // faithful preset throws bad_value for such values and leaves them alone (docs/design.md 5.3).
  bool jedis_lock_master = false;
};

struct TokenOptions {
  // Each acquisition also draws a fencing token (Mutex::fence()): the next value of a counter kept
  // next to the lock (same hash slot), drawn in the acquiring script, so a later acquisition always
  // has a larger fence. The acquire becomes a script instead of SET NX (docs/design.md 4.4).
  bool fencing = false;
  // Written by every acquisition instead of a fresh random token; empty = a fresh token per
  // attempt. Only for peers that lock with one fixed identity (the seed's RedisLocker writes one
  // UUID per process: lockbridge::compat::RedisLocker). Every Mutex given the same value is one
  // owner: its release or extend acts on a lock any of them took.
  std::string fixed_value;
};

struct RedissonOptions {
  // The <client uuid> of the hash field <client uuid>:<thread id> that names the holder; empty =
  // one random UUID per process. The thread id is a number per Mutex object: in lockbridge one
  // Mutex, not one thread, is one holder, so two Mutex objects never share a field.
  std::string client_id;
};

// The watchdog renews a held lock every lease/3 on the Client's renewal thread (one per Client,
// renewals of many locks share a round trip), for as long as the lock is held, up to max_hold.
// Token and hardened legacy; the faithful preset has no extend.
// After a successful acquire or extend, Redis WAIT until this many replicas have the write, for at
// most `timeout` (keep it below ClientOptions::command_timeout: WAIT holds the connection). It
// narrows the window in which a failover to a replica that never saw the write loses the lock
// (docs/guarantees.md). Watchdog renewals do not wait.
struct ReplicaAckOptions {
  int replicas = 0;  // 0: no WAIT
  std::chrono::milliseconds timeout{500};
  enum class OnShortfall {
    release,  // fewer acknowledged: release at once and throw Error{no_quorum} (Redisson's default)
    accept,   // keep the lock; Mutex::replicas_acknowledged() says how many did
  };
  OnShortfall on_shortfall = OnShortfall::release;
};

struct WatchdogOptions {
  bool enabled = false;
  // A holder that never unlocks (stuck, or forgotten) keeps the lock at most this long: then the
  // watchdog stops renewing, the lease runs out and the holder is told it was lost.
  std::chrono::milliseconds max_hold{10 * 60 * 1000};
};

struct MutexOptions {
  StrategyKind strategy = StrategyKind::token;
  std::chrono::milliseconds lease{60000};             // how long an acquisition is valid
  std::chrono::milliseconds acquire_timeout{10000};   // how long lock() waits before Error{timeout}; <= 365 days
  RetryPolicy retry;                                  // when a waiting lock() tries again
  WaitMode wait_mode = WaitMode::notify;              // what may bring the next attempt forward
  // Threads of this process waiting for the same key (any Mutex on the same server and key) line
  // up locally: one contends in Redis, and they are served in arrival order.
  bool local_queue = true;
  // WaitMode::fair: a queued waiter that has not asked again for this long (it died, or hangs) is
  // skipped. Waiters ask at least three times per timeout while queued.
  std::chrono::milliseconds fair_waiter_timeout{5000};
  // lock() on a Mutex that already holds the lock counts up instead of failing, and the lock is
  // released by the matching last unlock(). Counted in this Mutex object, not per thread.
  bool reentrant = false;
  WatchdogOptions watchdog;
  ReplicaAckOptions replica_ack;
  LegacyOptions legacy;
  TokenOptions token;
  RedissonOptions redisson;

  // jedis-lock 1.0.0's defaults: legacy faithful, epoch ms, lease 60 s, timeout 10 s, attempts
  // every 100 ms counted as jedis-lock counts them, polling (its peers never announce releases).
  static MutexOptions jedis_lock_1_0();
  // Redisson RLock.lock()'s defaults: the redisson strategy, a 30 s lease (lockWatchdogTimeout)
  // renewed every 10 s by the watchdog until unlock; waiters wake on Redisson's release message.
  static MutexOptions redisson_lock();

  // Throws Error{Errc::bad_option} naming the bad field.
  void validate() const;
};

std::string_view to_string(StrategyKind kind) noexcept;
std::string_view to_string(LegacyPreset preset) noexcept;

// What a key holds right now, read without acquiring (one round trip).
struct LockInfo {
  bool exists = false;
  std::string value;                                  // empty when the key does not exist
  std::optional<std::chrono::milliseconds> ttl;       // Redis TTL; nullopt when the key has none
  std::optional<LegacyStamp> stamp;                   // legacy strategy: the parsed value, if it parses
  bool held_by_me = false;                            // the value is the one this Mutex wrote
};

// One Mutex object is one lease holder. A moved-from Mutex may only be destroyed or assigned to
// (owns_lock() and valid_for() answer false and zero).
class Mutex {
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
  bool try_lock_until_steady(std::chrono::steady_clock::time_point deadline);
  std::unique_ptr<detail::MutexCore> core_;
};

}  // namespace lockbridge
