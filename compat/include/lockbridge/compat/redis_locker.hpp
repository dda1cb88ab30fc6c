// lockbridge::compat::RedisLocker: Plen-wang/redis-lock's RedisLocker (2017, docs/wire-formats.md §3), for C++
// code ported from Java services that lock the same keys (docs/compat.md).
//
//   Java                                                C++
//   redisLocker.acquireLockWithTimeout(50, "product:1:shopping", true)
//                                                       locker.acquireLockWithTimeout(50s, "product:1:shopping", true)
//   redisLocker.releaseLockWithTimeout("product:1:shopping")
//                                                       locker.releaseLockWithTimeout("product:1:shopping")
//
// The key holds the same bytes as RedisLocker's: this process's identity, one random UUID for the
// whole process (RedisLocker's redisIdentityKey), with a TTL of lockKeyExpireSecond. Differences,
// on purpose:
// - RedisLocker sends SETNX, then EXPIRE: a crash between the two leaves a key without a TTL that
//   nobody ever frees (docs/compat.md, RedisLocker). Here it is one atomic SET key uuid NX PX ms,
//   with PX = lockKeyExpireSecond x 1000: the same value and TTL, without the crash window.
// - RedisLocker's release is a plain DEL of whatever is there (docs/wire-formats.md hazard 6):
//   called after its lease ran out, or for a key it never acquired, it deletes another process's
//   lock. Here only a key this RedisLocker acquired is released, and only while it still holds this
//   process's identity (one compare-and-delete script). Otherwise it returns false and leaves the
//   key alone.
// - An empty key, or a lease below one second, throws Error{bad_option} (RedisLocker: Exception,
//   and EXPIRE 0 deletes the key it just set).
// Waiting: 1 + retry_count attempts, wait_lock_time apart (10 x 2000 ms, about 20 s), when isWait;
// one attempt otherwise. The lock belongs to the process, as in RedisLocker: any thread may release
// a key another thread of it acquired through this object. Thread-safe.
#pragma once

#include <chrono>
#include <mutex>
#include <string>
#include <unordered_map>

#include "lockbridge/client.hpp"
#include "lockbridge/export.hpp"
#include "lockbridge/mutex.hpp"

namespace lockbridge::compat {

struct LOCKBRIDGE_API RedisLockerOptions {
  int retry_count = 10;                            // RedisLocker's RetryCount: attempts after the first
  std::chrono::milliseconds wait_lock_time{2000};  // RedisLocker's WaitLockTimeSecond (milliseconds, despite its name)
};

class LOCKBRIDGE_API RedisLocker {
 public:
  // Throws Error{bad_option} for a retry_count outside 0 - 1,000,000 or a wait outside 0 - 365 days.
  explicit RedisLocker(Client client, RedisLockerOptions options = {});
  ~RedisLocker();  // releases the keys it still holds
  RedisLocker(const RedisLocker&) = delete;
  RedisLocker& operator=(const RedisLocker&) = delete;

  // true when acquired. isWait: up to retry_count more attempts, wait_lock_time apart; blocks that
  // long at most, plus round trips. Throws lockbridge::Error (bad_option, wrong_type, io, ...).
  bool acquireLockWithTimeout(std::chrono::seconds lockKeyExpireSecond, const std::string& lockKey, bool isWait);
  // true when this process's lock on the key was deleted; false when this object did not hold the
  // key (nothing is sent), or the key was gone or held by someone else (nothing was deleted).
  // One round trip. Throws lockbridge::Error for Redis failures (as RedisLocker's Jedis would).
  bool releaseLockWithTimeout(const std::string& lockKey);

  // This process's identity, the value of every key it locks (a lowercase UUID). A forked child
  // has its own (lockbridge::process_uuid()).
  static std::string getRedisIdentityKey();
  const RedisLockerOptions& options() const noexcept { return options_; }

 private:
  MutexOptions mutex_options(std::chrono::seconds lease) const;

  Client client_;
  RedisLockerOptions options_;
  std::mutex mutex_;                             // guards held_; never held across a round trip
  std::unordered_map<std::string, Mutex> held_;  // key -> the Mutex holding it for this process
};

}  // namespace lockbridge::compat
