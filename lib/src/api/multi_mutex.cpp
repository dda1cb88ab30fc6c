#include "lockbridge/multi_mutex.hpp"

#include <memory>
#include <utility>
#include <vector>

#include "core/key_set_target.hpp"
#include "core/lock_core.hpp"
#include "redis/client_state.hpp"

namespace lockbridge {

MultiMutex::MultiMutex(Client client, std::vector<std::string> keys, MutexOptions options) {
  options.validate();
  const std::shared_ptr<detail::ClientState>& state = client.state();
  auto target = detail::make_key_set_target(state, std::move(keys), options);
  core_ = std::make_unique<detail::LockCore>(state, std::move(target), std::move(options), "MultiMutex");
}

MultiMutex::~MultiMutex() = default;  // the core releases the keys
MultiMutex::MultiMutex(MultiMutex&&) noexcept = default;
MultiMutex& MultiMutex::operator=(MultiMutex&& other) noexcept = default;  // the old core releases its keys

void MultiMutex::lock() { core_->lock(); }

bool MultiMutex::try_lock() { return core_->try_once(); }

bool MultiMutex::try_lock_until_steady(std::chrono::steady_clock::time_point deadline, std::stop_token stop) {
  return core_->acquire_until(deadline, std::move(stop));
}

void MultiMutex::unlock() noexcept {
  if (core_) core_->release();
}

bool MultiMutex::owns_lock() const noexcept { return core_ && core_->holds(); }
std::chrono::milliseconds MultiMutex::valid_for() const noexcept {
  return core_ ? core_->valid_for() : std::chrono::milliseconds::zero();
}
const std::vector<std::string>& MultiMutex::keys() const noexcept {
  return static_cast<const detail::KeySetTarget&>(core_->target()).keys();  // a MultiMutex's target is always one
}
std::string MultiMutex::value() const { return core_->value(); }
const MutexOptions& MultiMutex::options() const noexcept { return core_->options(); }
std::error_code MultiMutex::last_error() const noexcept { return core_->last_error(); }

}  // namespace lockbridge
