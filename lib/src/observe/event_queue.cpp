#include "observe/event_queue.hpp"

#include <utility>

#include "lockbridge/observer.hpp"
#include "util/background_thread.hpp"

namespace lockbridge::detail {

EventQueue::~EventQueue() {
  {
    std::lock_guard lock(shared_->mutex);
    shared_->stopping = true;
  }
  shared_->posted.notify_one();
  if (!thread_.joinable()) return;
  if (thread_.get_id() == std::this_thread::get_id()) {
    thread_.detach();
  } else {
    thread_.join();
  }
}

void EventQueue::post(std::function<void()> deliver) noexcept {
  try {
    std::unique_lock lock(shared_->mutex);
    if (shared_->pending.size() >= Observer::kMaxPendingEvents) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    shared_->pending.push_back(std::move(deliver));
    if (!thread_.joinable()) thread_ = start_background_thread("lockbridge-obs", [shared = shared_] { run(shared); });
    const bool wake = shared_->idle || shared_->pending.size() == kWakeAt;
    lock.unlock();
    if (wake) shared_->posted.notify_one();
  } catch (...) {  // out of memory, or no thread could be started
    dropped_.fetch_add(1, std::memory_order_relaxed);
  }
}

void EventQueue::run(const std::shared_ptr<Shared>& shared) noexcept {
  std::unique_lock lock(shared->mutex);
  for (;;) {
    if (shared->pending.empty() && !shared->stopping) {
      shared->idle = true;
      shared->posted.wait(lock, [&] { return shared->stopping || !shared->pending.empty(); });
      shared->idle = false;
      shared->posted.wait_for(lock, kGather, [&] { return shared->stopping || shared->pending.size() >= kWakeAt; });
    }
    if (shared->pending.empty()) return;  // stopping, and everything delivered
    std::function<void()> deliver = std::move(shared->pending.front());
    shared->pending.pop_front();
    lock.unlock();
    try {
      deliver();
    } catch (...) {  // an observer that throws loses that event, nothing else
    }
    deliver = nullptr;  // what it captured goes before the lock is taken again
    lock.lock();
  }
}

}  // namespace lockbridge::detail
