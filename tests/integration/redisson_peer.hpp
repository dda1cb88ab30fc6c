// The Java side of Redisson's RLock protocol, played by raw commands written from Redisson's
// public source (RedissonLock.java in redisson/redisson; not from lockbridge's scripts), for tests that check
// lockbridge's redisson strategy against it: Redisson's lock and unlock scripts, its channel name,
// and a subscriber such as a Redisson waiter opens.
#pragma once

#include <hiredis/hiredis.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lockbridge::testing {

// A Java owner field: <client uuid>:<thread id>.
inline constexpr char kJavaField[] = "8b0c2a1e-0000-4000-8000-000000000000:57";

// redisson_lock__channel:{key} (the key has no hash tag in these tests).
std::string redisson_channel(std::string_view key);

// tryLockInnerAsync as an EVAL command: nil = acquired, else the holder's PTTL.
std::vector<std::string> redisson_lock_command(std::string_view key, std::string_view field = kJavaField,
                                               std::string_view lease_ms = "60000");
// unlockInnerAsync (3.22 layout) as an EVAL command, announcing with `publish`: "publish" as on one
// server, "spublish" as Redisson >= 3.22 does on a Redis Cluster. nil = not held by `field`,
// 0 = re-entries remain, 1 = deleted and announced.
std::vector<std::string> redisson_unlock_command(std::string_view key, std::string_view field = kJavaField,
                                                 std::string_view publish = "publish");

// RSpinLock (RedissonSpinLock.java at redisson-4.7.0), its scripts verbatim: RLock's hash, no
// message; `lease_ms` is lock()'s 30 s by default, and an unlock that leaves re-entries re-arms
// it. Lock: nil = acquired (re-entries too), else the holder's PTTL. Unlock, with the 3.24+ unlock
// latch (a new request id each call; Redisson's client deletes it afterwards, these helpers let it
// expire): nil = not held by `field`, 0 = re-entries remain, 1 = deleted (and announced to nobody).
std::vector<std::string> redisson_spin_lock_command(std::string_view key, std::string_view field = kJavaField,
                                                    std::string_view lease_ms = "30000");
std::vector<std::string> redisson_spin_unlock_command(std::string_view key, std::string_view field = kJavaField,
                                                      std::string_view lease_ms = "30000");

// RFencedLock's lockAndGetToken (RedissonFencedLock.java at redisson-4.7.0): {-1, token} = acquired
// (re-entries too), {pttl, -1} = held by another.
std::vector<std::string> redisson_fenced_lock_command(std::string_view key, std::string_view field = kJavaField,
                                                      std::string_view lease_ms = "60000");
std::string redisson_token_counter(std::string_view key);  // redisson_lock_token:{key}

// RFairLock (RedissonFairLock.java at redisson-4.7.0), as Java sends it: its scripts verbatim (the
// Java string literals joined), its names, and the client's clock in milliseconds.
std::string redisson_fair_queue(std::string_view key);      // redisson_lock_queue:{key}
std::string redisson_fair_deadlines(std::string_view key);  // redisson_lock_timeout:{key}
// A waiter's own channel: redisson_lock__channel:{key}:<field>.
std::string redisson_fair_channel(std::string_view key, std::string_view field);
std::string java_now_ms();
// lock() / tryLock(wait): nil = acquired; else the ms to wait (queued when it was not).
std::vector<std::string> redisson_fair_lock_command(std::string_view key, std::string_view field,
                                                    std::string_view wait_ms, std::string_view lease_ms = "60000");
// unlock, with the 3.24+ unlock latch (a new request id each call): nil = not held by `field`, 0 = re-entries remain, 1 = done
// (the first waiter told on its channel, also when the lock was gone).
std::vector<std::string> redisson_fair_unlock_command(std::string_view key, std::string_view field,
                                                      std::string_view publish = "publish");
// acquireFailed: a waiter that gives up.
std::vector<std::string> redisson_fair_give_up_command(std::string_view key, std::string_view field,
                                                       std::string_view wait_ms);

