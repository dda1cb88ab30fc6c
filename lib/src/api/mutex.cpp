#include "lockbridge/mutex.hpp"

#include <memory>
#include <utility>

#include "core/lock_core.hpp"
#include "core/quorum_target.hpp"
#include "core/single_key_target.hpp"
#include "redis/client_state.hpp"
#include "util/option_limits.hpp"

namespace lockbridge {

// ---- Mutex -----------------------------------------------------------------------------------

Mutex::Mutex(Client client, std::string key, MutexOptions options) {
  options.validate();
  if (key.empty()) throw Error(Errc::bad_option, "lock key must not be empty");
  const std::shared_ptr<detail::ClientState>& state = client.state();
  std::unique_ptr<detail::LockTarget> target;
  if (state->redlock()) {
    target = std::make_unique<detail::QuorumTarget>(state, std::move(key), options);
  } else {
    target = std::make_unique<detail::SingleKeyTarget>(state, std::move(key), options);
  }
  core_ = std::make_unique<detail::LockCore>(state, std::move(target), std::move(options), "Mutex");
}

Mutex::~Mutex() = default;  // the core releases every hold
Mutex::Mutex(Mutex&&) noexcept = default;
Mutex& Mutex::operator=(Mutex&& other) noexcept = default;  // the old core releases its holds

void Mutex::lock() { core_->lock(); }

bool Mutex::try_lock() { return core_->try_once(); }

bool Mutex::try_lock_until_steady(std::chrono::steady_clock::time_point deadline, std::stop_token stop) {
  return core_->acquire_until(deadline, std::move(stop));
}

void Mutex::unlock() noexcept {
  if (core_) core_->release();
}

void Mutex::abandon() noexcept {
  if (core_) core_->abandon();
}

bool Mutex::extend(std::chrono::milliseconds lease) {
  detail::require_within("extend: lease", lease, std::chrono::milliseconds(1));
  return core_->extend(lease);
}

bool Mutex::owns_lock() const noexcept { return core_ && core_->holds(); }
std::chrono::milliseconds Mutex::valid_for() const noexcept {
  return core_ ? core_->valid_for() : std::chrono::milliseconds::zero();
}
std::string Mutex::value() const { return core_->value(); }
std::optional<int> Mutex::replicas_acknowledged() const noexcept {
  return core_ ? core_->replicas_acknowledged() : std::nullopt;
}
std::optional<std::uint64_t> Mutex::fence() const noexcept { return core_ ? core_->fence() : std::nullopt; }
void Mutex::on_lease_lost(std::function<void(const Error&)> handler) { core_->on_lease_lost(std::move(handler)); }
std::stop_token Mutex::lease_token() const noexcept { return core_ ? core_->lease_token() : std::stop_token(); }
LockInfo Mutex::inspect() const { return core_->inspect(); }
const std::string& Mutex::key() const noexcept { return core_->target().key(); }
const MutexOptions& Mutex::options() const noexcept { return core_->options(); }
std::error_code Mutex::last_error() const noexcept { return core_->last_error(); }
void Mutex::on_release_error(std::function<void(const Error&)> handler) { core_->on_release_error(std::move(handler)); }

}  // namespace lockbridge
