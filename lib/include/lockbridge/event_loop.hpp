// lockbridge: the event loop that event-driven locks run on, which is the program's own.
//
// lockbridge's event-driven engine does its I/O and its waiting through this interface, on the
// program's loop, so the library carries no event loop (and no Asio) of its own, and a waiting lock
// costs no thread. lockbridge/asio.hpp implements it on an Asio executor; a program on another
// loop (libuv, its own epoll) can implement it as well.
//
// The library calls the loop, its timers and its descriptors only from work the loop runs, except
// post(), which any thread may call. The loop runs the work and the callbacks it is given one at a
// time (on one thread, or a strand), never inside the call that gave them to it. The loop (and the
// program's io_context under it) must outlive every lockbridge object that uses it, and the work
// they leave to finish (a lock released as its object went): destroy those first and let the loop
// run out of work, as Asio's own I/O objects are destroyed before their io_context.
#pragma once

#include <chrono>
#include <functional>
#include <memory>

#include "lockbridge/export.hpp"

namespace lockbridge {

class LOCKBRIDGE_API EventLoop {
 public:
  using Clock = std::chrono::steady_clock;
  virtual ~EventLoop() = default;

  // Runs `work` on the loop soon. Thread-safe. Work posted to a loop that is gone is dropped.
  virtual void post(std::function<void()> work) = 0;

  // A timer, set again and again: one pending expiry at a time.
  class LOCKBRIDGE_API Timer {
   public:
    virtual ~Timer() = default;  // cancels the pending expiry
    // Calls `fire` on the loop once `when` has come (soon, when it has already), in place of any
    // pending expiry, whose callback is then never called.
    virtual void expire_at(Clock::time_point when, std::function<void()> fire) = 0;
    // The pending callback, if any, is never called.
    virtual void cancel() noexcept = 0;
  };
  virtual std::unique_ptr<Timer> timer() = 0;

  // Readiness of a file descriptor that lockbridge owns (a connection's socket). The loop does not
  // own or close it, and stops using it when this object is destroyed (before lockbridge closes it).
  class LOCKBRIDGE_API Descriptor {
   public:
    virtual ~Descriptor() = default;  // cancels both waits
    // Calls `ready` once, on the loop, when the descriptor is readable, or hung up or in error
    // (lockbridge's next read finds out which). One read wait at a time.
    virtual void wait_readable(std::function<void()> ready) = 0;
    // The same for room to write. One write wait at a time, independent of the read wait.
    virtual void wait_writable(std::function<void()> ready) = 0;
    // Neither pending callback is ever called.
    virtual void cancel() noexcept = 0;
  };
  virtual std::unique_ptr<Descriptor> watch(int fd) = 0;
};

}  // namespace lockbridge
