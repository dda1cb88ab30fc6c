// Task<T>: a C++20 coroutine that computes a T, so that logic which waits (the waiting loop, and
// what it waits on) is written once and driven two ways. The blocking front runs a task to its end
// on the calling thread (run_now): every step it awaits completes in place, so nothing suspends and
// no thread, queue or allocation beyond the coroutine frames is involved. An event-driven front
// starts it and resumes it from its own loop when what a step waits for has happened, so a waiter
// costs a coroutine frame, not a thread.
//
// A Task is eager: it runs from its call until it ends or first waits for an event. Awaiting a task
// that has already ended does not suspend the awaiter, so a long chain of steps that complete in
// place (a blocking wait's thousands of attempts) runs in a loop, not in a deepening stack, at any
// optimisation level. A task that did wait resumes its awaiter when it ends. Move-only, owns its
// frame; what a task throws is rethrown where it is awaited (or by run_now / result).
#pragma once

#include <atomic>
#include <coroutine>
#include <exception>
#include <functional>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <variant>

namespace lockbridge::detail {

template <class T>
class Task;

namespace task_impl {

// Who learns first that the task ended: the task itself, ending before anyone waited on it, or
// the awaiter (or a started task's callback) registered before it ended. One exchange settles it,
// so a task that ends on another thread than the one registering the awaiter is still resumed
// exactly once.
enum State : int { running = 0, awaited = 1, ended = 2 };

struct FinalAwaiter {
  bool await_ready() const noexcept { return false; }
  template <class Promise>
  std::coroutine_handle<> await_suspend(std::coroutine_handle<Promise> done) noexcept {
    auto& promise = done.promise();
    if (promise.state.exchange(ended, std::memory_order_acq_rel) != awaited) return std::noop_coroutine();
    if (promise.continuation) return promise.continuation;
    // A started task's callback may destroy the task: the coroutine counts as suspended here, and
    // nothing of the frame is touched after the call.
    std::function<void()> on_done = std::move(promise.on_done);
    on_done();
    return std::noop_coroutine();
  }
  void await_resume() const noexcept {}
};

struct PromiseBase {
  std::suspend_never initial_suspend() const noexcept { return {}; }
  FinalAwaiter final_suspend() const noexcept { return {}; }
  // Registers what runs when the task ends; false when it has ended already (then nothing is run).
  bool register_awaiter() noexcept { return state.exchange(awaited, std::memory_order_acq_rel) != ended; }
  bool ended_already() const noexcept { return state.load(std::memory_order_acquire) == ended; }
  std::atomic<int> state{running};
  std::coroutine_handle<> continuation{};
  std::function<void()> on_done{};  // a started task's
};

template <class T>
struct Promise : PromiseBase {
  Task<T> get_return_object() noexcept;
  template <class U>
  void return_value(U&& value) {
    result.template emplace<1>(std::forward<U>(value));
  }
  void unhandled_exception() noexcept { result.template emplace<2>(std::current_exception()); }
  T take() {
    if (result.index() == 2) std::rethrow_exception(std::get<2>(result));
    return std::move(std::get<1>(result));
  }
  std::variant<std::monostate, T, std::exception_ptr> result;
};

template <>
struct Promise<void> : PromiseBase {
  Task<void> get_return_object() noexcept;
  void return_void() noexcept {}
  void unhandled_exception() noexcept { error = std::current_exception(); }
  void take() {
    if (error) std::rethrow_exception(error);
  }
  std::exception_ptr error;
};

}  // namespace task_impl

template <class T = void>
class [[nodiscard]] Task {
 public:
  using promise_type = task_impl::Promise<T>;
  using Handle = std::coroutine_handle<promise_type>;

  Task() noexcept = default;
  explicit Task(Handle handle) noexcept : handle_(handle) {}
  Task(Task&& other) noexcept : handle_(std::exchange(other.handle_, {})) {}
  Task& operator=(Task&& other) noexcept {
    if (this != &other) {
      destroy();
      handle_ = std::exchange(other.handle_, {});
    }
    return *this;
  }
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;
  ~Task() { destroy(); }

  bool valid() const noexcept { return static_cast<bool>(handle_); }
  bool done() const noexcept { return handle_ && handle_.done(); }

  // Awaiting a task resumes the awaiter with its result once it ends: at once if it has.
  auto operator co_await() && noexcept {
    struct Awaiter {
      Handle handle;
      bool await_ready() const noexcept { return handle.promise().ended_already(); }
      bool await_suspend(std::coroutine_handle<> awaiting) noexcept {
        handle.promise().continuation = awaiting;
        return handle.promise().register_awaiter();
      }
      T await_resume() { return handle.promise().take(); }
    };
    return Awaiter{handle_};
  }

  // The result of a task that ran to its end in place (or rethrows what it threw). For tasks whose
  // steps complete in place (the blocking front's): one still waiting on a step that completes
  // later is a logic error, reported as std::logic_error with the task abandoned.
  T run_now() && {
    if (!handle_.promise().ended_already()) {
      destroy();
      throw std::logic_error("lockbridge: a blocking call waited on an event-driven step");
    }
    return handle_.promise().take();
  }

  // `on_done` is called once the task has ended: now, if it has, else on whatever thread resumes
  // its last step; result() may then be taken. The Task must outlive the run: destroying one that
  // has not ended destroys its frame, and with it every step it was waiting on.
  void then(std::function<void()> on_done) {
    handle_.promise().on_done = std::move(on_done);
    if (!handle_.promise().register_awaiter()) std::exchange(handle_.promise().on_done, {})();
  }
  // After the task ended: its result, or what it threw.
  T result() { return handle_.promise().take(); }

 private:
  void destroy() noexcept {
    if (handle_) std::exchange(handle_, {}).destroy();
  }
  Handle handle_{};
};

namespace task_impl {
template <class T>
Task<T> Promise<T>::get_return_object() noexcept {
  return Task<T>(std::coroutine_handle<Promise<T>>::from_promise(*this));
}
inline Task<void> Promise<void>::get_return_object() noexcept {
  return Task<void>(std::coroutine_handle<Promise<void>>::from_promise(*this));
}
}  // namespace task_impl

}  // namespace lockbridge::detail
