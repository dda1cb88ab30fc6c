// lockbridge::compat::JedisLock: jedis-lock 1.0.0's com.github.jedis.lock.JedisLock, for C++ code
// ported from Java services that lock the same keys (docs/compat.md).
//
//   Java                                                C++
//   JedisLock lock = new JedisLock(jedis, "k", 10000, 30000);
//                                                       compat::JedisLock lock(redis, "k", 10000ms, 30000ms);
//   if (lock.acquire()) { try { ... } finally { lock.release(); } }
//                                                       if (lock.acquire()) { ...; lock.release(); }
//
// The same value (decimal epoch ms of now + expireMsecs + 1, no TTL), the same timing (one attempt
// every 100 ms, timeoutMsecs / 100 + 1 attempts) and the same commands (SETNX, GET, GETSET; DEL),
// because it is a lockbridge::Mutex with MutexOptions::jedis_lock_1_0(): the faithful legacy
// preset, flaws included (docs/design.md 5: client clocks, no TTL, unconditional DEL).
//
// The methods keep their Java names (camelCase) on purpose: this is a drop-in API, and a port
// should change as few call sites as possible. Durations are std::chrono (write 10000ms where Java
// wrote 10000). Differences from Java: a value that is not a number throws Error{bad_value} (Java:
// NumberFormatException) and leaves the key alone; Redis failures throw lockbridge::Error.
// Thread-compatible, like Mutex (the Java methods are synchronized; share one object between
// threads only behind a std::mutex, or give each thread its own).
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "lockbridge/client.hpp"
#include "lockbridge/export.hpp"
#include "lockbridge/compat/held_lock.hpp"
#include "lockbridge/mutex.hpp"

namespace lockbridge::compat {

class LOCKBRIDGE_API JedisLock {
 public:
  static constexpr std::chrono::milliseconds kDefaultTimeout{10000};  // timeoutMsecs
  static constexpr std::chrono::milliseconds kDefaultExpire{60000};   // expireMsecs

  // Throws Error{bad_option} for an empty key or a lease outside 1 ms - 365 days. No I/O.
  JedisLock(Client client, std::string lockKey, std::chrono::milliseconds timeoutMsecs = kDefaultTimeout,
            std::chrono::milliseconds expireMsecs = kDefaultExpire);
  // Java's JedisLock(String lockKey, ...): no client yet; give one to acquire(client). acquire()
  // without one throws Error{bad_option} (Java: NullPointerException).
  explicit JedisLock(std::string lockKey, std::chrono::milliseconds timeoutMsecs = kDefaultTimeout,
                     std::chrono::milliseconds expireMsecs = kDefaultExpire);

  // Tries every 100 ms until acquired (true) or timeoutMsecs is spent (false); blocks that long at
  // most, plus the round trips. Acquiring while locked only succeeds once our own stamp expired
  // (then it is taken over, as jedis-lock does); a failed attempt leaves isLocked() as it was.
  // Throws lockbridge::Error (bad_value for a value that is not a number, wrong_type, io, ...).
  bool acquire();
  bool acquire(const Client& client);
  // If locked: DEL lockKey, unconditionally (also a lock a peer took over after our stamp
  // expired: jedis-lock's flaw, kept). Never throws; a failure is in mutex()->last_error().
  // release(client) accepts the Java overload's argument; the DEL goes through the acquiring
  // Client, which names the same server.
  void release() noexcept;
  void release(const Client& client) noexcept;

  // The local flag, no Redis call: true from a successful acquire() to release().
  bool isLocked() const noexcept { return held_.held(); }
  const std::string& getLockKey() const noexcept { return held_.key(); }

  // The Mutex of the last acquisition (value(), inspect()), or null before the first.
  const Mutex* mutex() const noexcept { return held_.mutex(); }

 private:
  std::optional<Client> client_;
  std::chrono::milliseconds timeout_;
  detail::HeldLock held_;
};

}  // namespace lockbridge::compat
