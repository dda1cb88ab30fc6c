#include "lockbridge/multi_mutex.hpp"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "cluster/key_slot.hpp"
#include "core/key_set_target.hpp"
#include "core/lock_core.hpp"
#include "redis/client_state.hpp"

namespace lockbridge {

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
                                      " is in hash slot " + std::to_string(slot) + " but " +
                                      detail::printable_key(key) + " is in slot " +
                                      std::to_string(detail::key_slot(key)) +
                                      "; give the keys one hash tag, e.g. '{order:42}:stock' and '{order:42}:payment'");
  }
}
}  // namespace

MultiMutex::MultiMutex(Client client, std::vector<std::string> keys, MutexOptions options) {
  options.validate();
  if (client.state()->redlock()) {
    throw Error(Errc::bad_option,
                "multi-key lock: not available on a redlock:// Client (one script takes every key "
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
  const std::shared_ptr<detail::ClientState>& state = client.state();
  auto target = std::make_unique<detail::KeySetTarget>(state, std::move(keys), options.fair_waiter_timeout);
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
