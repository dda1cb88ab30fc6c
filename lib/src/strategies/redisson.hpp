// redisson: Redisson's RLock layout, so C++ and Java processes exclude each other on one lock name
// and wake each other up (docs/design.md 4.4a; RedissonLock.java in redisson/redisson). The key is a
// hash of <client uuid>:<thread id> -> re-entry count with a PEXPIRE on every acquire; a release
// decrements, deletes at zero and PUBLISHes "0" on redisson_lock__channel:{key} (SPUBLISH on a
// Redis Cluster, as Redisson >= 3.22 does there).
//
// In fair mode it is Redisson's RFairLock (RedissonFairLock.java; docs/design.md §4.4b): waiters
// queue in redisson_lock_queue:{key} with deadlines in redisson_lock_timeout:{key}, by the same
// arithmetic as the Java waiters, each listens on its own channel (the lock's + ":" + its field),
// and a release tells the first waiter alone. With fencing it is Redisson's RFencedLock: every
// acquisition draws a token from redisson_lock_token:{key} (docs/design.md §4.4c).
#pragma once

#include "strategies/strategy.hpp"

namespace lockbridge::detail {

// A new owner field: <client uuid>:<a number drawn once per lock object>.
std::string redisson_owner_field(const RedissonOptions& options);

// What the Redisson scripts answer, read the same way for every lock of the family (RLock's
// layout and the read/write lock's sides):
// an acquire's: nil = acquired (its value `field`), else the holder's PTTL;
AcquireAttempt redisson_attempt(const redisReply& reply, std::string_view key, std::string_view field);
// an unlock's: nil = not held by the field, an integer = released;
ReleaseOutcome redisson_release_outcome(const redisReply& reply, std::string_view key);
// a renewal's: 1 = renewed (`value` still held), 0 = no longer held by the field.
std::optional<std::string> redisson_renewed(const redisReply& reply, std::string_view key, std::string_view value);
// The hash at `key` in one round trip: an owner field (a read/write lock's 'mode' names none),
// whether `my_value` is one of them, the TTL.
Task<LockInfo> inspect_redisson_hash(Link& link, std::string_view key, std::string_view my_value);

class RedissonStrategy final : public LockStrategy {
 public:
  RedissonStrategy(const MutexOptions& options, ScriptCache& scripts, bool on_cluster);

  Task<AcquireAttempt> try_acquire(Link& link, std::string_view key, const AttemptRequest& request) override;
  Task<void> leave_queue(Link& link, std::string_view key, std::string_view queued_waiter) override;
  Task<ReleaseOutcome> release(Link& link, std::string_view key, std::string_view value,
                               std::string_view release_channel) override;
  ScriptCall extend_call(std::string_view key, std::string_view value, std::chrono::milliseconds lease) const override;
  std::optional<std::string> extend_outcome(const redisReply& reply, std::string_view key,
                                            std::string_view value) const override;
  Task<LockInfo> inspect(Link& link, std::string_view key, std::string_view my_value) override;
  Task<void> abandon_attempt(Link& link, std::string_view key) override;
  ReleaseChannel release_channel_of(std::string_view key) const override;

  // Redisson's channel name: redisson_lock__channel:{key}, or without the braces when the key
  // already has a hash tag ('{').
  static std::string channel_name(std::string_view key);
  // Redisson's prefixName(prefix, key): prefix:{key}, or prefix:key when the key has a '{' already,
  // so every name of one lock has its hash slot.
  static std::string prefixed(std::string_view prefix, std::string_view key);
  // Redisson's suffixName(key, suffix): {key}:suffix, or key:suffix when the key has a '{' already.
  static std::string suffixed(std::string_view key, std::string_view suffix);
  // The part of suffixName before ":suffix": {key}, or the key itself when it has a '{'.
  static std::string braced(std::string_view key);
  // The fair lock's queue and deadlines.
  static std::string fair_queue_name(std::string_view key) { return prefixed("redisson_lock_queue", key); }
  static std::string fair_deadlines_name(std::string_view key) { return prefixed("redisson_lock_timeout", key); }
  // RFencedLock's token counter.
  static std::string token_name(std::string_view key) { return prefixed("redisson_lock_token", key); }

 private:
  Task<ReleaseOutcome> release_fair(Link& link, std::string_view key, std::string_view value);
  // kRedissonFencedLock's reply: {-1, token} acquired, {pttl, -1} held by another.
  AcquireAttempt fenced_attempt(const redisReply& reply, const ReplyContext& context) const;

  const std::string field_;     // <client uuid>:<thread id>, this Mutex's identity in the hash
  const std::string lease_ms_;  // the lease a partial unlock re-arms (Redisson's internalLockLeaseTime)
  const bool sharded_;          // SPUBLISH / SSUBSCRIBE instead of PUBLISH / SUBSCRIBE
  const bool fair_;             // RFairLock
  const bool fenced_;           // RFencedLock
  const std::string fair_wait_ms_;  // RedissonOptions::fair_wait
};

}  // namespace lockbridge::detail
