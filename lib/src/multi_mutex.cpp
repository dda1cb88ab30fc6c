#include "lockbridge/multi_mutex.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "client_state.hpp"
#include "cluster/key_slot.hpp"
#include "companion_keys.hpp"
#include "random.hpp"
#include "scripts.hpp"
#include "strategy.hpp"
#include "waiting/release_listener.hpp"
#include "waiting/retry_schedule.hpp"

namespace lockbridge {

namespace detail {

namespace {
using Clock = std::chrono::steady_clock;

struct MultiAttempt {
  bool acquired = false;
  std::size_t blocking = 0;  // not acquired: the index (into the sorted keys) of the first held key
  std::optional<std::chrono::milliseconds> holder_remaining;  // its PTTL, when it has one
};

// "acquire 'a', 'b', 'c' and 2 more": the context of error messages.
std::string describe_keys(std::string_view operation, const std::vector<std::string>& keys) {
  constexpr std::size_t kNamed = 3;
  std::string text(operation);
  for (std::size_t i = 0; i < keys.size() && i < kNamed; ++i) text.append(i == 0 ? " " : ", ").append(printable_key(keys[i]));
  if (keys.size() > kNamed) text.append(" and ").append(std::to_string(keys.size() - kNamed)).append(" more");
  return text;
}
}  // namespace

// The state of one holder of several keys, and its waiting loop: MutexCore's, with the release
// channel of whichever key blocked the last attempt.
class MultiMutexCore {
 public:
  MultiMutexCore(Client client, std::vector<std::string> keys, MutexOptions options)
      : state_(client.state()), keys_(std::move(keys)), options_(std::move(options)) {
    key_views_.assign(keys_.begin(), keys_.end());
    channels_.reserve(keys_.size());
    for (const auto& key : keys_) channels_.push_back(release_channel(key));
  }

  void refuse_if_held() const {
    if (held_) throw Error(Errc::bad_option, describe_keys("lock", keys_) + ": this MultiMutex already holds them");
  }

  // One attempt: one EVALSHA of kMultiAcquire.
  MultiAttempt attempt() {
    refuse_if_held();
    const auto started = Clock::now();
    std::string token = random_token();
    const std::string lease_ms = std::to_string(options_.lease.count());
    const std::array<std::string_view, 2> args{token, lease_ms};
    ReplyPtr reply;
    std::optional<Error> lost_reply;
    try {
      state_->with_connection(keys_.front(), [&](Connection& connection) {
        reply = run_script(connection, state_->scripts, kMultiAcquire, key_views_, args);
        throw_if_redirect(*reply);
      });
    } catch (const Error& error) {
      // The script may have run even though its reply did not reach us.
      if (error.errc() != Errc::timeout && error.errc() != Errc::io && error.errc() != Errc::protocol) {
        throw naming_key(error, "acquire", keys_.front());
      }
      lost_reply = naming_key(error, "acquire", keys_.front());
    }  // the broken connection went back (and was dropped) before release_all borrows a fresh one
    if (lost_reply) {
      try {  // the token is ours alone: deleting it where it is still the value is always safe
        (void)release_all(token);
      } catch (...) {  // best effort: the lease expires anyway
      }
      throw *lost_reply;
    }
    MultiAttempt result = parse_acquire(*reply);
    if (!result.acquired) return result;
    held_ = true;
    value_ = std::move(token);
    // Counted from before the request left: the server's lease can only end later than this.
    valid_until_ = started + options_.lease;
    return result;
  }

