// The observer thread of one Client (lockbridge/observer.hpp): events are posted by the locks'
// threads and the renewal thread, and delivered one at a time, in order, on a thread of its own,
// started with the first event. Posting never waits for a callback; beyond
// Observer::kMaxPendingEvents undelivered events, new ones are dropped and counted.
//
// Waking a thread costs more than a lock cycle's share of a core (a futex call, and on a busy
// machine a context switch that Redis and the lock's own thread pay for), so the thread is not
// woken per event: the first event after a quiet spell wakes it, it then gathers for kGather and
// delivers what came in that time. A busy lock so wakes it about once per kGather, an idle one
// never, and an event is delivered at most about kGather (plus the callbacks before it) late.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "lockbridge/observer.hpp"

namespace lockbridge::detail {

class EventQueue {
 public:
  EventQueue() = default;
  // Delivers what is pending, then stops the thread. Run on the observer thread itself (a callback
  // let go of the last lock of its Client), it cannot wait for itself: the thread is detached and
  // ends after the pending events.
  ~EventQueue();
  EventQueue(const EventQueue&) = delete;
  EventQueue& operator=(const EventQueue&) = delete;

  // `deliver` runs on the observer thread; an exception it throws is dropped. Never throws: an
  // event that cannot be queued (full, or out of memory) is counted as dropped.
  void post(std::function<void()> deliver) noexcept;

  std::uint64_t dropped() const noexcept { return dropped_.load(std::memory_order_relaxed); }

  // How long the woken thread lets events gather before delivering them.
  static constexpr std::chrono::milliseconds kGather{5};
  // Pending events that wake a gathering thread at once (a burst need not wait for kGather).
  static constexpr std::size_t kWakeAt = 512;

 private:
  struct Shared {
    std::mutex mutex;
    std::condition_variable posted;
    std::deque<std::function<void()>> pending;
    bool stopping = false;
    bool idle = false;  // the thread waits for a post to wake it (not gathering, not delivering)
  };
  static void run(const std::shared_ptr<Shared>& shared) noexcept;

  // Shared with the thread, which may outlive this object when detached.
  std::shared_ptr<Shared> shared_ = std::make_shared<Shared>();
  std::thread thread_;  // started by the first post()
  std::atomic<std::uint64_t> dropped_{0};
};

// Builds an event with `make` and posts `observer`'s `callback` with it to `queue`; nothing
// without an observer. Never throws: an event that cannot be built (out of memory) is lost, what
// it reports is not.
template <class Event, class Make>
void post_event(const std::shared_ptr<Observer>& observer, EventQueue& queue, void (Observer::*callback)(const Event&),
                Make make) noexcept {
  if (!observer) return;
  try {
    queue.post([observer, callback, event = make()] { ((*observer).*callback)(event); });
  } catch (...) {
  }
}

}  // namespace lockbridge::detail
