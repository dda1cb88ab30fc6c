#include "lockbridge/mutex.hpp"

#include <algorithm>
#include <optional>
#include <thread>

#include "client_state.hpp"
#include "strategy.hpp"

namespace lockbridge {

namespace detail {

// The state of one lease holder, and the waiting loop that sits above every strategy.
class MutexCore {
 public:
  MutexCore(Client client, std::string key, MutexOptions options)
      : state_(client.state()),
        key_(std::move(key)),
        options_(std::move(options)),
        strategy_(make_strategy(options_, state_->scripts)) {}

  // One attempt.
  bool attempt() {
    if (held_) throw Error(Errc::bad_option, describe("lock", key_) + ": this Mutex already holds it");
    const auto started = std::chrono::steady_clock::now();
    AcquireAttempt result;
    std::optional<Error> lost_reply;
    {
      auto connection = state_->pool.borrow();
      try {
        result = strategy_->try_acquire(*connection, key_, options_.lease);
      } catch (const Error& error) {
        // The request may have reached the server even though its reply did not reach us.
        if (error.errc() != Errc::timeout && error.errc() != Errc::io && error.errc() != Errc::protocol) throw;
        lost_reply = error;
      }
    }  // the broken connection goes back (and is dropped) before we borrow a fresh one
    if (lost_reply) {
      abandon_unknown_attempt();
      throw *lost_reply;
    }
    if (!result.acquired) return false;
    held_ = true;
    value_ = std::move(result.value);
    // Counted from before the request left: the server's lease can only end later than this.
    valid_until_ = started + options_.lease;
    return true;
  }

  bool acquire_until(std::chrono::steady_clock::time_point deadline) {
    for (;;) {
      if (attempt()) return true;
      const auto now = std::chrono::steady_clock::now();
      if (now >= deadline) return false;
      std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(options_.retry_interval, deadline - now));
    }
  }

  void release() noexcept {
    if (!held_) return;
    held_ = false;
    try {
      auto connection = state_->pool.borrow();
      if (strategy_->release(*connection, key_, value_) == ReleaseOutcome::released) {
        last_error_.clear();
      } else {
        report(Error(Errc::lease_lost,
                     describe("release", key_) + ": the key no longer held our value; nothing was deleted"));
      }
    } catch (const Error& error) {
      report(error);
    } catch (const std::exception& error) {
      report(Error(Errc::io, describe("release", key_) + ": " + error.what()));
    }
  }

  bool extend(std::chrono::milliseconds lease) {
    if (!held_) throw Error(Errc::bad_option, describe("extend", key_) + ": this Mutex does not hold it");
    const auto started = std::chrono::steady_clock::now();
    auto connection = state_->pool.borrow();
    auto value = strategy_->extend(*connection, key_, value_, lease);
    if (!value) {
      held_ = false;
      last_error_ = make_error_code(Errc::lease_lost);
      return false;
    }
    last_error_.clear();
    value_ = std::move(*value);
    valid_until_ = started + lease;
    return true;
  }

  LockInfo inspect() const {
    auto connection = state_->pool.borrow();
    return strategy_->inspect(*connection, key_, held_ ? std::string_view(value_) : std::string_view());
  }

  std::chrono::milliseconds valid_for() const noexcept {
    if (!held_) return std::chrono::milliseconds::zero();
    const auto left = valid_until_ - std::chrono::steady_clock::now();
    return std::max(std::chrono::milliseconds::zero(), std::chrono::floor<std::chrono::milliseconds>(left));
  }

  std::shared_ptr<ClientState> state_;
  std::string key_;
  MutexOptions options_;
  std::unique_ptr<LockStrategy> strategy_;
  bool held_ = false;
  std::string value_;
  std::chrono::steady_clock::time_point valid_until_{};
  std::error_code last_error_;
  std::function<void(const Error&)> on_release_error_;

 private:
  void abandon_unknown_attempt() noexcept {
    try {
      auto connection = state_->pool.borrow();
      strategy_->abandon_attempt(*connection, key_);
    } catch (...) {  // best effort: the server is probably unreachable
    }
  }

  void report(const Error& error) noexcept {
    last_error_ = error.code();
    if (!on_release_error_) return;
    try {
      on_release_error_(error);
    } catch (...) {  // a throwing handler must not turn unlock() into std::terminate
    }
  }
};

}  // namespace detail

