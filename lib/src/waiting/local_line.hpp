// The waiters of one process for the same lock (same server, same key) line up here, blocking
// threads and event-driven waiters alike: only the first in line contends in Redis, they are served
// in arrival order, and when a lock held in this process is released the first in line hears it
// directly, without a message from Redis or a failed attempt. Every event wakes exactly the one
// waiter it concerns (the first in line), not the whole line: a thread sleeps on its own condition
// variable; an event-driven waiter is told through its own callback, which posts to its loop.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>

namespace lockbridge::detail {

class LocalLine {
  struct Waiter;  // one place's way to be woken

 public:
  using Clock = std::chrono::steady_clock;

  // The line named `name` (server and key), shared by every Mutex of this process on it.
  static std::shared_ptr<LocalLine> for_lock(const std::string& name);

  // A place in the line; leaves it (letting the next one go first) when destroyed.
  class Place {
   public:
    explicit Place(std::shared_ptr<LocalLine> line);
    ~Place();
    Place(const Place&) = delete;
    Place& operator=(const Place&) = delete;

    // Blocks until this place is the first in line, or `deadline` passes or `stop` is requested
    // (then false).
    bool wait_for_turn(Clock::time_point deadline, const std::stop_token& stop = {});
    // For the first in line: while a Mutex of this process holds the lock, sleeps until it is
    // released here, its lease ends, `until` passes or `stop` is requested. Returns at once when
    // nobody here holds it.
    void wait_while_held_here(Clock::time_point until, const std::stop_token& stop = {});

    // For an event-driven waiter, which must not sleep: `changed` is called whenever a blocking
    // one in this place would be woken (this place became first, the hold here ended), from any
    // thread with the line's mutex held, so it must only post to the waiter's loop, which then
    // asks the two checks below. Replaces an earlier one; empty: none.
    void on_change(std::function<void()> changed);
    bool first_now() const;
    // Until when a lock of this process holds it (its lease's end); nullopt when none does.
    std::optional<Clock::time_point> held_until_now() const;

   private:
    std::shared_ptr<LocalLine> line_;
    std::list<Waiter>::iterator it_;
  };

  // A Mutex of this process took the lock, valid until `until`; returns the number of this hold,
  // which the holder passes to the two calls below.
  std::uint64_t held_here(Clock::time_point until);
  // The holder extended its lease.
  void extended_here(std::uint64_t hold, Clock::time_point until);
  // The hold ended: released, or its lease lost (which the renewal thread may find while the
  // holder's thread is away). The first in line goes on to contend in Redis. An older hold
  // changes nothing: a holder that learns late of its loss cannot end a newer holder's hold.
  void released_here(std::uint64_t hold);

  // How many wait in line now (a snapshot, for tests and diagnostics).
  std::size_t waiting() const;

 private:
  void wake_first();  // with mutex_ held

  mutable std::mutex mutex_;
  // Arrival order; each waiter is woken on its own.
  std::list<Waiter> waiters_;
  bool held_ = false;
  std::uint64_t hold_ = 0;  // the number of the latest hold
  Clock::time_point held_until_{};
};

}  // namespace lockbridge::detail
