#include "strategies/redisson_rwlock.hpp"

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

Task<AcquireAttempt> RedissonRwSide::try_acquire(Link& link, std::string_view key, const AttemptRequest& request) {
  const ScriptCall call = acquire_call(key, request);
  const auto replies = co_await run_scripts(link, scripts_, std::span(&call, 1));
  throw_if_script_error(*replies.front(), ReplyContext("acquire", key), call.keys);
  co_return redisson_attempt(*replies.front(), key, field_);
}

Task<ReleaseOutcome> RedissonRwSide::release(Link& link, std::string_view key, std::string_view value,
                                             std::string_view release_channel) {
  const ScriptCall call = release_call(key, value, release_channel);
  const auto replies = co_await run_scripts(link, scripts_, std::span(&call, 1));
  co_return redisson_release_outcome(*replies.front(), key);
}

std::optional<std::string> RedissonRwSide::extend_outcome(const redisReply& reply, std::string_view key,
                                                          std::string_view value) const {
  return redisson_renewed(reply, key, value);
}

Task<LockInfo> RedissonRwSide::inspect(Link& link, std::string_view key, std::string_view my_value) {
  return inspect_redisson_hash(link, key, my_value);
}

Task<void> RedissonRwSide::abandon_attempt(Link& link, std::string_view key) {
  // The field is this holder's alone: if the lost acquire counted it, one unlock takes it back.
  try {
    const std::string channel = channel_name(key);
    (void)co_await release(link, key, field_, channel);
  } catch (...) {  // best effort: the key's TTL runs out anyway
  }
}

// ---- the read side ----------------------------------------------------------------------------

RedissonReadSide::RedissonReadSide(const MutexOptions& options, ScriptCache& scripts, bool on_cluster,
                                   std::string reader_field)
    : RedissonRwSide(scripts, reader_field, options, on_cluster), writer_field_(writer_field(reader_field)) {}

std::string RedissonReadSide::timeout_prefix(std::string_view key, std::string_view field) {
  return RedissonStrategy::suffixed(key, std::string(field) + ":rwlock_timeout");
}

std::string RedissonReadSide::key_prefix(std::string_view key) { return RedissonStrategy::braced(key); }

ScriptCall RedissonReadSide::acquire_call(std::string_view key, const AttemptRequest& request) const {
  return ScriptCall{&kRedissonReadLock,
                    {std::string(key), timeout_prefix(key, field_)},
                    {std::to_string(request.lease.count()), field_, writer_field_}};
}

ScriptCall RedissonReadSide::release_call(std::string_view key, std::string_view value,
                                          std::string_view release_channel) const {
  return ScriptCall{&kRedissonReadUnlock,
                    {std::string(key), std::string(release_channel), timeout_prefix(key, value), key_prefix(key)},
                    {"0", std::string(value), publish_command()}};
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

ScriptCall RedissonWriteSide::acquire_call(std::string_view key, const AttemptRequest& request) const {
  return ScriptCall{&kRedissonWriteLock, {std::string(key)}, {std::to_string(request.lease.count()), field_}};
}

ScriptCall RedissonWriteSide::release_call(std::string_view key, std::string_view value,
                                           std::string_view release_channel) const {
  return ScriptCall{&kRedissonWriteUnlock,
                    {std::string(key), std::string(release_channel)},
                    {"1", lease_ms_, std::string(value), publish_command()}};
}

ScriptCall RedissonWriteSide::extend_call(std::string_view key, std::string_view value,
                                          std::chrono::milliseconds lease) const {
  return ScriptCall{&kRedissonWriteRenew, {std::string(key)}, {std::to_string(lease.count()), std::string(value), reader_field_}};
}

}  // namespace lockbridge::detail
