// After a failed connect, further connects fail fast until a backoff has passed (doubling per
// failure, up to 16x ClientOptions::reconnect_backoff), so a down server is not hammered by every
// waiting lock. Shared by the pool (under its mutex) and the event-driven routes (on their loop):
// not thread-safe itself.
#pragma once

#include <algorithm>
#include <chrono>
#include <string>

#include "lockbridge/error.hpp"
#include "redis/reply.hpp"

namespace lockbridge::detail {

class ReconnectBackoff {
 public:
  using Clock = std::chrono::steady_clock;
  explicit ReconnectBackoff(std::chrono::milliseconds base) noexcept : base_(base) {}

  // Whether a connect now would be refused.
  bool active(Clock::time_point now = Clock::now()) const noexcept { return failures_ > 0 && now < retry_after_; }
  // What a refused connect throws: the last failure, and why it is not retried.
  Error refusal() const { return Error(Errc::io, last_failure_ + " (not retried yet: reconnect backoff)"); }
  void failed(const Error& error, Clock::time_point now = Clock::now()) {
    failures_ = std::min(failures_ + 1, 5U);
    retry_after_ = now + base_ * (1U << (failures_ - 1));
    last_failure_ = message_of(error);  // refusal() appends the code's description again
  }
  void succeeded() noexcept { failures_ = 0; }

 private:
  std::chrono::milliseconds base_;
  unsigned failures_ = 0;
  Clock::time_point retry_after_{};
  std::string last_failure_;
};

}  // namespace lockbridge::detail
