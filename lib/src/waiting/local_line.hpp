// The threads of one process that wait for the same lock (same server, same key) line up here:
// only the first in line contends in Redis, they are served in arrival order, and when a lock
// held in this process is released the first in line hears it directly, without a message from
// Redis or a failed attempt. Every waiter sleeps on its own condition variable, so each event
// wakes exactly the one thread it concerns (the first in line), not the whole line.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>

namespace lockbridge::detail {

class LocalLine {
 public:
  using Clock = std::chrono::steady_clock;

  // The line for `identity` (server and key), shared by every Mutex of this process on it.
  static std::shared_ptr<LocalLine> for_lock(const std::string& identity);

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

   private:
    std::shared_ptr<LocalLine> line_;
    std::list<std::condition_variable_any>::iterator it_;
  };

  // A Mutex of this process took the lock, valid until `until`; returns the number of this hold,
  // which the holder passes to the two calls below.
  std::uint64_t held_here(Clock::time_point until);
  // The holder extended its lease.
  void extended_here(std::uint64_t hold, Clock::time_point until);
  // The hold ended: released, or its lease lost (which the renewal thread may find while the
  // owner's thread is away). The first in line goes on to contend in Redis. An older hold
  // changes nothing: a holder that learns late of its loss cannot end a newer holder's hold.
  void released_here(std::uint64_t hold);

 private:
  void wake_first();  // with mutex_ held

  std::mutex mutex_;
  // Arrival order; each waiter sleeps on its own (the _any kind: a stop request wakes it).
  std::list<std::condition_variable_any> waiters_;
  bool held_ = false;
  std::uint64_t hold_ = 0;  // the number of the latest hold
  Clock::time_point held_until_{};
};

}  // namespace lockbridge::detail
