// Redisson's RReadWriteLock layout (RedissonReadLock.java, RedissonWriteLock.java in
// redisson/redisson; docs/design.md §4.4d), as two strategies on one key, one per side of a
// SharedMutex: the lock is a hash with a 'mode' field ('read' or 'write'), a field per reader
// (<client uuid>:<n> -> count) and the writer's (<client uuid>:<n>:write -> count); each reader hold
// has its own timeout key {K}:<field>:rwlock_timeout:<i>, renewed only by its holder, by which an
// unlock tells live readers from dead ones. Both sides announce on redisson_rwlock:{K}: the last
// reader's unlock sends "0", a writer's sends "1" (every Java waiter wakes).
#pragma once

#include <string>
#include <string_view>

#include "strategies/strategy.hpp"

namespace lockbridge::detail {

// What both sides share: the owner field, the channel, running the acquire and unlock scripts
// (each side names its own), inspect, the undo of a lost attempt.
class RedissonRwSide : public LockStrategy {
 public:
  Task<AcquireAttempt> try_acquire(Link& link, std::string_view key, const AttemptRequest& request) final;
  Task<ReleaseOutcome> release(Link& link, std::string_view key, std::string_view value,
                               std::string_view release_channel) final;
  Task<LockInfo> inspect(Link& link, std::string_view key, std::string_view my_value) override;
  Task<void> abandon_attempt(Link& link, std::string_view key) override;
  ReleaseChannel release_channel_of(std::string_view key) const override;
  std::optional<std::string> extend_outcome(const redisReply& reply, std::string_view key,
                                            std::string_view value) const override;

  // redisson_rwlock:{key} (prefixName).
  static std::string channel_name(std::string_view key);

 protected:
  // `field`: this side's field in the hash.
  RedissonRwSide(ScriptCache& scripts, std::string field, const MutexOptions& options, bool on_cluster);
  const char* publish_command() const noexcept { return sharded_ ? "SPUBLISH" : "PUBLISH"; }
  // This side's acquire and unlock script calls.
  virtual ScriptCall acquire_call(std::string_view key, const AttemptRequest& request) const = 0;
  virtual ScriptCall release_call(std::string_view key, std::string_view value,
                                  std::string_view release_channel) const = 0;

  const std::string field_;
  const std::string lease_ms_;  // the lease a partial write unlock re-arms
  const bool sharded_;          // SPUBLISH on a Redis Cluster, as Redisson >= 3.22 does there
};

class RedissonReadSide final : public RedissonRwSide {
 public:
  // `reader_field`: <client uuid>:<n>, shared with the holder's write side.
  RedissonReadSide(const MutexOptions& options, ScriptCache& scripts, bool on_cluster, std::string reader_field);

  ScriptCall extend_call(std::string_view key, std::string_view value, std::chrono::milliseconds lease) const override;

  // Redisson's suffixName(key, field) + ":rwlock_timeout": {key}:<field>:rwlock_timeout, or
  // key:<field>:rwlock_timeout when the key has a '{' already.
  static std::string timeout_prefix(std::string_view key, std::string_view field);
  // What an unlock scans other readers' timeout keys under: {key}, or key when it has a '{'.
  static std::string key_prefix(std::string_view key);
  // The same holder's writer field: it may read while it writes (a downgrade).
  static std::string writer_field(std::string_view reader_field) { return std::string(reader_field) + ":write"; }

 protected:
  ScriptCall acquire_call(std::string_view key, const AttemptRequest& request) const override;
  ScriptCall release_call(std::string_view key, std::string_view value,
                          std::string_view release_channel) const override;

 private:
  const std::string writer_field_;
};

class RedissonWriteSide final : public RedissonRwSide {
 public:
  // `reader_field`: the holder's reader field; this side's is it + ":write".
  RedissonWriteSide(const MutexOptions& options, ScriptCache& scripts, bool on_cluster, std::string_view reader_field);

  ScriptCall extend_call(std::string_view key, std::string_view value, std::chrono::milliseconds lease) const override;

 protected:
  ScriptCall acquire_call(std::string_view key, const AttemptRequest& request) const override;
  ScriptCall release_call(std::string_view key, std::string_view value,
                          std::string_view release_channel) const override;

 private:
  const std::string reader_field_;  // its renewal never cuts this holder's own read hold short
};

}  // namespace lockbridge::detail
