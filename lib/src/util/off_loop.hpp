// Blocking work for an event-driven object, done off the program's loop: a connect, a TLS
// handshake, AUTH and SELECT, a read of the cluster's slot map. Each piece runs on a short-lived
// thread of its own, and what it found is posted back to the loop as a closure, run there only
// while the object that asked still exists.
#pragma once

#include <functional>
#include <memory>
#include <mutex>

#include "lockbridge/event_loop.hpp"

namespace lockbridge::detail {

class OffLoop {
 public:
  // `loop` must outlive this object (its owner keeps it alive).
  explicit OffLoop(EventLoop& loop) noexcept : loop_(loop) {}
  // Work still running posts nothing after this.
  ~OffLoop();
  OffLoop(const OffLoop&) = delete;
  OffLoop& operator=(const OffLoop&) = delete;

  // Runs `work` on a new thread named `name`; the closure it returns is posted to the loop. The
  // work must catch what it throws and keep alive what it uses; the closure must reach its owner
  // weakly, as the owner may be gone by the time the loop runs it.
  void run(const char* name, std::function<std::function<void()>()> work);

 private:
  // Whether the owner still exists, for the worker threads: they post only under this lock and
  // only while it does, so none posts to a loop its owner outlived. (They hold no reference to the
  // loop: a last reference dropped on such a thread could destroy the loop's strand after the
  // program's io_context.)
  struct Alive {
    std::mutex mutex;
    bool alive = true;
  };
  EventLoop& loop_;
  const std::shared_ptr<Alive> alive_ = std::make_shared<Alive>();
};

}  // namespace lockbridge::detail
