// lockbridge: Redisson's count-down latch and semaphores (lockbridge/latch.hpp, semaphore.hpp,
// leased_semaphore.hpp) driven
// by the program's event loop, as EventMutex drives a lock: a waiting wait() or acquire() costs a
// coroutine frame and a subscription, not a thread, and every request goes on the EventClient's
// pipelines (per master on Redis Cluster). The keys, scripts and announcements are the blocking
// objects', so both fronts and Java peers share one latch or one pool of permits.
// lockbridge/asio.hpp wraps them with Asio completion tokens (AsyncLatch, AsyncSemaphore,
// AsyncLeasedSemaphore).
//
// Construct, use and destroy them on the loop; the EventClient outlives them. Several operations
// may run at once. Each callback is called once, on the loop, never inside the call that started
// the operation; errors are Errc codes (a bad count or permit number: bad_option), never thrown.
// Destroying the object stops its operations: their callbacks are never called, and permits an
// acquire had already won are given back in the background.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <stop_token>
#include <string>
#include <system_error>
#include <vector>

#include "lockbridge/event_mutex.hpp"
#include "lockbridge/export.hpp"
#include "lockbridge/latch.hpp"
#include "lockbridge/leased_semaphore.hpp"
#include "lockbridge/semaphore.hpp"

namespace lockbridge {

namespace detail {
struct EventObject;
}

// What EventLatch and EventSemaphore share: the key, and the operations still running.
class LOCKBRIDGE_API EventCounter {
 public:
  using Clock = std::chrono::steady_clock;
  using Done = std::function<void(std::error_code)>;
  using BoolDone = std::function<void(std::error_code, bool)>;
  using CountDone = std::function<void(std::error_code, std::int64_t)>;

  EventCounter(const EventCounter&) = delete;
  EventCounter& operator=(const EventCounter&) = delete;
  const std::string& key() const noexcept;

 protected:
  explicit EventCounter(std::shared_ptr<detail::EventObject> object);
  ~EventCounter();  // stops the operations still running; not deleted through a base pointer
  const std::shared_ptr<detail::EventObject>& object() const noexcept { return object_; }

 private:
  std::shared_ptr<detail::EventObject> object_;
};

// RCountDownLatch, as Latch.
class LOCKBRIDGE_API EventLatch final : public EventCounter {
 public:
  // Throws Error{bad_option} as Latch's constructor does. Does no I/O.
  EventLatch(EventClient& client, std::string key, LatchOptions options = {});
  // Sets the count when the latch is open: true when set.
  void try_set_count(std::int64_t count, BoolDone done);
  void count_down(Done done);
  // The count now: 0 when open.
  void count(CountDone done);
  // Until the latch opens (true) or `deadline` passes (false; Clock::time_point::max(): none). A
  // stop request ends it with std::errc::operation_canceled at once.
  void wait(Clock::time_point deadline, std::stop_token stop, BoolDone done);

 private:
  LatchOptions options_;
};

// RSemaphore, as Semaphore.
class LOCKBRIDGE_API EventSemaphore final : public EventCounter {
 public:
  // Throws Error{bad_option} as Semaphore's constructor does. Does no I/O.
  EventSemaphore(EventClient& client, std::string key, SemaphoreOptions options = {});
  // Sets the permits when none are set: true when set.
  void try_set_permits(std::int64_t permits, BoolDone done);
  // Adds `permits` (negative: takes them away); the new number.
  void add_permits(std::int64_t permits, CountDone done);
  void available(CountDone done);
  // Takes every available permit: how many.
  void drain(CountDone done);
  // Takes `permits` at once or none: one attempt.
  void try_acquire(std::int64_t permits, BoolDone done);
  // Until `permits` are taken (true) or `deadline` passes (false). A stop request ends it with
  // std::errc::operation_canceled at once; permits an attempt already sent had won are given back
  // first, so a cancelled acquire never keeps any.
  void acquire(std::int64_t permits, Clock::time_point deadline, std::stop_token stop, BoolDone done);
  // Gives back `permits`, announced.
  void release(std::int64_t permits, Done done);
  const SemaphoreOptions& options() const noexcept { return options_; }

 private:
  SemaphoreOptions options_;
};

// RPermitExpirableSemaphore, as LeasedSemaphore: permits with leases, handed out as ids.
class LOCKBRIDGE_API EventLeasedSemaphore final : public EventCounter {
 public:
  // The permit's id (32 hex digits), or empty when none was taken.
  using PermitDone = std::function<void(std::error_code, std::string permit)>;
  // The permits' ids, or none when they were not taken.
  using PermitsDone = std::function<void(std::error_code, std::vector<std::string> permits)>;

  // Throws Error{bad_option} as LeasedSemaphore's constructor does. Does no I/O.
  EventLeasedSemaphore(EventClient& client, std::string key, LeasedSemaphoreOptions options = {});
  void try_set_permits(std::int64_t permits, BoolDone done);
  void add_permits(std::int64_t permits, CountDone done);
  // After giving back the permits whose lease ended.
  void available(CountDone done);
  // One permit for `lease` (1 ms to 365 days, or LeasedSemaphore::kNoLease), waiting until
  // `deadline` (one attempt when it has passed; empty id then). A stop request ends it with
  // std::errc::operation_canceled at once; a permit an attempt already sent had won is given back
  // first.
  void acquire(std::chrono::milliseconds lease, Clock::time_point deadline, std::stop_token stop, PermitDone done);
  // `permits` permits (1 to LeasedSemaphore::kMostPermitsAtOnce) at once, all or none, as
  // LeasedSemaphore's; otherwise as acquire() above: a cancelled acquire gives back what it won.
  void acquire(std::int64_t permits, std::chrono::milliseconds lease, Clock::time_point deadline, std::stop_token stop,
               PermitsDone done);
  // true when the permit was held within its lease (given back either way).
  void release(std::string permit, BoolDone done);
  // All the permits or none: how many were given back, 0 when any id held no permit within its
  // lease (LeasedSemaphore::release's rules).
  void release(std::vector<std::string> permits, CountDone done);
  // false when the id holds no permit (any more).
  void update_lease(std::string permit, std::chrono::milliseconds lease, BoolDone done);
  const LeasedSemaphoreOptions& options() const noexcept { return options_; }

 private:
  LeasedSemaphoreOptions options_;
};

}  // namespace lockbridge
