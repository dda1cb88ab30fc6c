// What a lock is held on, behind one interface: a single key (a strategy on one server, or on the
// master of the key's slot), a quorum of independent masters (Redlock), or a set of keys taken
// all or nothing. Each call is one routed round; waiting, the hold and the lease live above it, in
// LockCore and the waiting loop, written once for every kind of lock.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "lockbridge/error.hpp"
#include "lockbridge/lock_info.hpp"
#include "strategies/strategy.hpp"
#include "util/task.hpp"
#include "waiting/release_channel.hpp"

namespace lockbridge::detail {

// One attempt's outcome.
struct TargetAttempt {
  using Clock = std::chrono::steady_clock;
  bool acquired = false;
  std::string value;                // acquired: what was written (the token, stamp or field)
  Clock::time_point valid_until{};  // acquired: the lease's end on our clock, counted from before the request
  std::optional<std::uint64_t> fence;
  // Acquired through a grant (docs/design.md §10.6): its lease may be shorter than the one asked
  // for (MutexOptions::grant_lease), and is topped up to that once the hold lasts.
  bool granted = false;
  // Not acquired: how much longer the holder's lease runs, when the attempt learned it.
  std::optional<std::chrono::milliseconds> holder_remaining;
  // Not acquired, key sets: the channel of the key that blocked this attempt (its release frees it).
  std::optional<ReleaseChannel> blocked_on;
};

// Whether an attempt that threw `error` may have written on the server, so that it must be undone:
// its request was handed to a connection (`sent`) and its reply was lost (timeout, io, protocol,
// tls). A request never sent (no free pooled connection, a refused connect or handshake) wrote
// nothing. A tls error after the request went out is mostly a session the server refused, which
// ran nothing, but a reset read as one may not be: the undo deletes only this attempt's own value,
// so when unsure it is undone.
inline bool may_have_written(const Error& error, bool sent) noexcept {
  return sent && (error.errc() == Errc::timeout || error.errc() == Errc::io || error.errc() == Errc::protocol ||
                  error.errc() == Errc::tls);
}

// What an extend found.
struct TargetExtension {
  using Clock = std::chrono::steady_clock;
  enum class Kind {
    extended,  // `value` is held until `valid_until`
    lost,      // the lock was no longer ours (or, Redlock, no majority extended it in time)
    released,  // extended, but replica_ack's shortfall released it again: `error` says so
  };
  Kind kind = Kind::lost;
  std::string value;
  Clock::time_point valid_until{};
  std::optional<Error> error;
  std::string why;  // lost: what the extend found, for the loss notice
};

class LockTarget {
 public:
  using Clock = std::chrono::steady_clock;
  virtual ~LockTarget() = default;

  // "acquire 'orders:42'" (or several keys): the context of error messages.
  virtual std::string describe(std::string_view operation) const = 0;
  // The key a lease is kept under (the first of a set), for messages and the renewal thread.
  virtual const std::string& key() const noexcept = 0;
  // How events name the lock (lockbridge::LockEvent::key): its key, or a key set's keys.
  virtual std::string event_key() const { return key(); }
  // This server (or these masters) and these keys, whatever the Client's URL spelling: the name of
  // the process-local line that threads waiting for the same lock share.
  virtual std::string line_name() const = 0;
  // Where the release that frees the lock is announced before any attempt says otherwise; nullopt
  // when nothing is ever announced (Redlock's masters).
  virtual std::optional<ReleaseChannel> channel() const = 0;
  // Whether every failed attempt reports the holder's remaining lease without being asked.
  virtual bool always_learns_remaining() const noexcept { return false; }
  // Whether waiters queue in notify mode (AttemptRequest::queued_waiter), so that a release wakes
  // only the first, and hands the lock to it once it starves (docs/design.md §10.5).
  virtual bool queues_waiters() const noexcept { return false; }
  // Whether a release naming a queued waiter is announced on that waiter's Client's own channel
  // (LockStrategy::announces_to_waiters), where its waiters then listen.
  virtual bool announces_to_waiters() const noexcept { return false; }

  // The calls below are coroutines (util/task.hpp): the blocking front runs them in place
  // (run_now), an event-driven one awaits them. Their arguments must live until they end.
  //
  // One attempt. A reply lost to io, timeout or protocol (the request may have run) is undone
  // where the target can, then rethrown; every error names the key. Throws Error.
  virtual Task<TargetAttempt> attempt(const AttemptRequest& request) = 0;
  // Deletes `value` wherever it is still ours, or hands it to a starving queued waiter; not_ours
  // when not all of it was (lease_lost), with why_not_released() saying what the release found.
  // Throws Error.
  virtual Task<ReleaseOutcome> release(const std::string& value) = 0;
  virtual std::string_view why_not_released() const noexcept {
    return "the key no longer held our value; nothing was deleted";
  }
  // Resets the lease of `value` to `lease`. Throws Error (bad_option where the protocol has none).
  virtual Task<TargetExtension> extend(const std::string& value, std::chrono::milliseconds lease) = 0;
  // Reads without changing anything. Throws Error.
  virtual Task<LockInfo> inspect(std::string_view mine) = 0;
  // Takes a queued waiter that gives up out of its queue (and passes on a lock handed to it).
  // Best effort: never throws.
  virtual Task<void> leave_queue(std::string_view /*waiter*/) { co_return; }
  // The watchdog's renewer (its calls are pipelined for many locks); null when this target cannot
  // be renewed in the background.
  virtual std::shared_ptr<const LockStrategy> renewer() const noexcept { return nullptr; }
  // replica_ack: how many replicas acknowledged the last acquire or extend.
  virtual std::optional<int> replicas_acknowledged() const noexcept { return std::nullopt; }
};

// The same server (or masters) and the same keys, whichever Client or URL spelling reached them:
// the name of the process-local line (LockTarget::line_name). A Mutex on a key and a MultiMutex of
// that one key share it.
std::string lock_line_name(const RedisUrl& url, std::span<const std::string> keys);

}  // namespace lockbridge::detail