// RReadWriteLock (redisson-4.7.0), its scripts verbatim. `field` is the holder's <uuid>:<thread
// id>; the write side's is field + ":write". Locks: nil = acquired, else the lock's PTTL. Unlocks
// (with the 3.24+ unlock latch, a new request id each call): nil = not held, 0 = others still
// hold, 1 = released. Read renewal (ReadLockTask, one lock): {1} renewed, {0} not held.
std::string redisson_rwlock_channel(std::string_view key);  // redisson_rwlock:{key}
// {key}:<field>:rwlock_timeout:<hold>, a reader hold's own timeout key.
std::string redisson_reader_timeout(std::string_view key, std::string_view field, int hold = 1);
std::vector<std::string> redisson_read_lock_command(std::string_view key, std::string_view field = kJavaField,
                                                    std::string_view lease_ms = "60000");
std::vector<std::string> redisson_read_unlock_command(std::string_view key, std::string_view field = kJavaField,
                                                      std::string_view publish = "publish");
std::vector<std::string> redisson_write_lock_command(std::string_view key, std::string_view field = kJavaField,
                                                     std::string_view lease_ms = "60000");
std::vector<std::string> redisson_write_unlock_command(std::string_view key, std::string_view field = kJavaField,
                                                       std::string_view publish = "publish");
std::vector<std::string> redisson_read_renew_command(std::string_view key, std::string_view field = kJavaField,
                                                     std::string_view lease_ms = "30000");

// RSemaphore and RCountDownLatch (redisson-4.7.0), their scripts verbatim; integer replies as
// Redisson's (1 = done, 0 = not; a count-down and a release reply nil).
std::string redisson_semaphore_channel(std::string_view key);  // redisson_sc:{key}
std::string redisson_latch_channel(std::string_view key);      // redisson_countdownlatch__channel__{key}
std::vector<std::string> redisson_semaphore_acquire_command(std::string_view key, int permits = 1);
std::vector<std::string> redisson_semaphore_release_command(std::string_view key, int permits = 1,
                                                            std::string_view publish = "publish");
std::vector<std::string> redisson_semaphore_try_set_command(std::string_view key, int permits,
                                                            std::string_view publish = "publish");
std::vector<std::string> redisson_latch_count_down_command(std::string_view key, std::string_view publish = "publish");
std::vector<std::string> redisson_latch_try_set_count_command(std::string_view key, int count,
                                                              std::string_view publish = "publish");

// RPermitExpirableSemaphore (redisson-4.7.0), its scripts verbatim, permit ids as 16 raw bytes.
// Acquire: "OK", ":<the first lease end>" or nil; release: 1 = given back within its lease.
std::string redisson_permit_leases(std::string_view key);  // {key}:timeout
std::vector<std::string> redisson_expirable_acquire_command(std::string_view key, std::string_view raw_id,
                                                           std::int64_t lease_ms);
std::vector<std::string> redisson_expirable_release_command(std::string_view key, std::string_view raw_id);
// acquire(n, lease) (3.23.4+): n ids, all or none. tryRelease(ids): all or none (3.41.0+), the
// number given back.
std::vector<std::string> redisson_expirable_acquire_command(std::string_view key,
                                                           const std::vector<std::string>& raw_ids,
                                                           std::int64_t lease_ms);
std::vector<std::string> redisson_expirable_release_command(std::string_view key,
                                                           const std::vector<std::string>& raw_ids);

// One subscriber connection: `subscribe` ("SUBSCRIBE" or "SSUBSCRIBE") to `channel`, on a unix
// socket path or a 127.0.0.1 TCP port. Reads time out after 10 s.
class PeerSubscriber {
 public:
  PeerSubscriber(const std::string& unix_path, std::string_view subscribe, const std::string& channel);
  PeerSubscriber(int tcp_port, std::string_view subscribe, const std::string& channel);
  ~PeerSubscriber();
  PeerSubscriber(const PeerSubscriber&) = delete;
  PeerSubscriber& operator=(const PeerSubscriber&) = delete;

  // Whether the subscription was confirmed.
  bool subscribed() const { return subscribed_; }
  // The next message's payload, or nullopt after the 10 s timeout.
  std::optional<std::string> next_message();

 private:
  void subscribe(std::string_view command, const std::string& channel);
  redisContext* context_ = nullptr;
  bool subscribed_ = false;
};

}  // namespace lockbridge::testing
