// lockbridge::compat::SimpleLock: SimpleLock.wrap as blog posts on jedis-lock 1.0.0 show it (a
// jedis-lock 1.0.0 lock around a piece of code), for C++ code ported from Java services that lock
// the same keys.
//
//   Java                                                C++
//   SimpleLock lock = new SimpleLock(key);              compat::SimpleLock lock(redis, key);
//   lock.wrap(new Runnable() {                          lock.wrap([&] {
//       public void run() { ... }                           ...
//   });                                                 });
//
// wrap(body) acquires with compat::JedisLock (jedis-lock 1.0.0's commands and timing: SETNX, GET,
// GETSET every 100 ms for up to timeoutMsecs), runs the body, and always releases (DEL), also when
// the body throws. Those posts show wrap only as the short form of its "general usage", whose code
// runs the business logic only `if (jedisLock.acquire())` and otherwise logs "The time wait for
// lock more than [timeoutMsecs] ms" and goes on; wrap does the same: when the lock is not acquired
// within timeoutMsecs the body is NOT run and nothing throws; the result says so. Unlike the posts'
// general usage, which catches and logs every Throwable, exceptions propagate: from the body
// (after the release) and from the acquire (lockbridge::Error; nothing to release then).
// Thread-compatible: one SimpleLock per thread (the posts make one per use).
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "lockbridge/client.hpp"
#include "lockbridge/export.hpp"
#include "lockbridge/compat/jedis_lock.hpp"

namespace lockbridge::compat {

class LOCKBRIDGE_API SimpleLock {
 public:
  // Throws Error{bad_option} for an empty key or a bad lease. No I/O.
  SimpleLock(Client client, std::string key, std::chrono::milliseconds timeoutMsecs = JedisLock::kDefaultTimeout,
             std::chrono::milliseconds expireMsecs = JedisLock::kDefaultExpire);

  // Runs `body` while holding the lock, then releases it (also when `body` throws). Returns whether
  // the body ran (a body returning void), or its result, nullopt when it did not run (otherwise).
  // Blocks for up to timeoutMsecs waiting for the lock, then for the body.
  template <class F>
  auto wrap(F&& body) {
    using Result = std::invoke_result_t<F&>;
    const bool acquired = lock_.acquire();
    if constexpr (std::is_void_v<Result>) {
      if (!acquired) return false;
      const Releaser releaser{lock_};
      std::invoke(body);
      return true;
    } else {
      using Value = std::optional<std::remove_cvref_t<Result>>;
      if (!acquired) return Value();
      const Releaser releaser{lock_};
      return Value(std::invoke(body));
    }
  }

  const JedisLock& lock() const noexcept { return lock_; }

 private:
  struct Releaser {
    JedisLock& lock;
    ~Releaser() { lock.release(); }  // release() never throws: safe during unwinding
  };
  JedisLock lock_;
};

}  // namespace lockbridge::compat
