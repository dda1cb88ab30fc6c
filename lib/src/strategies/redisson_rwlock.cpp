#include "strategies/redisson_rwlock.hpp"

#include <array>
#include <vector>

#include "strategies/redisson.hpp"
#include "strategies/scripts.hpp"

namespace lockbridge::detail {

// ---- both sides -------------------------------------------------------------------------------

RedissonRwSide::RedissonRwSide(ScriptCache& scripts, std::string field, const MutexOptions& options, bool on_cluster)
    : LockStrategy(scripts),
      field_(std::move(field)),
      lease_ms_(std::to_string(options.lease.count())),
      sharded_(sharded_on(options.redisson.sharded_subscription, on_cluster)) {}

std::string RedissonRwSide::channel_name(std::string_view key) { return RedissonStrategy::prefixed("redisson_rwlock", key); }

ReleaseChannel RedissonRwSide::release_channel_of(std::string_view key) const {
  // "0" and "1" name nobody: every waiter of this process wakes and tries.
  return ReleaseChannel{channel_name(key), sharded_, /*payload_names_waiter=*/false};
}

AcquireAttempt RedissonRwSide::attempt_from(const redisReply& reply, std::string_view key) const {
  AcquireAttempt attempt;
  if (reply.type == REDIS_REPLY_NIL) {
    attempt.acquired = true;
    attempt.value = field_;
  } else if (const std::int64_t pttl = expect_integer(reply, ReplyContext("acquire", key)); pttl >= 0) {
    attempt.holder_remaining = std::chrono::milliseconds(pttl);
  }
  return attempt;
}

ReleaseOutcome RedissonRwSide::release_from(const redisReply& reply, std::string_view key) {
  const ReplyContext context("release", key);
  throw_if_error(reply, context);
  // nil: our field is not there (the lease ran out, or the lock was force-unlocked).
  if (reply.type == REDIS_REPLY_NIL) return ReleaseOutcome::not_ours;
  (void)expect_integer(reply, context);  // 1 deleted (or left to the holder's own reads), 0 others still hold
  return ReleaseOutcome::released;
}

std::optional<std::string> RedissonRwSide::extend_outcome(const redisReply& reply, std::string_view key,
                                                          std::string_view value) const {
  // Both renewals answer 1 renewed, 0 no longer held by the field.
  if (expect_integer(reply, ReplyContext("extend", key)) != 1) return std::nullopt;
  return std::string(value);
}

Task<LockInfo> RedissonRwSide::inspect(Link& link, std::string_view key, std::string_view my_value) {
  const std::array<std::vector<std::string_view>, 2> commands{std::vector<std::string_view>{"HKEYS", key},
                                                              std::vector<std::string_view>{"PTTL", key}};
  const auto replies = co_await link.pipeline(commands);
  const std::string context = describe("inspect", key);
  throw_if_error(*replies[0], context);  // WRONGTYPE: not a read/write lock
  LockInfo info;
  const redisReply& fields = *replies[0];
  for (std::size_t i = 0; i < (fields.type == REDIS_REPLY_ARRAY ? fields.elements : 0); ++i) {
    const std::string_view field = as_view(*fields.element[i]);
    if (field == "mode") continue;
    if (!info.exists) info.value.assign(field);  // a holder (readers may be many)
    info.exists = true;
    if (!my_value.empty() && field == my_value) info.held_by_me = true;
  }
  const std::int64_t pttl = expect_integer(*replies[1], context);
  if (info.exists && pttl >= 0) info.ttl = std::chrono::milliseconds(pttl);
  co_return info;
}

Task<void> RedissonRwSide::abandon_attempt(Link& link, std::string_view key) {
  // The field is this holder's alone: if the lost acquire counted it, one unlock takes it back.
  try {
    const std::string channel = channel_name(key);
    (void)co_await release(link, key, field_, channel);
  } catch (...) {  // best effort: the lease expires anyway
  }
}

// ---- the read side ----------------------------------------------------------------------------

RedissonReadSide::RedissonReadSide(const MutexOptions& options, ScriptCache& scripts, bool on_cluster,
                                   std::string reader_field)
    : RedissonRwSide(scripts, reader_field, options, on_cluster), writer_field_(writer_field(reader_field)) {}

std::string RedissonReadSide::timeout_prefix(std::string_view key, std::string_view field) {
  return key_prefix(key) + ":" + std::string(field) + ":rwlock_timeout";
}

std::string RedissonReadSide::key_prefix(std::string_view key) {
  if (key.find('{') != std::string_view::npos) return std::string(key);
  return "{" + std::string(key) + "}";
}

Task<AcquireAttempt> RedissonReadSide::try_acquire(Link& link, std::string_view key, const AttemptRequest& request) {
  const ScriptCall call{&kRedissonReadLock,
                        {std::string(key), timeout_prefix(key, field_)},
                        {std::to_string(request.lease.count()), field_, writer_field_}};
  const auto replies = co_await run_scripts(link, scripts_, std::span(&call, 1));
  throw_if_script_error(*replies.front(), ReplyContext("acquire", key), call.keys);
  co_return attempt_from(*replies.front(), key);
}

Task<ReleaseOutcome> RedissonReadSide::release(Link& link, std::string_view key, std::string_view value,
                                               std::string_view release_channel) {
  const ScriptCall call{&kRedissonReadUnlock,
                        {std::string(key), std::string(release_channel), timeout_prefix(key, value), key_prefix(key)},
                        {"0", std::string(value), publish_command()}};
  const auto replies = co_await run_scripts(link, scripts_, std::span(&call, 1));
  co_return release_from(*replies.front(), key);
}

ScriptCall RedissonReadSide::extend_call(std::string_view key, std::string_view value,
                                         std::chrono::milliseconds lease) const {
  return ScriptCall{&kRedissonReadRenew,
                    {std::string(key), key_prefix(key)},
                    {std::to_string(lease.count()), std::string(value)}};
}

// ---- the write side ---------------------------------------------------------------------------

RedissonWriteSide::RedissonWriteSide(const MutexOptions& options, ScriptCache& scripts, bool on_cluster,
                                     std::string_view reader_field)
    : RedissonRwSide(scripts, RedissonReadSide::writer_field(reader_field), options, on_cluster),
      reader_field_(reader_field) {}

Task<AcquireAttempt> RedissonWriteSide::try_acquire(Link& link, std::string_view key, const AttemptRequest& request) {
  const ScriptCall call{&kRedissonWriteLock, {std::string(key)}, {std::to_string(request.lease.count()), field_}};
  const auto replies = co_await run_scripts(link, scripts_, std::span(&call, 1));
  throw_if_script_error(*replies.front(), ReplyContext("acquire", key), call.keys);
  co_return attempt_from(*replies.front(), key);
}

Task<ReleaseOutcome> RedissonWriteSide::release(Link& link, std::string_view key, std::string_view value,
                                                std::string_view release_channel) {
  const ScriptCall call{&kRedissonWriteUnlock,
                        {std::string(key), std::string(release_channel)},
                        {"1", lease_ms_, std::string(value), publish_command()}};
  const auto replies = co_await run_scripts(link, scripts_, std::span(&call, 1));
  co_return release_from(*replies.front(), key);
}

ScriptCall RedissonWriteSide::extend_call(std::string_view key, std::string_view value,
                                          std::chrono::milliseconds lease) const {
  return ScriptCall{&kRedissonWriteRenew, {std::string(key)}, {std::to_string(lease.count()), std::string(value), reader_field_}};
}

}  // namespace lockbridge::detail
