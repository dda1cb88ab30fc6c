// The outcome of one piece of work that any number of coroutines on the loop wait for (a connect
// made off the loop, a read of the cluster's slot map; each ends within its own timeouts): a
// waiter whose coroutine is destroyed while it waits (its operation was cancelled) is never
// resumed.
#pragma once

#include <coroutine>
#include <memory>
#include <optional>
#include <utility>
#include <variant>
#include <vector>

#include "lockbridge/error.hpp"
#include "util/task.hpp"

namespace lockbridge::detail {

template <class T>
class SharedOutcome {
 public:
  using Outcome = std::variant<T, Error>;

  // Whether anyone waits for the outcome now.
  bool awaited() const noexcept { return !waiters_.empty(); }

  // Waits for tell() (on the loop, where tell() is called). Throws the Error it is told.
  Task<T> wait() {
    auto waiter = std::make_shared<Waiter>();
    waiters_.push_back(waiter);
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
    bool gone = false;
  };

  class Wait {
   public:
    explicit Wait(std::shared_ptr<Waiter> waiter) noexcept : waiter_(std::move(waiter)) {}
    ~Wait() { waiter_->gone = true; }  // destroyed unresumed: the operation was cancelled
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
    if (waiter->waiting) std::exchange(waiter->waiting, {}).resume();
  }

  std::vector<std::shared_ptr<Waiter>> waiters_;
};

}  // namespace lockbridge::detail
