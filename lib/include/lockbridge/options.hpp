// lockbridge: what a lock is asked to be: its strategy, lease, waiting and safety options.
//
// MutexOptions is given to a Mutex (lockbridge/mutex.hpp) or a MultiMutex; validate() checks it
// without I/O. Each enum has one NameTable (lockbridge/name_table.hpp): to_string() and the
// *_from_string() parsers read the same names, the ones the CLI and JSON output use.
#pragma once

#include <array>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "lockbridge/export.hpp"
#include "lockbridge/legacy_value.hpp"
#include "lockbridge/name_table.hpp"
#include "lockbridge/observer.hpp"
#include "lockbridge/waiting.hpp"

namespace lockbridge {

// The longest lease, timeout or wait any option takes (validate() refuses longer ones): longer ones
// are mistakes, and would overflow steady_clock arithmetic (now + duration, in nanoseconds).
inline constexpr std::chrono::milliseconds kMaxOptionDuration{365LL * 24 * 3600 * 1000};

enum class StrategyKind {
  legacy,    // SETNX + GETSET expiry timestamp, shared with Java jedis-lock fleets
  token,     // SET NX PX with a random token, Lua release and extend
  redisson,  // Redisson's RLock layout (a hash of owner -> count), shared with Java Redisson fleets
};

enum class LegacyPreset {
  faithful,  // exactly jedis-lock 1.0.0 on the wire, flaws included (docs/design.md)
  hardened,  // the same bytes in Redis, plus a safety TTL, owner-checked release and Redis TIME
};

struct LOCKBRIDGE_API LegacyOptions {
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
  // built with one UUID are (its five-argument constructor; docs/compat.md).
  std::string owner;
  // Faithful uuid_ms only: read values as jedis-lock master does (lockbridge::compat::
  // JedisLockMaster). DANGEROUS: a value master cannot read (a bare stamp, a token, garbage) is its
  // NO_LOCK, "expired", and is taken over by GETSET at once, while its real holder still runs
  // (docs/compat.md); a GET that finds the key gone is followed by a GETSET too. Off, the
  // faithful preset throws bad_value for such values and leaves them alone (docs/design.md 5.3).
  bool jedis_lock_master = false;
};

struct LOCKBRIDGE_API TokenOptions {
  // Each acquisition also draws a fencing token (Mutex::fence()): the next value of a counter kept
  // next to the lock (same hash slot), drawn in the acquiring script, so a later acquisition always
  // has a larger fence. The acquire becomes a script instead of SET NX (docs/design.md 4.4).
  bool fencing = false;
  // Written by every acquisition instead of a fresh random token; empty = a fresh token per
  // attempt. Only for peers that lock with one fixed identity (Plen-wang/redis-lock's RedisLocker writes one
  // UUID per process: lockbridge::compat::RedisLocker). Every Mutex given the same value is one
  // owner: its release or extend acts on a lock any of them took.
  std::string fixed_value;
};

// Redisson's ShardedSubscriptionMode (Config / ClusterServersConfig.shardedSubscriptionMode, 3.29+):
// how its objects announce on a Redis Cluster. automatic (Redisson's AUTO, its default) and on:
// SPUBLISH / SSUBSCRIBE on a Redis 7 cluster, as Redisson 3.22+ does there; off: PUBLISH /
// SUBSCRIBE, as Redisson before 3.22 always did. The two never hear each other: it must be the
// Java fleet's. On one server (or Sentinel) Redisson never shards, and neither does lockbridge.
enum class ShardedSubscription { automatic, on, off };

inline constexpr NameTable<ShardedSubscription, 3> kShardedSubscriptionNames{
    std::array<std::pair<ShardedSubscription, std::string_view>, 3>{{{ShardedSubscription::automatic, "auto"},
                                                                     {ShardedSubscription::on, "on"},
                                                                     {ShardedSubscription::off, "off"}}}};

// Whether announcements are sharded (SPUBLISH / SSUBSCRIBE) on this topology.
constexpr bool sharded_on(ShardedSubscription mode, bool on_cluster) noexcept {
  return on_cluster && mode != ShardedSubscription::off;
}

struct LOCKBRIDGE_API RedissonOptions {
  // The <client uuid> of the hash field <client uuid>:<thread id> that names the holder; empty =
  // one random UUID per process. The thread id is a number per Mutex object: in lockbridge one
  // Mutex, not one thread, is one holder, so two Mutex objects never share a field.
  std::string client_id;
  // Fair mode (WaitMode::fair) is Redisson's RFairLock: its queue redisson_lock_queue:{key} and
  // deadline set redisson_lock_timeout:{key}, shared with the Java waiters. fair_wait is the
  // "thread wait time" its deadline arithmetic adds and subtracts: it must equal the Java peers'
  // (Config.fairLockWaitTimeout, 5 minutes by default since Redisson 3.13.3; a Java tryLock(waitTime)
  // uses its own waitTime). A queued waiter that stops asking is passed over once its deadline
  // (about one fair_wait per waiter ahead of it) has passed.
  std::chrono::milliseconds fair_wait{300'000};
  // How releases are announced on a Redis Cluster: the Java fleet's shardedSubscriptionMode.
  ShardedSubscription sharded_subscription = ShardedSubscription::automatic;
};

// After a successful acquire or extend, Redis WAIT until this many replicas have the write, for at
// most `timeout` (the reply is waited for that long on top of ClientOptions::command_timeout). It
// narrows the window in which a failover to a replica that never saw the write loses the lock
// (docs/guarantees.md). Watchdog renewals do not wait.
struct LOCKBRIDGE_API ReplicaAckOptions {
  int replicas = 0;  // 0: no WAIT
  std::chrono::milliseconds timeout{500};
  enum class OnShortfall {
    release,  // fewer acknowledged: release at once and throw Error{no_quorum} (Redisson's default)
    accept,   // keep the lock; Mutex::replicas_acknowledged() says how many did
  };
  OnShortfall on_shortfall = OnShortfall::release;
};

// The watchdog renews a held lock every lease/3 on the Client's renewal thread (one per Client,
// renewals of many locks share a round trip), for as long as the lock is held, up to max_hold.
// Token and hardened legacy; the faithful preset has no extend.
struct LOCKBRIDGE_API WatchdogOptions {
  bool enabled = false;
  // A holder that never unlocks (stuck, or forgotten) keeps the lock at most this long: then the
  // watchdog stops renewing, the lease runs out and the holder is told it was lost.
  std::chrono::milliseconds max_hold{10 * 60 * 1000};
};

struct LOCKBRIDGE_API MutexOptions {
  StrategyKind strategy = StrategyKind::token;
  std::chrono::milliseconds lease{60000};            // how long an acquisition is valid
  std::chrono::milliseconds acquire_timeout{10000};  // how long lock() waits before Error{timeout}; <= 365 days
  RetryPolicy retry;                                 // when a waiting lock() tries again
  WaitMode wait_mode = WaitMode::notify;             // what may bring the next attempt forward
  // Threads of this process waiting for the same key (any Mutex on the same server and key) line
  // up locally: one contends in Redis, and they are served in arrival order.
  bool local_queue = true;
  // WaitMode::fair, and starving waiters in notify mode: a queued waiter that has not asked again
  // for this long (it died, or hangs) is skipped, and a lock handed to it and not claimed is free
  // again after at most this long. Waiters ask at least three times per timeout while queued.
  std::chrono::milliseconds fair_waiter_timeout{5000};
  // WaitMode::notify, token strategy (Mutex and MultiMutex) and hardened legacy: the starvation
  // rule. Every waiter queues in Redis after its first attempt (its first is the uncontended fast
  // path, which may barge). Once the first waiter in the queue has waited this long without the
  // lock (its wait in the local line included), it starves: releases then grant the lock to it
  // instead of freeing it (docs/design.md §10.6). Before that, a release frees the lock and wakes
  // that waiter alone, to race newcomers for it. 0 (the default): waiters starve at once, so a
  // release with a waiter queued always grants it the lock, which measured best in every
  // contended workload (docs/benchmarks.md, "Direct grant"); a long bound (up to 365 days) lets
  // waits barge instead. A positive bound also makes an observed wait report a StarvingEvent
  // when it passes. docs/design.md §10.5.
  std::chrono::milliseconds starvation_after{0};
  // A release gives the lock to a starving waiter (every queued waiter in fair mode) outright: the
  // waiter holds it from that moment, with no claim of its own (docs/design.md §10.6). Until the
  // hold has lasted half of it, the granted lease is at most this long, so a waiter that died (or
  // whose process is too slow to notice its grant) keeps the lock no longer; a hold that lasts is
  // topped up to `lease` by the Client's renewal thread, once (or renewed as usual by the watchdog).
  std::chrono::milliseconds grant_lease{3000};
  // lock() on a Mutex that already holds the lock counts up instead of failing, and the lock is
  // released by the matching last unlock(). Counted in this Mutex object, not per thread.
  bool reentrant = false;
  WatchdogOptions watchdog;
  ReplicaAckOptions replica_ack;
  LegacyOptions legacy;
  TokenOptions token;
  RedissonOptions redisson;
  // Told what this lock does instead of the Client's observer (ClientOptions::observer); null: the
  // Client's. Events go through the Client's observer thread either way (lockbridge/observer.hpp).
  std::shared_ptr<Observer> observer;

