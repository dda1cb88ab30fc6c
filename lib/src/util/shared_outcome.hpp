// The outcome of one piece of work that any number of coroutines on the loop wait for (a connect
// made off the loop, a read of the cluster's slot map): each waits until it comes or until its
// own deadline, and one whose coroutine is destroyed while it waits (its operation was cancelled)
// is never resumed and leaves no timer armed.
#pragma once

#include <chrono>
#include <coroutine>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "lockbridge/error.hpp"
#include "lockbridge/event_loop.hpp"
#include "util/task.hpp"

namespace lockbridge::detail {

template <class T>
class SharedOutcome {
 public:
  using Clock = std::chrono::steady_clock;
  using Outcome = std::variant<T, Error>;

  // Whether anyone waits for the outcome now.
  bool awaited() const noexcept { return !waiters_.empty(); }

  // Waits on `loop` for tell(), until `until` (time_point::max(): no limit); past it, throws
  // Error{timeout, late}. Throws the Error it is told.
  Task<T> wait(EventLoop& loop, Clock::time_point until, std::string late) {
    auto waiter = std::make_shared<Waiter>();
    waiters_.push_back(waiter);
    if (until != Clock::time_point::max()) {
      waiter->timer = loop.timer();
      waiter->timer->expire_at(until, [weak = std::weak_ptr<Waiter>(waiter), late = std::move(late)] {
        if (const auto waiting = weak.lock()) settle(waiting, Error(Errc::timeout, late));
      });
    }
    Wait wait(waiter);
    co_return co_await wait;
  }

  // Resumes every waiter (in place, one after another) with `outcome`.
  void tell(const Outcome& outcome) {
    for (const auto& waiter : std::exchange(waiters_, {})) settle(waiter, outcome);
  }

 private:
  struct Waiter {
    std::optional<Outcome> outcome;
    std::coroutine_handle<> waiting{};
    std::unique_ptr<EventLoop::Timer> timer;  // its deadline
    bool gone = false;
  };

  class Wait {
   public:
    explicit Wait(std::shared_ptr<Waiter> waiter) noexcept : waiter_(std::move(waiter)) {}
    ~Wait() {
      // Destroyed unresumed: the operation was cancelled. Its deadline need not fire.
      waiter_->gone = true;
      waiter_->timer.reset();
    }
    Wait(const Wait&) = delete;
    Wait& operator=(const Wait&) = delete;
    bool await_ready() const noexcept { return waiter_->outcome.has_value(); }
    void await_suspend(std::coroutine_handle<> waiting) noexcept { waiter_->waiting = waiting; }
    T await_resume() {
      if (auto* error = std::get_if<Error>(&*waiter_->outcome)) throw *error;
      return std::get<T>(*waiter_->outcome);
    }

   private:
    std::shared_ptr<Waiter> waiter_;
  };

  static void settle(const std::shared_ptr<Waiter>& waiter, const Outcome& outcome) {
    if (waiter->gone || waiter->outcome) return;
    waiter->outcome.emplace(outcome);
    waiter->timer.reset();
    if (waiter->waiting) std::exchange(waiter->waiting, {}).resume();
  }

  std::vector<std::shared_ptr<Waiter>> waiters_;
};

}  // namespace lockbridge::detail
