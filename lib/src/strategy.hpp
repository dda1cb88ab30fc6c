// The strategy interface: every call makes exactly one attempt (one acquire, one release, one
// extend, one inspect). Waiting, retry and deadlines live once, above it, in mutex.cpp.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "connection.hpp"
#include "lockbridge/mutex.hpp"
#include "script_runner.hpp"

namespace lockbridge::detail {

struct AcquireAttempt {
  bool acquired = false;
  std::string value;  // acquired: the value written to the key
  // Not acquired: how much longer the current holder's lease runs, when the attempt learned it.
  std::optional<std::chrono::milliseconds> holder_remaining;
};

enum class ReleaseOutcome {
  released,
  not_ours,  // the key was gone or held someone else's value: nothing was deleted
};

class LockStrategy {
 public:
  virtual ~LockStrategy() = default;

  // Throws Error (wrong_type for a key of another type, bad_value for a value that cannot be
  // judged; the key is then left as it was). With `learn_remaining` a failed attempt also reports
  // how long the holder's lease still runs, even where that costs the server one more command.
  virtual AcquireAttempt try_acquire(Connection& connection, std::string_view key, std::chrono::milliseconds lease, bool learn_remaining) = 0;
  // A release that deletes announces it on `release_channel`, where the protocol allows.
  virtual ReleaseOutcome release(Connection& connection, std::string_view key, std::string_view value,
                         std::string_view release_channel) = 0;
  // The value now held (it changes for legacy stamps), or nullopt when the lock is no longer ours.
  virtual std::optional<std::string> extend(Connection& connection, std::string_view key, std::string_view value,
                                            std::chrono::milliseconds lease) = 0;
  virtual LockInfo inspect(Connection& connection, std::string_view key, std::string_view my_value) = 0;
  // After an acquire whose reply was lost: undo it if it did happen, when that can be done safely.
  // Best effort; never throws.
  virtual void abandon_attempt(Connection& connection, std::string_view key) noexcept;
};

std::unique_ptr<LockStrategy> make_strategy(const MutexOptions& options, ScriptCache& scripts);

// kCompareAndDelete: the release of every strategy that deletes only its own value.
// When it deletes, it announces the release on `release_channel` (nothing when empty).
ReleaseOutcome compare_and_delete(Connection& connection, ScriptCache& scripts, std::string_view key,
                                  std::string_view value, std::string_view release_channel);

// GET and PTTL in one round trip. Throws wrong_type for non-string keys.
LockInfo read_lock_info(Connection& connection, std::string_view key, std::string_view my_value);

// Reads a script reply {flag, ...}: the array, checked to have at least `min_size` elements.
const redisReply& expect_array(const redisReply& reply, std::size_t min_size, std::string_view context);

// "acquire 'orders:42'": the context of error messages.
std::string describe(std::string_view operation, std::string_view key);

}  // namespace lockbridge::detail
