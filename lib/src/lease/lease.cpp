#include "lease.hpp"

#include <utility>

namespace lockbridge::detail {

Lease::Lease(std::shared_ptr<const LockStrategy> strategy_, std::string key_, std::string value,
             Clock::time_point valid_until, std::optional<std::uint64_t> fence_, std::optional<Renewal> renewal_,
             std::function<void(const Error&)> on_lost)
    : strategy(std::move(strategy_)),
      key(std::move(key_)),
      fence(fence_),
      renewal(renewal_),
      on_lost_(std::move(on_lost)),
      value_(std::move(value)),
      valid_until_(valid_until) {}

Lease::Snapshot Lease::snapshot() const {
  std::lock_guard lock(mutex_);
  return Snapshot{value_, valid_until_, state_ == State::held};
}

void Lease::renewed(std::string value, Clock::time_point valid_until) {
  std::lock_guard lock(mutex_);
  if (state_ != State::held) return;
  value_ = std::move(value);
  valid_until_ = valid_until;
}

void Lease::released() {
  {
    std::lock_guard lock(mutex_);
    if (state_ != State::held) return;
    state_ = State::released;
  }
  stop_.request_stop();
}

bool Lease::lost(const Error& why) noexcept {
  {
    std::lock_guard lock(mutex_);
    if (state_ != State::held) return false;
    state_ = State::lost;
  }
  if (on_lost_) {
    try {
      on_lost_(why);
    } catch (...) {  // a throwing handler must not take the renewal thread down
    }
  }
  stop_.request_stop();
  return true;
}

}  // namespace lockbridge::detail