// ---- options ---------------------------------------------------------------------------------

namespace {
// Longer leases and waits are mistakes, and would overflow steady_clock arithmetic near max().
constexpr std::chrono::milliseconds kMaxDuration{365LL * 24 * 3600 * 1000};

// Every duration option shares one rule: at least `min`, at most 365 days.
void require_within(std::string_view name, std::chrono::milliseconds value, std::chrono::milliseconds min) {
  if (value >= min && value <= kMaxDuration) return;
  throw Error(Errc::bad_option, std::string(name) + " must be between " + std::to_string(min.count()) +
                                    " ms and 365 days, got " + std::to_string(value.count()) + " ms");
}
}  // namespace

MutexOptions MutexOptions::jedis_lock_1_0() {
  MutexOptions options;
  options.strategy = StrategyKind::legacy;
  options.legacy.preset = LegacyPreset::faithful;
  options.legacy.format = LegacyFormat::epoch_ms;
  options.lease = std::chrono::milliseconds(60000);
  options.acquire_timeout = std::chrono::milliseconds(10000);
  options.retry_interval = std::chrono::milliseconds(100);
  return options;
}

void MutexOptions::validate() const {
  using std::chrono::milliseconds;
  require_within("lease", lease, milliseconds(1));
  require_within("acquire_timeout", acquire_timeout, milliseconds::zero());
  require_within("retry_interval", retry_interval, milliseconds::zero());
  require_within("legacy.safety_ttl_grace", legacy.safety_ttl_grace, milliseconds::zero());
  if (legacy.clock_offset < -kMaxDuration || legacy.clock_offset > kMaxDuration) {
    throw Error(Errc::bad_option, "legacy.clock_offset must be within +-365 days, got " +
                                      std::to_string(legacy.clock_offset.count()) + " ms");
  }
}

std::string_view to_string(StrategyKind kind) noexcept {
  return kind == StrategyKind::legacy ? "legacy" : "token";
}

std::string_view to_string(LegacyPreset preset) noexcept {
  return preset == LegacyPreset::faithful ? "faithful" : "hardened";
}

// ---- Mutex -----------------------------------------------------------------------------------

namespace {
std::string checked_key(std::string key) {
  if (key.empty()) throw Error(Errc::bad_option, "lock key must not be empty");
  return key;
}
}  // namespace

Mutex::Mutex(Client client, std::string key, MutexOptions options) {
  options.validate();
  core_ = std::make_unique<detail::MutexCore>(std::move(client), checked_key(std::move(key)), std::move(options));
}

Mutex::~Mutex() {
  if (core_) core_->release();
}

Mutex::Mutex(Mutex&&) noexcept = default;

Mutex& Mutex::operator=(Mutex&& other) noexcept {
  if (this != &other) {
    if (core_) core_->release();
    core_ = std::move(other.core_);
  }
  return *this;
}

void Mutex::lock() {
  if (!core_->acquire_until(std::chrono::steady_clock::now() + core_->options_.acquire_timeout)) {
    throw Error(Errc::timeout, detail::describe("lock", core_->key_) + ": still held by another owner after " +
                                   std::to_string(core_->options_.acquire_timeout.count()) + " ms");
  }
}

bool Mutex::try_lock() { return core_->attempt(); }

bool Mutex::try_lock_until_steady(std::chrono::steady_clock::time_point deadline) {
  return core_->acquire_until(deadline);
}

void Mutex::unlock() noexcept {
  if (core_) core_->release();
}

bool Mutex::extend(std::chrono::milliseconds lease) {
  require_within("extend: lease", lease, std::chrono::milliseconds(1));
  return core_->extend(lease);
}

bool Mutex::owns_lock() const noexcept { return core_ && core_->held_; }
std::chrono::milliseconds Mutex::valid_for() const noexcept {
  return core_ ? core_->valid_for() : std::chrono::milliseconds::zero();
}
const std::string& Mutex::value() const noexcept { return core_->value_; }
LockInfo Mutex::inspect() const { return core_->inspect(); }
const std::string& Mutex::key() const noexcept { return core_->key_; }
const MutexOptions& Mutex::options() const noexcept { return core_->options_; }
std::error_code Mutex::last_error() const noexcept { return core_->last_error_; }
void Mutex::on_release_error(std::function<void(const Error&)> handler) { core_->on_release_error_ = std::move(handler); }

}  // namespace lockbridge
