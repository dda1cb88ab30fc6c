#include "strategies/redisson.hpp"

#include <array>
#include <atomic>
#include <vector>

#include "lockbridge/error.hpp"
#include "lockbridge/identity.hpp"
#include "strategies/scripts.hpp"

namespace lockbridge::detail {

namespace {

// The fair lock's deadlines are epoch milliseconds by each client's own clock, as Java's
// System.currentTimeMillis() stamps them: Redis's TIME would disagree with the Java peers' clocks by
// exactly the skew the protocol already suffers from theirs among themselves.
std::string client_now_ms() { return std::to_string(wall_clock_ms()); }

const char* publish_command(bool sharded) { return sharded ? "SPUBLISH" : "PUBLISH"; }

}  // namespace

// Redisson names an owner <client uuid>:<java thread id>. Here the uuid is the process's (or the
// one given in RedissonOptions) and the "thread id" is a number per lock object, since in
// lockbridge one Mutex object, not one thread, is one holder (docs/design.md §4.4a). A forked child
// has its own uuid (process_uuid()): the counter it inherited would repeat its parent's fields.
std::string redisson_owner_field(const RedissonOptions& options) {
  static std::atomic<std::uint64_t> next_holder{1};
  return (options.client_id.empty() ? process_uuid() : options.client_id) + ":" + std::to_string(next_holder++);
}

// Redisson >= 3.22 (ShardedSubscriptionMode.AUTO, its default) publishes and subscribes with
// SPUBLISH / SSUBSCRIBE on a Redis 7 cluster, and with PUBLISH / SUBSCRIBE on one server; the two
// kinds never hear each other, so lockbridge does the same on each topology, unless the Java
// fleet turned sharding off (RedissonOptions::sharded_subscription).
RedissonStrategy::RedissonStrategy(const MutexOptions& options, ScriptCache& scripts, bool on_cluster)
    : LockStrategy(scripts),
      field_(redisson_owner_field(options.redisson)),
      lease_ms_(std::to_string(options.lease.count())),
      sharded_(sharded_on(options.redisson.sharded_subscription, on_cluster)),
      fair_(options.wait_mode == WaitMode::fair),
      fenced_(options.token.fencing),
      fair_wait_ms_(std::to_string(options.redisson.fair_wait.count())) {}

std::string RedissonStrategy::prefixed(std::string_view prefix, std::string_view key) {
  if (key.find('{') != std::string_view::npos) return std::string(prefix) + ":" + std::string(key);
  return std::string(prefix) + ":{" + std::string(key) + "}";
}

std::string RedissonStrategy::braced(std::string_view key) {
  if (key.find('{') != std::string_view::npos) return std::string(key);
  return "{" + std::string(key) + "}";
}

std::string RedissonStrategy::suffixed(std::string_view key, std::string_view suffix) {
  return braced(key) + ":" + std::string(suffix);
}

std::string RedissonStrategy::channel_name(std::string_view key) { return prefixed("redisson_lock__channel", key); }

ReleaseChannel RedissonStrategy::release_channel_of(std::string_view key) const {
  // Its message ("0") names no waiter. A fair lock's waiter listens on a channel of its own.
  std::string name = channel_name(key);
  if (fair_) name += ":" + field_;
  return ReleaseChannel{std::move(name), sharded_, /*payload_names_waiter=*/false};
}

Task<AcquireAttempt> RedissonStrategy::try_acquire(Link& link, std::string_view key, const AttemptRequest& request) {
  // A fair lock's waiter queues under its field, whatever id the waiting loop drew for it: the
  // release tells the first waiter on the channel its field names.
  const std::string lease = std::to_string(request.lease.count());
  const ScriptCall call =
      fair_     ? ScriptCall{&kRedissonFairLock,
                         {std::string(key), fair_queue_name(key), fair_deadlines_name(key)},
                         {lease, field_, fair_wait_ms_, client_now_ms(), request.queued_waiter.empty() ? "" : "1"}}
      : fenced_ ? ScriptCall{&kRedissonFencedLock, {std::string(key), token_name(key)}, {lease, field_}}
                : ScriptCall{&kRedissonLock, {std::string(key)}, {lease, field_}};
  const auto replies = co_await run_scripts(link, scripts_, std::span(&call, 1));
  const ReplyContext context("acquire", key);
  throw_if_script_error(*replies.front(), context, call.keys);  // WRONGTYPE: a string lock at the name
  if (fenced_) co_return fenced_attempt(*replies.front(), context);
  co_return redisson_attempt(*replies.front(), key, field_);
}

AcquireAttempt redisson_attempt(const redisReply& reply, std::string_view key, std::string_view field) {
  AcquireAttempt attempt;
  if (reply.type == REDIS_REPLY_NIL) {
    attempt.acquired = true;
    attempt.value = field;
  } else if (const std::int64_t pttl = expect_integer(reply, ReplyContext("acquire", key)); pttl >= 0) {
    attempt.holder_remaining = std::chrono::milliseconds(pttl);
  }
  return attempt;
}

AcquireAttempt RedissonStrategy::fenced_attempt(const redisReply& reply, const ReplyContext& context) const {
  if (reply.type != REDIS_REPLY_ARRAY || reply.elements != 2) unexpected_reply(reply, "a two-element array", context);
  const std::int64_t pttl = expect_integer(*reply.element[0], context);
  const std::int64_t token = expect_integer(*reply.element[1], context);
  AcquireAttempt attempt;
  if (token >= 0) {
    attempt.acquired = true;
    attempt.value = field_;
    attempt.fence = static_cast<std::uint64_t>(token);
  } else if (pttl >= 0) {
    attempt.holder_remaining = std::chrono::milliseconds(pttl);
  }
  return attempt;
}

Task<void> RedissonStrategy::leave_queue(Link& link, std::string_view key, std::string_view /*queued_waiter*/) {
  if (!fair_) co_return;
  // Redisson's acquireFailed: out of the queue, and a wait less for everyone behind.
  try {
    const ScriptCall call{&kRedissonFairLeave,
                          {fair_queue_name(key), fair_deadlines_name(key), std::string(key)},
                          {field_, fair_wait_ms_, channel_name(key), publish_command(sharded_)}};
    (void)co_await run_scripts(link, scripts_, std::span(&call, 1));
  } catch (...) {  // best effort: a waiter that never asks again is passed over at its deadline
  }
}

Task<ReleaseOutcome> RedissonStrategy::release_fair(Link& link, std::string_view key, std::string_view value) {
  const ScriptCall call{&kRedissonFairUnlock,
                        {std::string(key), fair_queue_name(key), fair_deadlines_name(key), channel_name(key)},
                        {"0", lease_ms_, std::string(value), client_now_ms(), publish_command(sharded_)}};
  const auto replies = co_await run_scripts(link, scripts_, std::span(&call, 1));
  const ReplyContext context("release", key);
  throw_if_script_error(*replies.front(), context, call.keys);
  // nil: someone else holds it; 2: it was gone (the lease ran out).
  if (replies.front()->type == REDIS_REPLY_NIL || expect_integer(*replies.front(), context) == 2) {
    co_return ReleaseOutcome::not_ours;
  }
  co_return ReleaseOutcome::released;  // 1 deleted, 0 re-entries remain (not from this Mutex)
}

Task<ReleaseOutcome> RedissonStrategy::release(Link& link, std::string_view key, std::string_view value,
                                               std::string_view release_channel) {
  // A fair waiter listens on its own channel, which is not where a release announces.
  if (fair_) co_return co_await release_fair(link, key, value);
  const ScriptCall call{&kRedissonUnlock,
                        {std::string(key), std::string(release_channel)},
                        {"0", lease_ms_, std::string(value), publish_command(sharded_)}};
  const auto replies = co_await run_scripts(link, scripts_, std::span(&call, 1));
  co_return redisson_release_outcome(*replies.front(), key);
}

ReleaseOutcome redisson_release_outcome(const redisReply& reply, std::string_view key) {
  const ReplyContext context("release", key);
  throw_if_error(reply, context);
  // nil: our field is not there (the lease ran out, or the lock was force-unlocked).
  if (reply.type == REDIS_REPLY_NIL) return ReleaseOutcome::not_ours;
  // 1 deleted (or, for a read/write lock's writer, left to its own reads); 0 re-entries or other
  // readers remain.
  (void)expect_integer(reply, context);
  return ReleaseOutcome::released;
}

ScriptCall RedissonStrategy::extend_call(std::string_view key, std::string_view value,
                                         std::chrono::milliseconds lease) const {
  return ScriptCall{&kRedissonRenew, {std::string(key)}, {std::to_string(lease.count()), std::string(value)}};
}

std::optional<std::string> RedissonStrategy::extend_outcome(const redisReply& reply, std::string_view key,
                                                            std::string_view value) const {
  return redisson_renewed(reply, key, value);
}

std::optional<std::string> redisson_renewed(const redisReply& reply, std::string_view key, std::string_view value) {
  if (expect_integer(reply, ReplyContext("extend", key)) != 1) return std::nullopt;
  return std::string(value);
}

Task<LockInfo> RedissonStrategy::inspect(Link& link, std::string_view key, std::string_view my_value) {
  return inspect_redisson_hash(link, key, my_value);
}

Task<LockInfo> inspect_redisson_hash(Link& link, std::string_view key, std::string_view my_value) {
  const std::array<std::vector<std::string_view>, 2> commands{std::vector<std::string_view>{"HKEYS", key},
                                                              std::vector<std::string_view>{"PTTL", key}};
  const auto replies = co_await link.pipeline(commands);
  const std::string context = describe("inspect", key);
  throw_if_error(*replies[0], context);  // WRONGTYPE: not a Redisson lock
  LockInfo info;
  const redisReply& fields = *replies[0];
  for (std::size_t i = 0; i < (fields.type == REDIS_REPLY_ARRAY ? fields.elements : 0); ++i) {
    const std::string_view field = as_view(*fields.element[i]);
    if (field == "mode") continue;               // a read/write lock's, not a holder
    if (!info.exists) info.value.assign(field);  // a holder (an RLock has one; readers may be many)
    info.exists = true;
    if (!my_value.empty() && field == my_value) info.held_by_me = true;
  }
  const std::int64_t pttl = expect_integer(*replies[1], context);
  if (info.exists && pttl >= 0) info.ttl = std::chrono::milliseconds(pttl);
  co_return info;
}

Task<void> RedissonStrategy::abandon_attempt(Link& link, std::string_view key) {
  // The field is this Mutex's alone: if the lost acquire counted it, one unlock takes it back.
  try {
    const std::string channel = channel_name(key);
    (void)co_await release(link, key, field_, channel);
  } catch (...) {  // best effort: the key's TTL runs out anyway
  }
}

}  // namespace lockbridge::detail
