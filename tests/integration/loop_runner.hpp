// The event-driven tests' loop: an Asio io_context with lockbridge's event loop on it, run from
// the test's thread until what the test waits for has happened. Every wait is bounded (10 s), and
// a bound reached is a failure, never a pass: tests assert behaviour, not timings.
#pragma once

#include <asio/io_context.hpp>

#include <chrono>
#include <memory>
#include <stdexcept>

#include "lockbridge/asio.hpp"
#include "util/task.hpp"

namespace lockbridge::testing {

class LoopRunner {
 public:
  static constexpr std::chrono::seconds kBound{10};

  // Runs the loop until `done()`; whether it came within the bound.
  template <class Done>
  bool run_until(Done&& done) {
    const auto give_up = std::chrono::steady_clock::now() + kBound;
    while (!done() && std::chrono::steady_clock::now() < give_up) {
      io_.run_for(std::chrono::milliseconds(5));
      io_.restart();
    }
    return done();
  }
  // Runs the loop until `task` ends, and returns its result (or throws what it threw).
  template <class T>
  T finish(detail::Task<T> task) {
    bool done = false;
    task.then([&] { done = true; });
    if (!run_until([&] { return done; })) throw std::runtime_error("the task did not end within the bound");
    return task.result();
  }

  // What lockbridge's objects left to finish in the background (a waiter leaving its queue, a
  // lock released as its object went) runs to its end before the io_context goes: the loop runs
  // until it has no work left, or the bound.
  ~LoopRunner() { drain(); }
  void drain() {
    io_.restart();
    io_.run_for(kBound);
  }

  asio::io_context& io() noexcept { return io_; }
  const std::shared_ptr<AsioEventLoop>& loop() const noexcept { return loop_; }

 private:
  asio::io_context io_;
  std::shared_ptr<AsioEventLoop> loop_ = std::make_shared<AsioEventLoop>(io_.get_executor());
};

}  // namespace lockbridge::testing
