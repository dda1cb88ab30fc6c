// The strategy interface: every call makes exactly one attempt (one acquire, one release, one
// extend, one inspect), as a coroutine over a Link (redis/link.hpp), so the blocking front and an
// event-driven one run the same protocol. Waiting, retry and deadlines live once, above it, in the
// waiting loop (waiting/wait_loop.hpp). The views a call is given must live until its task ends.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "lockbridge/lock_info.hpp"
#include "lockbridge/options.hpp"
#include "redis/connection.hpp"
#include "redis/link.hpp"
#include "redis/script_runner.hpp"
#include "waiting/release_channel.hpp"

namespace lockbridge::detail {

struct AcquireAttempt {
  bool acquired = false;
  std::string value;  // acquired: the value written to the key
  // Not acquired: how much longer the current holder's lease runs, when the attempt learned it.
  std::optional<std::chrono::milliseconds> holder_remaining;
  // Acquired with fencing (TokenOptions::fencing): the fencing token drawn in the same call.
  std::optional<std::uint64_t> fence;
  // Acquired by finding a lock a release granted this waiter (docs/design.md §10.6): how much of
  // that grant's lease was left when the server looked, which is less than the attempt asked for.
  std::optional<std::chrono::milliseconds> granted_remaining;
};

// What one acquire attempt asks for.
struct AttemptRequest {
  std::chrono::milliseconds lease{};
  // A failed attempt also reports how long the holder's lease still runs, even where that costs
  // the server one more command.
  bool learn_remaining = false;
  // The waiter's id when it waits in a queue in Redis (fair mode, or any wait in notify mode after
  // its first attempt): queued (or its place kept) when the attempt fails. Empty when not queued:
  // a single try, or a wait's first attempt.
  std::string_view queued_waiter;
  // The caller's deadline: no wait of lockbridge's own choosing within the attempt (a cluster's
  // TRYAGAIN backoff) runs past it. A single try's deadline is its start.
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  // Notify mode: how long until the queued waiter starves (MutexOptions::starvation_after, counted
  // from the start of its wait), recorded when it joins the queue; max(): never.
  std::chrono::milliseconds starving_in = std::chrono::milliseconds::max();
  // A queued waiter: how long a release that grants it the lock directly makes the grant's lease
  // (the lease, MutexOptions::grant_lease at most); 0: it asks for no grant (it claims a lock
  // handed to it with its next attempt, as replica_ack must, to wait for the replicas).
  std::chrono::milliseconds grant_lease{0};
  // Which attempt of the wait this is: a grant message carries it, so the waiter trusts only a
  // grant made after its last attempt ran (docs/design.md §10.6).
  std::uint64_t grant_tag = 0;
};

enum class ReleaseOutcome {
  released,
  handed_over,  // granted to a starving queued waiter, which holds it now (docs/design.md §10.5, §10.6)
  not_ours,     // the key was gone or held someone else's value: nothing was deleted
};

class LockStrategy {
 public:
  explicit LockStrategy(ScriptCache& scripts) : scripts_(scripts) {}
  virtual ~LockStrategy() = default;

  // Throws Error (wrong_type for a key of another type, bad_value for a value that cannot be
  // judged; the key is then left as it was).
  virtual Task<AcquireAttempt> try_acquire(Link& link, std::string_view key, const AttemptRequest& request) = 0;
  // Takes a queued waiter that gives up out of the queue, and passes on a lock handed to it and
  // not claimed. Best effort; never throws.
  virtual Task<void> leave_queue(Link& link, std::string_view key, std::string_view queued_waiter);
  // Whether this strategy's waiters queue in notify mode, so that a release wakes only the first
  // and hands the lock to it once it starves (docs/design.md §10.5).
  virtual bool queues_waiters() const noexcept { return false; }
  // Whether a release that names a queued waiter announces it on that waiter's Client's own
  // channel (release channel + ":<ClientState::waiter_tag>"; scripts.hpp, announce()).
  virtual bool announces_to_waiters() const noexcept { return false; }
  // A release that deletes announces it on `release_channel`, where the protocol allows.
  virtual Task<ReleaseOutcome> release(Link& link, std::string_view key, std::string_view value,
                                       std::string_view release_channel) = 0;
  // The value now held (it changes for legacy stamps), or nullopt when the lock is no longer ours.
  // One script call, built by extend_call() and read by extend_outcome(): the watchdog pipelines
  // the same calls for many locks. Both are const and touch no per-attempt state, so the renewal
  // thread may use them while the holder's thread works. Throws bad_option where the protocol has
  // no extend.
  Task<std::optional<std::string>> extend(Link& link, std::string_view key, std::string_view value,
                                          std::chrono::milliseconds lease);
  virtual ScriptCall extend_call(std::string_view key, std::string_view value,
                                 std::chrono::milliseconds lease) const = 0;
  virtual std::optional<std::string> extend_outcome(const redisReply& reply, std::string_view key,
                                                    std::string_view value) const = 0;
  virtual Task<LockInfo> inspect(Link& link, std::string_view key, std::string_view my_value) = 0;
  // After an acquire whose reply was lost: undo it if it did happen, when that can be done safely.
  // Best effort; never throws.
  virtual Task<void> abandon_attempt(Link& link, std::string_view key);
  // Where this strategy's releases of `key` are announced: lockbridge's own channel
  // (companion_keys.hpp), unless the protocol names another.
  virtual ReleaseChannel release_channel_of(std::string_view key) const;

