// lockbridge::compat::JedisLockMaster: com.github.jedis.lock.JedisLock as on jedis-lock's master
// branch (2015, "1.0.1-SNAPSHOT", never released), whose values are "<uuid>:<expiry ms>".
//
//   Java                                                C++
//   JedisLock lock = new JedisLock(jedis, "k", 10000, 30000);
//                                                       compat::JedisLockMaster lock(redis, "k", 10000ms, 30000ms);
//   lock.acquire(); ... lock.renew(); ... lock.release();
//                                                       the same calls
//
// *****************************************************************************************
// DANGER: this copies master exactly, and master STEALS LOCKS. A value it cannot read as
// "<uuid>:<ms>" (a jedis-lock 1.0.0 stamp, a token, a lockbridge epoch_ms lock, garbage) is its
// NO_LOCK, "expired since 1970": acquire() GETSETs it at once, while its real holder still runs
// (docs/compat.md, jedis-lock master), and renew() counts it as ours to take. Use it only on keys that
// nothing but jedis-lock master (and this class) ever writes. Everything else should use
// lockbridge::Mutex with the hardened preset, which never steals (docs/compat.md).
// *****************************************************************************************
//
// On the wire: acquire = SETNX; then GET; then, when the value is expired,
// unreadable, missing, or carries our UUID ("mine"), GETSET; won iff GETSET returned what GET read.
// One attempt every 100 ms, acquireTimeoutMillis / 100 + 1 attempts. No TTL. release = DEL if
// locked, unconditionally. Built on lockbridge::Mutex, faithful preset, uuid_ms format, with
// LegacyOptions::jedis_lock_master. Master's system properties (com.github.jedis.lock.*) are not
// read: pass the values instead. Java's UUID.fromString also accepts non-canonical spellings
// ("1-2-3-4-5"); this reads only the canonical form, so such a value would be taken as NO_LOCK.
// camelCase method names mirror the Java API (a drop-in). Thread-compatible, like Mutex.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "lockbridge/client.hpp"
#include "lockbridge/export.hpp"
#include "lockbridge/compat/held_lock.hpp"
#include "lockbridge/mutex.hpp"

namespace lockbridge::compat {

class LOCKBRIDGE_API JedisLockMaster {
 public:
  static constexpr std::chrono::milliseconds kDefaultAcquireTimeout{10000};  // DEFAULT_ACQUIRE_TIMEOUT_MILLIS
  static constexpr std::chrono::milliseconds kDefaultExpiry{60000};          // DEFAULT_EXPIRY_TIME_MILLIS
  static constexpr std::chrono::milliseconds kResolution{100};               // DEFAULT_ACQUIRY_RESOLUTION_MILLIS

  // `uuid`: this lock's identity (Java's fifth argument), any case; empty = a random one. Objects
  // given the same UUID are one owner: each takes the others' locks as "mine" (docs/wire-formats.md hazard 12).
  // Throws Error{bad_option} for an empty key, a malformed UUID or a bad lease. No I/O.
  JedisLockMaster(Client client, std::string lockKey,
                  std::chrono::milliseconds acquireTimeoutMillis = kDefaultAcquireTimeout,
                  std::chrono::milliseconds expiryTimeMillis = kDefaultExpiry, std::string uuid = {});

  // Tries every 100 ms for up to acquireTimeoutMillis. While locked it refreshes: our own value is
  // "mine", so the first attempt's GETSET writes a later expiry. A failed attempt leaves
  // isLocked() as it was. Throws lockbridge::Error (wrong_type, io, ...), never bad_value.
  bool acquire();
  // GET lockKey: false at once unless the value is expired, unreadable, missing or ours; then
  // acquire(). Throws like acquire().
  bool renew();
  // If locked: DEL lockKey, unconditionally. Never throws (see mutex()->last_error()).
  void release() noexcept;

  bool isLocked() const noexcept { return held_.held(); }  // local, no Redis call
  // The expiry written by the last acquisition, epoch ms. Error{bad_option} when not locked
  // (Java: NullPointerException).
  std::int64_t getLockExpiryTimeInMillis() const;
  const std::string& getLockUUID() const noexcept { return held_.options().legacy.owner; }
  const std::string& getLockKeyPath() const noexcept { return held_.key(); }

  const Mutex* mutex() const noexcept { return held_.mutex(); }

 private:
  Client client_;
  std::chrono::milliseconds timeout_;
  detail::HeldLock held_;
};

}  // namespace lockbridge::compat