  // jedis-lock 1.0.0's defaults: legacy faithful, epoch ms, lease 60 s, timeout 10 s, attempts
  // every 100 ms counted as jedis-lock counts them, polling (its peers never announce releases).
  static MutexOptions jedis_lock_1_0();
  // Redisson RLock.lock()'s defaults: the redisson strategy, a 30 s lease (lockWatchdogTimeout)
  // renewed every 10 s by the watchdog until unlock; waiters wake on Redisson's release message.
  static MutexOptions redisson_lock();
  // Redisson RSpinLock's defaults: RLock's hash, lease and watchdog, but waiters poll with
  // exponential backoff from 1 ms up to 128 ms (its LockOptions.defaults()) and listen for no
  // message: its Java holders never announce a release (docs/compat.md §5g). A release here still
  // announces on RLock's channel, which RLock waiters on the same name hear.
  static MutexOptions redisson_spin_lock();

  // Throws Error{Errc::bad_option} naming the bad field.
  void validate() const;

  // The legacy strategy's faithful preset: exactly jedis-lock 1.0.0, which has no extend, no
  // watchdog, no release announcement and an unconditional DEL for a release.
  bool faithful() const noexcept { return strategy == StrategyKind::legacy && legacy.preset == LegacyPreset::faithful; }
  // Whether the protocol can renew a held lease (extend(), the watchdog): all but the faithful preset.
  bool can_extend() const noexcept { return !faithful(); }
};

inline constexpr NameTable<StrategyKind, 3> kStrategyKindNames{std::array<std::pair<StrategyKind, std::string_view>, 3>{
    {{StrategyKind::legacy, "legacy"}, {StrategyKind::token, "token"}, {StrategyKind::redisson, "redisson"}}}};
inline constexpr NameTable<LegacyPreset, 2> kLegacyPresetNames{std::array<std::pair<LegacyPreset, std::string_view>, 2>{
    {{LegacyPreset::faithful, "faithful"}, {LegacyPreset::hardened, "hardened"}}}};

constexpr std::string_view to_string(StrategyKind kind) noexcept { return kStrategyKindNames.name(kind); }
constexpr std::string_view to_string(LegacyPreset preset) noexcept { return kLegacyPresetNames.name(preset); }
constexpr std::optional<StrategyKind> strategy_kind_from_string(std::string_view name) noexcept {
  return kStrategyKindNames.parse(name);
}
constexpr std::optional<LegacyPreset> legacy_preset_from_string(std::string_view name) noexcept {
  return kLegacyPresetNames.parse(name);
}

}  // namespace lockbridge