  // Attempts until acquired or the retry policy gives up. Between attempts it sleeps until the
  // policy's next attempt is due, unless (notify mode) the key that blocked the last attempt is
  // announced released first.
  bool acquire_until(Clock::time_point deadline) {
    refuse_if_held();
    RetrySchedule schedule(options_.retry, Clock::now(), deadline);
    const bool notify = options_.wait_mode == WaitMode::notify;
    ReleaseListener listener(*state_, ReleaseChannel{channels_.front()});
    for (;;) {
      listener.arm();
      const MultiAttempt result = attempt();
      if (result.acquired) return true;
      listener.drop_if_redirected();
      // The script always reports the blocking key's PTTL, so even the first failure knows when
      // the holder's lease ends: no extra attempt to learn it, unlike MutexCore.
      const auto due = schedule.next(Clock::now(), result.holder_remaining);
      if (!due) return false;
      if (notify) {
        // Listen where the set is blocked now (a different key than before, or the first failure).
        // A release between the attempt and the confirmed subscription went unheard: once the
        // server confirms it, bring the due attempt forward. The policy still counts it, so keys
        // that keep changing hands cannot make this loop spin past the policy.
        listener.switch_to(ReleaseChannel{channels_[result.blocking]});
        if (!listener.listening() && listener.listen(*due)) continue;
      }
      listener.wait_until(*due);
    }
  }

  void release() noexcept {
    if (!held_) return;
    held_ = false;
    try {
      const std::size_t deleted = release_all(value_);
      if (deleted == keys_.size()) {
        last_error_.clear();
      } else {
        last_error_ = make_error_code(Errc::lease_lost);
      }
    } catch (const Error& error) {
      last_error_ = error.code();
    } catch (const std::exception&) {
      last_error_ = make_error_code(Errc::io);
    }
  }

  std::chrono::milliseconds valid_for() const noexcept {
    if (!held_) return std::chrono::milliseconds::zero();
    const auto left = valid_until_ - Clock::now();
    return std::max(std::chrono::milliseconds::zero(), std::chrono::floor<std::chrono::milliseconds>(left));
  }

  std::shared_ptr<ClientState> state_;
  const std::vector<std::string> keys_;
  const MutexOptions options_;
  bool held_ = false;
  std::string value_;
  Clock::time_point valid_until_{};
  std::error_code last_error_;

 private:
  // kMultiRelease with `token`: how many keys it deleted. Throws Error.
  std::size_t release_all(std::string_view token) {
    std::vector<std::string_view> args;
    args.reserve(1 + channels_.size());
    args.push_back(token);
    args.insert(args.end(), channels_.begin(), channels_.end());
    std::int64_t released = 0;
    try {
      state_->with_connection(keys_.front(), [&](Connection& connection) {
        const ReplyPtr reply = run_script(connection, state_->scripts, kMultiRelease, key_views_, args);
        released = expect_integer(*reply, describe_keys("release", keys_));
      });
    } catch (const Error& error) {
      throw naming_key(error, "release", keys_.front());
    }
    return static_cast<std::size_t>(std::max<std::int64_t>(0, released));
  }

  MultiAttempt parse_acquire(const redisReply& reply) const {
    const std::string context = describe_keys("acquire", keys_);
    throw_if_script_error(reply, context, keys_);
    const redisReply& array = expect_array(reply, 1, context);
    MultiAttempt result;
    if (expect_integer(*array.element[0], context) == 1) {
      result.acquired = true;
      return result;
    }
    expect_array(reply, 3, context);
    const std::int64_t index = expect_integer(*array.element[1], context);
    if (index < 1 || static_cast<std::uint64_t>(index) > keys_.size()) {
      throw Error(Errc::protocol, context + ": the blocking key's index " + std::to_string(index) + " is out of range");
    }
    result.blocking = static_cast<std::size_t>(index - 1);
    const std::int64_t pttl = expect_integer(*array.element[2], context);
    if (pttl >= 0) result.holder_remaining = std::chrono::milliseconds(pttl);
    return result;
  }

