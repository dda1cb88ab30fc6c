#include "lease/lease.hpp"

#include <utility>

namespace lockbridge::detail {

Lease::Lease(std::shared_ptr<const LockStrategy> strategy_, std::string key_, std::string value,
             Clock::time_point valid_until, std::optional<std::uint64_t> fence_, std::optional<Renewal> renewal_,
             LossNotice on_lost, bool observed_)
    : strategy(std::move(strategy_)),
      key(std::move(key_)),
      fence(fence_),
      renewal(renewal_),
      observed(observed_),
      on_lost_(std::move(on_lost)),
      value_(std::move(value)),
      valid_until_(valid_until) {}

Lease::IoClaim Lease::claim_io() {
  std::unique_lock lock(mutex_);
  io_released_.wait(lock, [this] { return !io_claimed_; });
  io_claimed_ = true;
  return IoClaim(this);
}

Lease::IoClaim Lease::try_claim_io() {
  std::lock_guard lock(mutex_);
  if (io_claimed_) return {};
  io_claimed_ = true;
  return IoClaim(this);
}

void Lease::release_io() noexcept {
  std::lock_guard lock(mutex_);
  io_claimed_ = false;
  // Notified with the mutex held: a holder waiting in claim_io() may release and destroy this
  // Lease as soon as it sees the claim free, which it cannot do before this thread lets go of the
  // mutex, so the watchdog never touches a destroyed condition variable (a TSan run caught it).
  io_released_.notify_all();
}

Lease::IoClaim& Lease::IoClaim::operator=(IoClaim&& other) noexcept {
  if (this != &other) {
    if (lease_) lease_->release_io();
    lease_ = std::exchange(other.lease_, nullptr);
  }
  return *this;
}

Lease::IoClaim::~IoClaim() {
  if (lease_) lease_->release_io();
}

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

bool Lease::lost(const Error& why, LeaseLossReason reason) noexcept {
  {
    std::lock_guard lock(mutex_);
    if (state_ != State::held) return false;
    state_ = State::lost;
  }
  // The token first: whoever hears the notice (the handler, or anyone it tells) finds the work
  // under the lock already asked to stop.
  stop_.request_stop();
  if (on_lost_) {
    try {
      on_lost_(why, reason);
    } catch (...) {  // a throwing handler must not take the renewal thread down
    }
  }
  return true;
}

}  // namespace lockbridge::detail
