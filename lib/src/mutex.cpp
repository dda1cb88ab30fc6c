#include "lockbridge/mutex.hpp"

#include <algorithm>
#include <optional>
#include <thread>
#include <utility>

#include "client_state.hpp"
#include "companion_keys.hpp"
#include "strategy.hpp"
#include "waiting/local_line.hpp"
#include "waiting/retry_schedule.hpp"

namespace lockbridge {

namespace detail {

namespace {
using Clock = std::chrono::steady_clock;

// The same server and key, whichever Client or URL spelling reached it: the local line's name.
std::string lock_identity(const RedisUrl& url, std::string_view key) {
  std::string identity = url.transport == RedisUrl::Transport::unix_socket ? "unix:" + url.socket_path
                                                                             : url.host + ":" + std::to_string(url.port);
  identity.append("/").append(std::to_string(url.db)).push_back('\0');
  return identity.append(key);
}
}  // namespace

// The state of one lease holder, and the waiting loop that sits above every strategy.
class MutexCore {
 public:
  MutexCore(Client client, std::string key, MutexOptions options)
      : state_(client.state()),
        key_(std::move(key)),
        options_(std::move(options)),
        strategy_(make_strategy(options_, state_->scripts)),
        release_channel_(release_channel(key_)),
        line_(options_.local_queue ? LocalLine::for_lock(lock_identity(state_->pool.url(), key_)) : nullptr) {}

  // Locking twice through one Mutex is a bug in the caller, refused before any waiting or I/O.
  void refuse_if_held() const {
    if (held_) throw Error(Errc::bad_option, describe("lock", key_) + ": this Mutex already holds it");
  }

