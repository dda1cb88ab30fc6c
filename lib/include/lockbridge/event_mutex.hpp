// lockbridge: locks driven by the program's event loop, without Asio. lockbridge/asio.hpp wraps
// them with Asio completion tokens (AsyncClient, AsyncMutex, AsyncMultiMutex); use these directly
// on another loop.
//
// An EventMutex is the blocking Mutex's lock (an EventMultiMutex, MultiMutex's), with the same
// strategies, waiting rules (notify, fair and poll waiting, the starvation rule, the
// process-local line shared with the blocking front's threads), lease, watchdog and observer,
// driven by events: a waiting acquire costs a coroutine frame and a subscription, not a thread,
// and every request of every lock of one EventClient is pipelined on one connection per server
// (per master on Redis Cluster). Its callbacks run on the loop. A thread of the loop must not call a blocking lock() on a key its event-driven
// waiters line up for: the blocking waiter would hold the loop while it waits for them. Every URL
// the blocking front takes is served: a server, Sentinel, Redis Cluster (a pipeline per master)
// and Redlock (a pipeline per master, each round sent to all at once).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <system_error>
#include <vector>

#include "lockbridge/client.hpp"
#include "lockbridge/error.hpp"
#include "lockbridge/event_loop.hpp"
#include "lockbridge/export.hpp"
#include "lockbridge/options.hpp"

namespace lockbridge {

namespace detail {
class PipelineRoutes;
class EventLockCore;
}  // namespace detail

// A Client's server, reached through `loop`: the connection its locks pipeline on, opened when
// the first operation needs it. Construct, use and destroy it on the loop; the loop outlives it.
class LOCKBRIDGE_API EventClient {
 public:
  EventClient(Client client, std::shared_ptr<EventLoop> loop);
  ~EventClient();
  EventClient(const EventClient&) = delete;
  EventClient& operator=(const EventClient&) = delete;

  const Client& client() const noexcept { return client_; }
  EventLoop& loop() const noexcept { return *loop_; }

 private:
  friend class EventMutex;
  friend class EventMultiMutex;
  friend struct EventSharedMutex;
  friend class EventLatch;
  friend class EventSemaphore;
  friend class EventLeasedSemaphore;
  Client client_;
  std::shared_ptr<EventLoop> loop_;
  std::shared_ptr<detail::PipelineRoutes> routes_;
};

// One lock holder, as Mutex and MultiMutex are (one object, one lease), used on the loop: what
// EventMutex (one key) and EventMultiMutex (a set of keys, all or none) share. One operation at a
// time: a second one while the first runs completes with Errc::bad_option.
class LOCKBRIDGE_API EventLock {
 public:
  using Clock = std::chrono::steady_clock;
  // Called once, on the loop, never inside the call that started the operation.
  using AcquireDone = std::function<void(std::error_code, bool acquired)>;
  using Done = std::function<void(std::error_code)>;

  // Releases a held lock in the background. An operation still running is abandoned: its
  // callback is never called, and a lock it may have won is left to its lease.
  virtual ~EventLock();
  EventLock(const EventLock&) = delete;
  EventLock& operator=(const EventLock&) = delete;

  // Waits by options().retry and wait_mode until acquired (true), or the policy gives up at
  // `deadline` (false; Clock::time_point::max(): no deadline). A stop request ends the wait with
  // std::errc::operation_canceled at once; an attempt already sent that won the lock is then
  // released again, so a cancelled acquire never leaves the lock held. A stop already requested
  // sends nothing. Errors as Mutex's (Errc codes), never thrown.
  void acquire(Clock::time_point deadline, std::stop_token stop, AcquireDone done);
  // Releases (reentrant: the last hold); the error of a refused release (lease_lost), as
  // Mutex::unlock records it.
  void release(Done done);
  // Resets the lease of the held lock: true, or false when it is no longer ours. A set of keys
  // cannot be extended yet (bad_option, as MultiMutex).
  void extend(std::chrono::milliseconds lease, AcquireDone done);

  bool owns_lock() const noexcept;
  std::chrono::milliseconds valid_for() const noexcept;
  std::string value() const;
  std::optional<std::uint64_t> fence() const noexcept;
  const MutexOptions& options() const noexcept;
  // The loss notice (Mutex::on_lease_lost), posted to the loop. Set before acquiring.
  void on_lease_lost(std::function<void(const Error&)> handler);

 protected:
  explicit EventLock(std::unique_ptr<detail::EventLockCore> core);
  const detail::EventLockCore& core() const noexcept { return *core_; }
  // Why an acquire must not even start (an error it completes with at once), or none.
  virtual std::error_code refused() const noexcept { return {}; }

 private:
  std::unique_ptr<detail::EventLockCore> core_;
};

// A lock on one key, as Mutex.
class LOCKBRIDGE_API EventMutex final : public EventLock {
 public:
  // Throws Error{bad_option} for an empty key or invalid options. Does no I/O. The client outlives it.
  EventMutex(EventClient& client, std::string key, MutexOptions options = {});
  const std::string& key() const noexcept;
};

// A lock on several keys, taken all at once or not at all, as MultiMutex (its rules and refusals:
// token strategy, no watchdog, fair mode, fencing, reentry or extend yet).
class LOCKBRIDGE_API EventMultiMutex final : public EventLock {
 public:
  // Throws Error{bad_option} as MultiMutex's constructor does. Does no I/O. The client outlives it.
  EventMultiMutex(EventClient& client, std::vector<std::string> keys, MutexOptions options = {});
  // The keys, deduplicated and sorted.
  const std::vector<std::string>& keys() const noexcept;
};

// Redisson's read/write lock on one key, as SharedMutex (lockbridge/shared_mutex.hpp), driven by
// events: its two sides, each an EventLock of the same holder. The write side's acquire completes
// at once with Errc::bad_option while the read side holds (a reader cannot upgrade); a writer may
// take the read side too, and its release then leaves it reading (a downgrade).
struct LOCKBRIDGE_API EventSharedMutex {
  // Throws Error{bad_option} as SharedMutex's constructor does. Does no I/O. The client outlives it.
  EventSharedMutex(EventClient& client, std::string key, MutexOptions options = MutexOptions::redisson_lock());
  std::unique_ptr<EventLock> shared;     // the read side
  std::unique_ptr<EventLock> exclusive;  // the write side (declared last: destroyed first)
};

}  // namespace lockbridge
