#include "lockbridge/compat/redis_locker.hpp"

#include <optional>
#include <utility>

#include "lockbridge/identity.hpp"

namespace lockbridge::compat {

RedisLocker::RedisLocker(Client client, RedisLockerOptions options) : client_(std::move(client)), options_(options) {
  mutex_options(std::chrono::seconds(1)).validate();
}

RedisLocker::~RedisLocker() = default;  // each held Mutex releases its key

std::string RedisLocker::getRedisIdentityKey() { return process_uuid(); }

MutexOptions RedisLocker::mutex_options(std::chrono::seconds lease) const {
  MutexOptions options;
  options.strategy = StrategyKind::token;
  options.token.fixed_value = getRedisIdentityKey();
  options.lease = lease;
  options.retry = RetryPolicy::fixed_retries(options_.retry_count, options_.wait_lock_time);
  options.wait_mode = WaitMode::poll;  // RedisLocker's peers never announce a release
  options.local_queue = false;         // each thread tries on its own, as RedisLocker's do
  return options;
}

bool RedisLocker::acquireLockWithTimeout(std::chrono::seconds lockKeyExpireSecond, const std::string& lockKey,
                                         bool isWait) {
  // Checked in seconds: a longer lease would overflow on its way to milliseconds.
  if (lockKeyExpireSecond < std::chrono::seconds(1) ||
      lockKeyExpireSecond > std::chrono::duration_cast<std::chrono::seconds>(kMaxOptionDuration)) {
    throw Error(Errc::bad_option, "RedisLocker: lockKeyExpireSecond must be between 1 s and 365 days, got " +
                                      std::to_string(lockKeyExpireSecond.count()) + " s");
  }
  Mutex mutex(client_, lockKey, mutex_options(lockKeyExpireSecond));
  const bool acquired = isWait ? mutex.try_lock_for(Mutex::kNoDeadline) : mutex.try_lock();
  if (!acquired) return false;
  const std::lock_guard lock(mutex_);
  const auto [entry, inserted] = held_.try_emplace(lockKey, std::move(mutex));  // moves only if inserted
  if (!inserted) {
    // An earlier hold of this key by this process ended in Redis (its TTL ran out, or a peer
    // deleted it), since SET NX has just succeeded. It is the same identity: releasing it would
    // delete the new hold, so it is dropped without a release (no I/O under the lock).
    entry->second.abandon();
    entry->second = std::move(mutex);
  }
  return true;
}

bool RedisLocker::releaseLockWithTimeout(const std::string& lockKey) {
  std::unordered_map<std::string, Mutex>::node_type node;
  {
    const std::lock_guard lock(mutex_);
    node = held_.extract(lockKey);
  }
  if (node.empty()) return false;
  std::optional<Error> failure;
  node.mapped().on_release_error([&failure](const Error& error) { failure = error; });
  node.mapped().unlock();
  if (failure && failure->errc() != Errc::lease_lost) throw *failure;
  return !failure;
}

}  // namespace lockbridge::compat
