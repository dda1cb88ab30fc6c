// The events of the objects that are not locks (Latch, Semaphore, LeasedSemaphore; both fronts),
// posted to their Client's EventQueue for the Client's observer (lockbridge/observer.hpp:
// CounterWaitEvent, PermitsReleasedEvent). Without an observer nothing is built or posted. Made
// where a wait or a release begins; copies may outlive the object, not the Client.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>

#include <stop_token>

#include "lockbridge/observer.hpp"
#include "redis/client_state.hpp"
#include "util/task.hpp"

namespace lockbridge::detail {

class CounterEvents {
 public:
  using Clock = std::chrono::steady_clock;
  // `object`: "latch", "semaphore" or "leased_semaphore", a literal.
  CounterEvents(ClientState& state, const std::string& key, std::string_view object);

  bool observed() const noexcept { return observer_ != nullptr; }
  // A wait that began at `began` ended (CounterWaitEvent).
  void waited(Clock::time_point began, std::int64_t permits, int attempts, bool done,
              std::error_code error) const noexcept;
  void released(std::int64_t permits, std::error_code error) const noexcept;

 private:
  std::shared_ptr<Observer> observer_;
  EventQueue* queue_ = nullptr;
  std::string key_;  // only when observed
  std::string_view object_;
};

// Awaits `wait` (begun at `began`: a latch's wait, or a semaphore's acquiring call for `permits`,
// counting its tries in `attempts`) and reports how it ended: done, given up, stopped by `stop`,
// or failed (rethrown). Returns whether it was done.
Task<bool> report_wait(Task<bool> wait, CounterEvents events, CounterEvents::Clock::time_point began,
                       std::int64_t permits, const int& attempts, std::stop_token stop);

// The code of what a call threw, for an event: an Error's (or another system_error's: a
// cancellation), else Errc::io. Call from a catch block.
std::error_code current_error_code() noexcept;

}  // namespace lockbridge::detail
