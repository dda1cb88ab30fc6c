// lockbridge: locks driven by the program's event loop, without Asio. lockbridge/asio.hpp wraps
// them with Asio completion tokens (AsyncClient, AsyncMutex); use these directly on another loop.
//
// An EventMutex is the blocking Mutex's lock, with the same strategies, waiting rules (notify,
// fair and poll waiting, the starvation rule, the process-local line shared with the blocking
// Mutex's threads), lease, watchdog and observer, driven by events: a waiting acquire costs a
// coroutine frame and a subscription, not a thread, and every request of every EventMutex of one
// EventClient is pipelined on one connection. Its callbacks run on the loop. A thread of the loop
// must not call a blocking Mutex's lock() on a key its event-driven waiters line up for: the
// blocking waiter would hold the loop while it waits for them. Not served yet: Redis Cluster and
// Redlock URLs, and the release without scripts for ACL users that may not run them.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <system_error>

#include "lockbridge/client.hpp"
#include "lockbridge/error.hpp"
#include "lockbridge/event_loop.hpp"
#include "lockbridge/options.hpp"

namespace lockbridge {

namespace detail {
class PipelineRoutes;
class EventMutexCore;
}  // namespace detail

// A Client's server, reached through `loop`: the connection its locks pipeline on, opened when
// the first operation needs it. Construct, use and destroy it on the loop; the loop outlives it.
class EventClient {
 public:
  // Throws Error{bad_option} for Redis Cluster and Redlock URLs.
  EventClient(Client client, std::shared_ptr<EventLoop> loop);
  ~EventClient();
  EventClient(const EventClient&) = delete;
  EventClient& operator=(const EventClient&) = delete;

  const Client& client() const noexcept { return client_; }
  EventLoop& loop() const noexcept { return *loop_; }

 private:
  friend class EventMutex;
  Client client_;
  std::shared_ptr<EventLoop> loop_;
  std::shared_ptr<detail::PipelineRoutes> routes_;
};

// One lock holder, as Mutex is (one EventMutex, one lease), used on the loop. One operation at a
// time: a second one while the first runs completes with Errc::bad_option.
class EventMutex {
 public:
  using Clock = std::chrono::steady_clock;
  // Called once, on the loop, never inside the call that started the operation.
  using AcquireDone = std::function<void(std::error_code, bool acquired)>;
  using Done = std::function<void(std::error_code)>;

  // Throws Error{bad_option} for an empty key or invalid options. Does no I/O. The client outlives it.
  EventMutex(EventClient& client, std::string key, MutexOptions options = {});
  // Releases a held lock in the background. An operation still running is abandoned: its
  // callback is never called, and a lock it may have won is left to its lease.
  ~EventMutex();
  EventMutex(const EventMutex&) = delete;
  EventMutex& operator=(const EventMutex&) = delete;

  // Waits by options().retry and wait_mode until acquired (true), or the policy gives up at
  // `deadline` (false; Clock::time_point::max(): no deadline). A stop request ends the wait with
  // std::errc::operation_canceled at once; an attempt already sent that won the lock is then
  // released again, so a cancelled acquire never leaves the lock held. A stop already requested
  // sends nothing. Errors as Mutex's (Errc codes), never thrown.
  void acquire(Clock::time_point deadline, std::stop_token stop, AcquireDone done);
  // Releases (reentrant: the last hold); the error of a refused release (lease_lost), as
  // Mutex::unlock records it.
  void release(Done done);
  // Resets the lease of the held lock: true, or false when it is no longer ours.
  void extend(std::chrono::milliseconds lease, AcquireDone done);

  bool owns_lock() const noexcept;
  std::chrono::milliseconds valid_for() const noexcept;
  std::string value() const;
  std::optional<std::uint64_t> fence() const noexcept;
  const std::string& key() const noexcept;
  const MutexOptions& options() const noexcept;
  // The loss notice (Mutex::on_lease_lost), posted to the loop. Set before acquiring.
  void on_lease_lost(std::function<void(const Error&)> handler);

 private:
  std::unique_ptr<detail::EventMutexCore> core_;
};

}  // namespace lockbridge