 protected:
  ScriptCache& scripts_;  // the Client's: each script's SHA1 is computed once per Client
};

// `on_cluster`: the lock lives on a Redis Cluster, where a strategy may announce releases as its
// peers do there (Redisson >= 3.22 switches to sharded pub/sub).
std::unique_ptr<LockStrategy> make_strategy(const MutexOptions& options, ScriptCache& scripts, bool on_cluster);

// Runs an owner-checked release script of `key` (kCompareAndHandOff; `keys` starts with `key`): a
// reply of 1 deleted it, 2 granted it to a starving waiter, 0 found it not ours. Views, not a ScriptCall: every lock cycle ends here, and copying
// the names into strings cost more than the rest of the client's work on the release. `args`
// starts with the value to compare. A user whose ACL refuses the script (NOPERM for EVALSHA or
// EVAL) may still have taken the lock with SET NX: the same compare-and-delete then runs in plain
// commands (WATCH, GET, MULTI, DEL, EXEC), without the grant or the release message.
Task<ReleaseOutcome> release_by_script(Link& link, ScriptCache& scripts, const Script& script,
                                       std::span<const std::string_view> keys, std::span<const std::string_view> args);

// AttemptRequest::starving_in as a script argument: whole milliseconds, "never" as a century.
std::string starving_in_arg(const AttemptRequest& request);

// A queued attempt's grant spec (scripts.hpp, kGrantPrelude): how a release makes this waiter the
// holder. `extra`: the key's TTL beyond the lease; `kind`: 't' (the value is `rest`), 's' or 'm'
// (a jedis-lock stamp after the prefix `rest`). Empty when the request asks for no grant.
std::string grant_spec(const AttemptRequest& request, std::chrono::milliseconds extra, bool fenced, char kind,
                       std::string_view rest);

// A queued waiter that gives up: takes it out of the queue (`queue`, `times`) and, when a release
// granted it the lock meanwhile (the record `grant` names it), releases that grant with
// `strategy`, so the next waiter is served at once rather than after the grant's lease. One round
// trip, two when there is a grant. Best effort; never throws.
Task<void> leave_queue_passing_on(LockStrategy& strategy, Link& link, std::string_view key, std::string_view queue,
                                  std::string_view times, std::string_view waiter);

// Takes `waiter` out of a queue in Redis (fair mode's or notify mode's: the list `queue`
// and the hash `deadlines`), in one round trip. Throws Error.
Task<void> remove_from_queue(Link& link, std::string_view queue, std::string_view deadlines, std::string_view waiter);

// GET and PTTL in one round trip. Throws wrong_type for non-string keys.
Task<LockInfo> read_lock_info(Link& link, std::string_view key, std::string_view my_value);

// "acquire 'orders:42'": the context of error messages.
std::string describe(std::string_view operation, std::string_view key);

// The error of `operation` on `key`, naming the key: `error` itself when its message names it
// already (a strategy's own errors do), else the same code with describe(operation, key) in front
// (a connection's failures, e.g. "read reply on redis://...", name only the server).
Error naming_key(const Error& error, std::string_view operation, std::string_view key);

}  // namespace lockbridge::detail