  // One attempt.
  AcquireAttempt attempt(bool learn_remaining) {
    refuse_if_held();
    const auto started = Clock::now();
    AcquireAttempt result;
    std::optional<Error> lost_reply;
    {
      auto connection = state_->pool.borrow();
      try {
        result = strategy_->try_acquire(*connection, key_, options_.lease, learn_remaining);
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
    if (!result.acquired) return result;
    held_ = true;
    value_ = result.value;
    // Counted from before the request left: the server's lease can only end later than this.
    valid_until_ = started + options_.lease;
    if (line_) line_->held_here(valid_until_);
    return result;
  }

  // Waits in the local line, then attempts until acquired or the retry policy gives up. Between
  // attempts it sleeps until the policy's next attempt is due, unless a release is heard first:
  // from a holder in this process (through the line) or, in notify mode, announced by Redis.
  bool acquire_until(Clock::time_point deadline) {
    refuse_if_held();
    std::optional<LocalLine::Place> place;
    if (line_) {
      place.emplace(line_);
      if (!place->wait_for_turn(deadline)) return false;
    }
    RetrySchedule schedule(options_.retry, Clock::now(), deadline);
    const bool notify = options_.wait_mode == WaitMode::notify;
    // Already subscribed (an earlier wait's subscription lingers): watch from before the first
    // attempt, at no cost. Otherwise subscribe only once an attempt has failed, so the
    // uncontended path never pays for it.
    std::unique_ptr<ReleaseNotifier::Watch> watch =
        notify ? state_->notifier.watch(release_channel_, /*only_if_subscribed=*/true) : nullptr;
    bool learn_remaining = false;  // the first attempt is the uncontended fast path: nothing extra
    for (;;) {
      if (place) place->wait_while_held_here(deadline);
      if (watch) watch->arm();
      const AcquireAttempt result = attempt(learn_remaining);
      if (result.acquired) return true;
      const bool asked_remaining = std::exchange(learn_remaining, true);
      const auto subscribe = [&](Clock::time_point until) {
        watch = state_->notifier.watch(release_channel_);
        return watch->wait_subscribed(std::min(until, Clock::now() + state_->pool.options().command_timeout));
      };
      if (!asked_remaining && !result.holder_remaining && options_.retry.kind == RetryPolicy::Kind::backoff) {
        // The fast first attempt did not learn when the holder's lease ends, and the backoff must
        // never sleep past it: try again at once, learning it (subscribed first, in notify mode).
        if (notify && !watch) subscribe(deadline);
        continue;
      }
      const auto due = schedule.next(Clock::now(), result.holder_remaining);
      if (!due) return false;
      // A release between the failed attempt and the subscription went unheard: once the server
      // confirms the subscription, bring the due attempt forward.
      if (notify && !watch && subscribe(*due)) continue;
      if (watch) {
        watch->wait_until(*due);
      } else {
        std::this_thread::sleep_until(*due);
      }
    }
  }

  void release() noexcept {
    if (!held_) return;
    held_ = false;
    try {
      auto connection = state_->pool.borrow();
      if (strategy_->release(*connection, key_, value_, release_channel_) == ReleaseOutcome::released) {
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
    if (line_) line_->released_here();
  }

  bool extend(std::chrono::milliseconds lease) {
    if (!held_) throw Error(Errc::bad_option, describe("extend", key_) + ": this Mutex does not hold it");
    const auto started = Clock::now();
    auto connection = state_->pool.borrow();
    auto value = strategy_->extend(*connection, key_, value_, lease);
    if (!value) {
      held_ = false;
      last_error_ = make_error_code(Errc::lease_lost);
      if (line_) line_->released_here();
      return false;
    }
    last_error_.clear();
    value_ = std::move(*value);
    valid_until_ = started + lease;
    if (line_) line_->held_here(valid_until_);
    return true;
  }

  LockInfo inspect() const {
    auto connection = state_->pool.borrow();
    return strategy_->inspect(*connection, key_, held_ ? std::string_view(value_) : std::string_view());
  }

  std::chrono::milliseconds valid_for() const noexcept {
    if (!held_) return std::chrono::milliseconds::zero();
    const auto left = valid_until_ - Clock::now();
    return std::max(std::chrono::milliseconds::zero(), std::chrono::floor<std::chrono::milliseconds>(left));
  }

  std::shared_ptr<ClientState> state_;
  std::string key_;
  MutexOptions options_;
  std::unique_ptr<LockStrategy> strategy_;
  const std::string release_channel_;
  const std::shared_ptr<LocalLine> line_;  // null without local_queue
  bool held_ = false;
  std::string value_;
  Clock::time_point valid_until_{};
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
  options.retry = RetryPolicy::jedis_lock_resolution(std::chrono::milliseconds(100));
  options.wait_mode = WaitMode::poll;  // jedis-lock peers never announce a release
  options.local_queue = false;         // every thread attempts on its own, as jedis-lock's do
  return options;
}

void MutexOptions::validate() const {
  using std::chrono::milliseconds;
  require_within("lease", lease, milliseconds(1));
  require_within("acquire_timeout", acquire_timeout, milliseconds::zero());
  require_within("retry.initial", retry.initial, milliseconds::zero());
  require_within("retry.cap", retry.cap, milliseconds::zero());
  require_within("retry.interval", retry.interval, milliseconds::zero());
  if (retry.retries < 0 || retry.retries > 1'000'000) {
    throw Error(Errc::bad_option, "retry.retries must be between 0 and 1000000, got " + std::to_string(retry.retries));
  }
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

std::string_view to_string(WaitMode mode) noexcept { return mode == WaitMode::poll ? "poll" : "notify"; }

std::string_view to_string(RetryPolicy::Kind kind) noexcept {
  switch (kind) {
    case RetryPolicy::Kind::backoff:
      return "backoff";
    case RetryPolicy::Kind::jedis_lock:
      return "jedis_lock";
    case RetryPolicy::Kind::fixed_count:
      return "fixed_count";
  }
  return "unknown";
}

RetryPolicy RetryPolicy::backoff_with_jitter(std::chrono::milliseconds initial, std::chrono::milliseconds cap) {
  RetryPolicy policy;
  policy.kind = Kind::backoff;
  policy.initial = initial;
  policy.cap = cap;
  return policy;
}

RetryPolicy RetryPolicy::jedis_lock_resolution(std::chrono::milliseconds resolution) {
  RetryPolicy policy;
  policy.kind = Kind::jedis_lock;
  policy.interval = resolution;
  return policy;
}

RetryPolicy RetryPolicy::fixed_retries(int retries, std::chrono::milliseconds interval) {
  RetryPolicy policy;
  policy.kind = Kind::fixed_count;
  policy.retries = retries;
  policy.interval = interval;
  return policy;
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

bool Mutex::try_lock() { return core_->attempt(false).acquired; }

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
