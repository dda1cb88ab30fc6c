// lockbridge: being told what locks do. An Observer set on a Client (ClientOptions::observer) hears
// about every lock of that Client; one set on a lock (MutexOptions::observer) hears about that lock
// instead. Metrics (lockbridge::prometheus) and logging are built on it.
//
// Threading contract (docs/observing.md):
// - Every callback of a Client's locks runs on one thread of that Client, the observer thread, in
//   the order the events happened, and never while lockbridge holds a mutex of its own. The locks
//   never wait for a callback: they post the event and go on.
// - A callback may do anything but destroy the Client whose thread runs it; it may lock and unlock
//   (those events are posted in turn).
// - A callback that throws: the exception is caught and dropped, and the next event is delivered.
// - A callback that blocks delays only the events after it. While more than kMaxPendingEvents wait,
//   new events are dropped and counted (ClientStats::observer_events_dropped): no lock waits, and
//   the watchdog keeps renewing.
// - Destroying the Client (its last copy and the last lock using it) delivers what is pending first.
// With no observer set, nothing is built and nothing is posted.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

#include "lockbridge/export.hpp"

namespace lockbridge {

// What every event names: the lock's key (a MultiMutex's keys, space-separated, in its order) and
// its strategy: "token", "legacy_hardened", "legacy_faithful" or "redisson".
struct LOCKBRIDGE_API LockEvent {
  std::string key;
  std::string_view strategy;
};

// An acquisition's number, unique in the process: its AcquiredEvent, and the ReleasedEvent or
// LeaseLostEvent (or both, lost first) that end it, carry the same, so an observer can tell which
// holds are still open (lockbridge_locks_held).
using HoldId = std::uint64_t;

// lock(), try_lock(), try_lock_for() (or a reentrant hold's first acquisition) got the lock.
struct LOCKBRIDGE_API AcquiredEvent : LockEvent {
  HoldId hold = 0;
  std::chrono::nanoseconds wait{};     // from the call to the acquisition
  int attempts = 0;                    // attempts in Redis (a hold taken in this process's local line counts its own)
  std::optional<std::uint64_t> fence;  // with fencing
  bool starved = false;                // the wait was starving (a StarvingEvent was posted for it)
};

// A call that did not get the lock: the retry policy gave up (error empty; lock() then throws
// Errc::timeout) or an attempt failed with `error` (the call threw it).
struct LOCKBRIDGE_API NotAcquiredEvent : LockEvent {
  std::chrono::nanoseconds wait{};
  int attempts = 0;
  std::error_code error;
  bool starved = false;  // the wait was starving (a StarvingEvent was posted for it)
};

// Notify mode's starvation rule (MutexOptions::starvation_after, docs/design.md §10.5): a wait
// queued in Redis has lasted past the bound, so from now on releases hand the lock to the starving
// waiters in arrival order instead of letting newcomers barge. Posted once per wait, when the
// bound passes; the wait's AcquiredEvent or NotAcquiredEvent follows with `starved` set. Only for
// observed locks whose waits queue (token and hardened legacy in notify mode, MultiMutex).
struct LOCKBRIDGE_API StarvingEvent : LockEvent {
  std::chrono::nanoseconds wait{};  // so far: at least starvation_after
};

// unlock() (or the destructor) ended a hold: released in Redis (error empty), or found it was not
// ours any more (Errc::lease_lost), or could not tell (io, timeout: the lease still runs out).
struct LOCKBRIDGE_API ReleasedEvent : LockEvent {
  HoldId hold = 0;
  std::chrono::nanoseconds held{};  // since the acquisition
  std::error_code error;
  // Released by handing the lock to a starving waiter (StarvingEvent) queued in Redis rather than
  // freeing it, so no newcomer could barge past that waiter.
  bool handed_over = false;
};

enum class LeaseLossReason {
  expired,      // the lease ran out: no watchdog, or max_hold reached
  deleted,      // the key is gone before our lease ran out (deleted, or its TTL ran out early)
  taken,        // the key holds another owner's value, or another type
  connection,   // no renewal got through before the lease ran out (server unreachable)
  replication,  // replica_ack: too few replicas had an extend, so it was released (Errc::no_quorum)
};
LOCKBRIDGE_API std::string_view to_string(LeaseLossReason reason) noexcept;

// A held lock is no longer ours, found by the watchdog, by extend(), or by the lease running out.
// (A release that finds the lock gone is a ReleasedEvent with Errc::lease_lost instead.)
struct LOCKBRIDGE_API LeaseLostEvent : LockEvent {
  HoldId hold = 0;
  LeaseLossReason reason = LeaseLossReason::expired;
  std::chrono::nanoseconds held{};
  std::string message;  // what the holder's on_lease_lost handler is given
};

// The watchdog renewed `leases` leases in one request (one pipeline; with Redis Cluster, one per
// master). Only the Client's observer hears it: a batch spans locks.
struct LOCKBRIDGE_API RenewedEvent {
  std::size_t leases = 0;
};

// The objects that are not locks (Latch, Semaphore and LeasedSemaphore, on either front) have no
// holds: they report their waits and the permits that move. Only the Client's observer hears them.
// `object` is "latch", "semaphore" or "leased_semaphore".
struct LOCKBRIDGE_API CounterEvent {
  std::string key;
  std::string_view object;
};

// A latch's wait, or a semaphore's acquiring call (one attempt or a wait), ended: done (the latch
// was open, the permits were taken), or not: it gave up at its deadline (error empty), was stopped
// (std::errc::operation_canceled) or failed (the error it threw or completed with).
struct LOCKBRIDGE_API CounterWaitEvent : CounterEvent {
  std::int64_t permits = 0;  // a semaphore's: asked for, taken when done; a latch's: 0
  std::chrono::nanoseconds wait{};
  int attempts = 0;  // reads or acquire scripts run in Redis
  bool done = false;
  std::error_code error;
};

// Permits given back by this process (a release; a cancelled acquire giving back what it won), or
// a release that failed (error).
struct LOCKBRIDGE_API PermitsReleasedEvent : CounterEvent {
  std::int64_t permits = 0;
  std::error_code error;
};

class LOCKBRIDGE_API Observer {
 public:
  // Events posted but not yet delivered beyond which new ones are dropped.
  static constexpr std::size_t kMaxPendingEvents = 10000;

  virtual ~Observer() = default;
  virtual void acquired(const AcquiredEvent&) {}
  virtual void not_acquired(const NotAcquiredEvent&) {}
  virtual void starving(const StarvingEvent&) {}
  virtual void released(const ReleasedEvent&) {}
  virtual void lease_lost(const LeaseLostEvent&) {}
  virtual void renewed(const RenewedEvent&) {}
  virtual void counter_waited(const CounterWaitEvent&) {}
  virtual void permits_released(const PermitsReleasedEvent&) {}
};

}  // namespace lockbridge
