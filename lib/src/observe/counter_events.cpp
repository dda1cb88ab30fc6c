#include "observe/counter_events.hpp"

#include <exception>

#include "lockbridge/error.hpp"

namespace lockbridge::detail {

CounterEvents::CounterEvents(ClientState& state, const std::string& key, std::string_view object)
    : observer_(state.observer), queue_(&state.events), object_(object) {
  if (observer_) key_ = key;
}

void CounterEvents::waited(Clock::time_point began, std::int64_t permits, int attempts, bool done,
                           std::error_code error) const noexcept {
  post_event(observer_, *queue_, &Observer::counter_waited, [&] {
    return CounterWaitEvent{{key_, object_}, permits, Clock::now() - began, attempts, done, error};
  });
}

void CounterEvents::released(std::int64_t permits, std::error_code error) const noexcept {
  post_event(observer_, *queue_, &Observer::permits_released, [&] {
    return PermitsReleasedEvent{{key_, object_}, permits, error};
  });
}

Task<bool> report_wait(Task<bool> wait, CounterEvents events, CounterEvents::Clock::time_point began,
                       std::int64_t permits, const int& attempts, std::stop_token stop) {
  bool done = false;
  try {
    done = co_await std::move(wait);
  } catch (...) {
    events.waited(began, permits, attempts, false, current_error_code());
    throw;
  }
  const bool stopped = !done && stop.stop_requested();
  events.waited(began, permits, attempts, done,
                stopped ? std::make_error_code(std::errc::operation_canceled) : std::error_code());
  co_return done;
}

std::error_code current_error_code() noexcept {
  try {
    throw;
  } catch (const std::system_error& error) {  // Error is one
    return error.code();
  } catch (...) {
    return make_error_code(Errc::io);
  }
}

}  // namespace lockbridge::detail
