// lockbridge::compat: what the drop-in lock objects share (not an API of its own).
//
// The Java lock objects copied here remember one thing, "I hold it", and acquire again while they
// do: jedis-lock master refreshes its own lock through its "mine" rule, jedis-lock 1.0.0 takes its
// own expired stamp over. A lockbridge Mutex refuses to lock twice, so each acquisition is made by
// a fresh Mutex with the same options and identity, and the hold passes to it when it wins.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "lockbridge/client.hpp"
#include "lockbridge/export.hpp"
#include "lockbridge/mutex.hpp"

namespace lockbridge::compat::detail {

// One key, held through a succession of Mutex objects of one identity. Thread-compatible.
class LOCKBRIDGE_API HeldLock {
 public:
  // Validates the options and the key (Error{bad_option}); no I/O.
  HeldLock(std::string key, MutexOptions options);

  // Attempts by a fresh Mutex on `client`, waiting as the options say for up to `timeout` (zero:
  // one attempt; negative: none, as jedis-lock's `while (timeout >= 0)` never runs). When it wins,
  // the hold passes to it and the previous Mutex is abandoned, not released: it is the same owner,
  // and its release would delete the new hold. When it loses, the previous hold stays, as the Java
  // objects keep their flag. Blocks and throws like Mutex::try_lock_for.
  bool acquire(const Client& client, std::chrono::milliseconds timeout);

  // Releases the hold (Mutex::unlock(), so with the options' release: a faithful preset DELs).
  // false when nothing was held. Never throws; the error, if any, is in mutex()->last_error()
  // until the next acquire.
  bool release() noexcept;

  // The local flag: true from a won acquire() to release(), even after the lease ran out (the
  // Java objects never look).
  bool held() const noexcept { return holding_; }
  // The Mutex of the last acquisition (for value(), inspect(), last_error()); null before.
  const Mutex* mutex() const noexcept { return mutex_ ? &*mutex_ : nullptr; }
  const std::string& key() const noexcept { return key_; }
  const MutexOptions& options() const noexcept { return options_; }

 private:
  std::string key_;
  MutexOptions options_;
  std::optional<Mutex> mutex_;
  bool holding_ = false;
};

}  // namespace lockbridge::compat::detail