  std::vector<std::string_view> key_views_;  // of keys_, for run_script
  std::vector<std::string> channels_;        // release_channel() of each key, in the same order
};

}  // namespace detail

namespace {
std::vector<std::string> checked_keys(std::vector<std::string> keys) {
  if (keys.empty()) throw Error(Errc::bad_option, "multi-key lock: the key list must not be empty");
  if (std::any_of(keys.begin(), keys.end(), [](const std::string& key) { return key.empty(); })) {
    throw Error(Errc::bad_option, "multi-key lock: a lock key must not be empty");
  }
  // One fixed order for every process (docs/design.md §11.2).
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

// Redis Cluster runs a script only on keys of one hash slot: say which keys differ, and the fix.
void require_one_slot(const std::vector<std::string>& keys) {
  const std::uint16_t slot = detail::key_slot(keys.front());
  for (const std::string& key : keys) {
    if (detail::key_slot(key) == slot) continue;
    throw Error(Errc::bad_option, "multi-key lock on redis-cluster://: " + detail::printable_key(keys.front()) +
                                      " is in hash slot " + std::to_string(slot) + " but " + detail::printable_key(key) +
                                      " is in slot " + std::to_string(detail::key_slot(key)) +
                                      "; give the keys one hash tag, e.g. '{order:42}:stock' and '{order:42}:payment'");
  }
}
}  // namespace

MultiMutex::MultiMutex(Client client, std::vector<std::string> keys, MutexOptions options) {
  options.validate();
  if (client.state()->redlock()) {
    throw Error(Errc::bad_option, "multi-key lock: not available on a redlock:// Client (one script takes every key "
                                  "on one server; a majority of masters would each need it)");
  }
  if (options.strategy != StrategyKind::token) {
    throw Error(Errc::bad_option,
                "multi-key lock: only the token strategy can take several keys at once; the legacy protocol "
                "(SETNX + GETSET) writes one key per command, and its Java peers lock one key at a time");
  }
  // Lease-safety and fair-queue features work per key (docs/design.md §10.4, §12); a set of keys
  // has none of them yet. Silently ignoring one would be worse than refusing it.
  const auto refuse = [](std::string_view what) {
    throw Error(Errc::bad_option, "multi-key lock: " + std::string(what) + " is not available for a set of keys");
  };
  if (options.watchdog.enabled) refuse("the watchdog");
  if (options.wait_mode == WaitMode::fair) refuse("wait_mode fair");
  if (options.token.fencing) refuse("fencing");
  if (options.reentrant) refuse("reentrant");
  if (options.replica_ack.replicas > 0) refuse("replica_ack");
  keys = checked_keys(std::move(keys));
  if (client.url().topology == RedisUrl::Topology::cluster) require_one_slot(keys);
  core_ = std::make_unique<detail::MultiMutexCore>(std::move(client), std::move(keys), std::move(options));
}

MultiMutex::~MultiMutex() {
  if (core_) core_->release();
}

MultiMutex::MultiMutex(MultiMutex&&) noexcept = default;

MultiMutex& MultiMutex::operator=(MultiMutex&& other) noexcept {
  if (this != &other) {
    if (core_) core_->release();
    core_ = std::move(other.core_);
  }
  return *this;
}

void MultiMutex::lock() {
  if (!core_->acquire_until(std::chrono::steady_clock::now() + core_->options_.acquire_timeout)) {
    throw Error(Errc::timeout, detail::describe_keys("lock", core_->keys_) + ": still held by another owner after " +
                                   std::to_string(core_->options_.acquire_timeout.count()) + " ms");
  }
}

bool MultiMutex::try_lock() { return core_->attempt().acquired; }

bool MultiMutex::try_lock_until_steady(std::chrono::steady_clock::time_point deadline) {
  return core_->acquire_until(deadline);
}

void MultiMutex::unlock() noexcept {
  if (core_) core_->release();
}

bool MultiMutex::owns_lock() const noexcept { return core_ && core_->held_; }
std::chrono::milliseconds MultiMutex::valid_for() const noexcept {
  return core_ ? core_->valid_for() : std::chrono::milliseconds::zero();
}
const std::vector<std::string>& MultiMutex::keys() const noexcept { return core_->keys_; }
const std::string& MultiMutex::value() const noexcept { return core_->value_; }
const MutexOptions& MultiMutex::options() const noexcept { return core_->options_; }
std::error_code MultiMutex::last_error() const noexcept { return core_->last_error_; }

}  // namespace lockbridge
