// One lock through either front, for tests that state a behaviour once and run it on both: the
// blocking Mutex, or the async AsyncMutex driven by an io_context on the test's thread. FrontLock
// turns either front's operations into calls that return once the operation ended, with the
// front's outcome and error code.
#pragma once

#include <chrono>
#include <functional>
#include <future>
#include <optional>
#include <ostream>
#include <string>
#include <system_error>

#include "lockbridge/asio.hpp"
#include "loop_runner.hpp"
#include "redis_test_support.hpp"

namespace lockbridge::testing {

enum class Front { blocking, async };
inline void PrintTo(Front front, std::ostream* out) { *out << (front == Front::blocking ? "blocking" : "async"); }

using FrontClock = std::chrono::steady_clock;

// What a call through a front came to: its result, or the error it reported (thrown by the
// blocking front, passed to the handler by the async one).
struct Outcome {
  bool result = false;
  std::error_code error;
};

class FrontLock {
 public:
  virtual ~FrontLock() = default;
  virtual Outcome try_lock() = 0;
  virtual Outcome try_lock_for(std::chrono::milliseconds wait) = 0;
  // Starts a wait of at most `wait` that goes on meanwhile; finish_wait() is its outcome.
  virtual void start_lock_for(std::chrono::milliseconds wait) = 0;
  virtual Outcome finish_wait() = 0;
  virtual std::error_code unlock() = 0;
  virtual Outcome extend(std::chrono::milliseconds lease) = 0;
  virtual bool owns_lock() const = 0;
  virtual std::chrono::milliseconds valid_for() const = 0;
  virtual std::string value() const = 0;
  virtual std::optional<std::uint64_t> fence() const = 0;
  // The loss notice: the front's own thread (blocking) or the loop (async) calls it.
  virtual void on_lease_lost(std::function<void()> told) = 0;
  // Lets the front do what it does meanwhile until `done()` (the async front runs its loop), 10 s at most.
  virtual bool let_run_until(const std::function<bool()>& done) = 0;
  void let_run_for(std::chrono::milliseconds how_long) {
    const auto until = FrontClock::now() + how_long;
    let_run_until([until] { return FrontClock::now() >= until; });
  }
};

template <class F>
inline Outcome outcome_of(F&& call) {
  try {
    return Outcome{call(), {}};
  } catch (const Error& error) {
    return Outcome{false, error.code()};
  }
}

class BlockingFrontLock final : public FrontLock {
 public:
  BlockingFrontLock(const Client& client, const std::string& key, const MutexOptions& options)
      : mutex_(client, key, options) {}
  Outcome try_lock() override {
    return outcome_of([&] { return mutex_.try_lock(); });
  }
  Outcome try_lock_for(std::chrono::milliseconds wait) override {
    return outcome_of([&] { return mutex_.try_lock_for(wait); });
  }
  void start_lock_for(std::chrono::milliseconds wait) override {
    waiting_ = std::async(std::launch::async, [this, wait] { return try_lock_for(wait); });
  }
  Outcome finish_wait() override {
    if (waiting_.wait_for(std::chrono::seconds(30)) != std::future_status::ready)
      return Outcome{false, make_error_code(Errc::timeout)};
    return waiting_.get();
  }
  std::error_code unlock() override {
    mutex_.unlock();
    return mutex_.last_error();
  }
  Outcome extend(std::chrono::milliseconds lease) override {
    return outcome_of([&] { return mutex_.extend(lease); });
  }
  bool owns_lock() const override { return mutex_.owns_lock(); }
  std::chrono::milliseconds valid_for() const override { return mutex_.valid_for(); }
  std::string value() const override { return mutex_.value(); }
  std::optional<std::uint64_t> fence() const override { return mutex_.fence(); }
  void on_lease_lost(std::function<void()> told) override {
    mutex_.on_lease_lost([told = std::move(told)](const Error&) { told(); });
  }
  bool let_run_until(const std::function<bool()>& done) override { return eventually(done); }

 private:
  Mutex mutex_;
  std::future<Outcome> waiting_;
};

class AsyncFrontLock final : public FrontLock {
 public:
  AsyncFrontLock(LoopRunner& runner, AsyncClient& client, const std::string& key, const MutexOptions& options)
      : runner_(runner), mutex_(client, key, options) {}
  Outcome try_lock() override {
    return wait_for_acquire([&](auto done) { mutex_.async_try_lock(done); });
  }
  Outcome try_lock_for(std::chrono::milliseconds wait) override {
    return wait_for_acquire([&](auto done) { mutex_.async_try_lock_for(wait, done); });
  }
  void start_lock_for(std::chrono::milliseconds wait) override {
    waited_.reset();
    mutex_.async_try_lock_for(wait, [this](std::error_code error, bool acquired) {
      waited_ = Outcome{acquired, error};
    });
  }
  Outcome finish_wait() override {
    if (!let_run_until([&] { return waited_.has_value(); })) return Outcome{false, make_error_code(Errc::timeout)};
    return *waited_;
  }
  std::error_code unlock() override {
    std::optional<std::error_code> released;
    mutex_.async_unlock([&](std::error_code error) { released = error; });
    if (!let_run_until([&] { return released.has_value(); })) return make_error_code(Errc::timeout);
    return *released;
  }
  Outcome extend(std::chrono::milliseconds lease) override {
    return wait_for_acquire([&](auto done) { mutex_.async_extend(lease, done); });
  }
  bool owns_lock() const override { return mutex_.owns_lock(); }
  std::chrono::milliseconds valid_for() const override { return mutex_.valid_for(); }
  std::string value() const override { return mutex_.value(); }
  std::optional<std::uint64_t> fence() const override { return mutex_.fence(); }
  void on_lease_lost(std::function<void()> told) override {
    mutex_.on_lease_lost([told = std::move(told)](const Error&) { told(); });
  }
  bool let_run_until(const std::function<bool()>& done) override { return runner_.run_until(done); }

 private:
  template <class Start>
  Outcome wait_for_acquire(Start start) {
    std::optional<Outcome> outcome;
    start([&](std::error_code error, bool result) { outcome = Outcome{result, error}; });
    if (!let_run_until([&] { return outcome.has_value(); })) return Outcome{false, make_error_code(Errc::timeout)};
    return *outcome;
  }

  LoopRunner& runner_;
  lockbridge::AsyncMutex mutex_;
  std::optional<Outcome> waited_;
};

}  // namespace lockbridge::testing
