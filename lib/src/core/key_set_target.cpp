#include "core/key_set_target.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <string_view>
#include <utility>

#include "cluster/key_slot.hpp"
#include "lockbridge/identity.hpp"
#include "strategies/companion_keys.hpp"
#include "strategies/scripts.hpp"

namespace lockbridge::detail {

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
  const std::uint16_t slot = key_slot(keys.front());
  for (const std::string& key : keys) {
    if (key_slot(key) == slot) continue;
    throw Error(Errc::bad_option, "multi-key lock on redis-cluster://: " + printable_key(keys.front()) +
                                      " is in hash slot " + std::to_string(slot) + " but " + printable_key(key) +
                                      " is in slot " + std::to_string(key_slot(key)) +
                                      "; give the keys one hash tag, e.g. '{order:42}:stock' and '{order:42}:payment'");
  }
}
}  // namespace

std::string describe_keys(std::string_view operation, const std::vector<std::string>& keys) {
  constexpr std::size_t kNamed = 3;
  std::string text(operation);
  for (std::size_t i = 0; i < keys.size() && i < kNamed; ++i)
    text.append(i == 0 ? " " : ", ").append(printable_key(keys[i]));
  if (keys.size() > kNamed) text.append(" and ").append(std::to_string(keys.size() - kNamed)).append(" more");
  return text;
}

KeySetTarget::KeySetTarget(std::shared_ptr<ClientState> state, std::vector<std::string> keys,
                           std::chrono::milliseconds waiter_timeout, std::shared_ptr<Routes> routes)
    : state_(std::move(state)),
      keys_(std::move(keys)),
      waiter_timeout_ms_(std::to_string(waiter_timeout.count())),
      queue_keys_{waiter_queue(keys_.front()), waiter_times(keys_.front())},
      routes_(routes ? std::move(routes) : std::make_shared<BlockingRoutes>(*state_)) {
  key_views_.assign(keys_.begin(), keys_.end());
  key_views_.insert(key_views_.end(), queue_keys_.begin(), queue_keys_.end());
  channels_.reserve(keys_.size());
  for (const auto& key : keys_) channels_.push_back(release_channel(key));
}

std::string KeySetTarget::describe(std::string_view operation) const { return describe_keys(operation, keys_); }

Task<TargetAttempt> KeySetTarget::attempt(const AttemptRequest& request) {
  const auto started = Clock::now();
  std::string token = random_token();
  const std::string lease_ms = std::to_string(request.lease.count());
  const std::string starving_in = starving_in_arg(request);
  const std::array<std::string_view, 5> args{token, lease_ms, request.queued_waiter, waiter_timeout_ms_, starving_in};
  ReplyPtr reply;
  bool sent = false;
  const Routes::Operation acquire = [&](Link& link) -> Task<void> {
    sent = true;
    reply = co_await run_script(link, state_->scripts, kMultiAcquire, key_views_, args);
    throw_if_rerouted(*reply);
  };
  std::optional<Error> failure;
  try {
    co_await routes_->on_link(keys_.front(), acquire, request.deadline);
  } catch (const Error& error) {
    failure = error;  // (a handler may not await)
  }
  if (failure) {
    // The script may have run even though its reply did not reach us. The broken connection went
    // back (and was dropped) before release_all borrows a fresh one.
    if (may_have_written(*failure, sent)) {
      try {  // the token is ours alone: deleting it where it is still the value is always safe
        (void)co_await release_all(token);
      } catch (...) {  // best effort: the keys' TTLs run out anyway
      }
    }
    throw naming_key(*failure, "acquire", keys_.front());
  }
  TargetAttempt attempt = parse_acquire(*reply);
  if (attempt.acquired) {
    attempt.value = std::move(token);
    // Counted from before the request left: the server's lease can only end later than this.
    attempt.valid_until = started + request.lease;
  }
  co_return attempt;
}

TargetAttempt KeySetTarget::parse_acquire(const redisReply& reply) const {
  const std::string context = describe("acquire");
  throw_if_script_error(reply, context, keys_);
  const redisReply& array = expect_array(reply, 1, context);
  TargetAttempt attempt;
  if (expect_integer(*array.element[0], context) == 1) {
    attempt.acquired = true;
    return attempt;
  }
  expect_array(reply, 3, context);
  const std::int64_t index = expect_integer(*array.element[1], context);
  if (index < 1 || static_cast<std::uint64_t>(index) > keys_.size()) {
    throw Error(Errc::protocol, context + ": the blocking key's index " + std::to_string(index) + " is out of range");
  }
  attempt.blocked_on = ReleaseChannel{channels_[static_cast<std::size_t>(index - 1)]};
  const std::int64_t pttl = expect_integer(*array.element[2], context);
  if (pttl >= 0) attempt.holder_remaining = std::chrono::milliseconds(pttl);
  return attempt;
}

Task<ReleaseOutcome> KeySetTarget::release(const std::string& value) {
  const Released released = co_await release_all(value);
  if (released.keys != keys_.size()) co_return ReleaseOutcome::not_ours;
  co_return released.handed_over ? ReleaseOutcome::handed_over : ReleaseOutcome::released;
}

Task<KeySetTarget::Released> KeySetTarget::release_all(std::string_view token) {
  std::vector<std::string_view> args;
  args.reserve(1 + channels_.size());
  args.push_back(token);
  args.insert(args.end(), channels_.begin(), channels_.end());
  Released released;
  const Routes::Operation release = [&](Link& link) -> Task<void> {
    const ReplyPtr reply = co_await run_script(link, state_->scripts, kMultiRelease, key_views_, args);
    const std::string context = describe("release");
    const redisReply& array = expect_array(*reply, 2, context);
    released.keys = static_cast<std::size_t>(std::max<std::int64_t>(0, expect_integer(*array.element[0], context)));
    released.handed_over = expect_integer(*array.element[1], context) == 1;
  };
  try {
    co_await routes_->on_link(keys_.front(), release, Clock::time_point::max());
  } catch (const Error& error) {
    throw naming_key(error, "release", keys_.front());
  }
  co_return released;
}

Task<void> KeySetTarget::leave_queue(std::string_view waiter) {
  const Routes::Operation leave = [&](Link& link) -> Task<void> {
    co_await remove_from_queue(link, queue_keys_[0], queue_keys_[1], waiter);
  };
  try {
    co_await routes_->on_link(keys_.front(), leave, Clock::time_point::max());
    // Keys a release handed to this waiter just before it gave up go on to the next
    // waiter (or are freed) rather than stay blocked until its deadline.
    (void)co_await release_all(waiter);
  } catch (...) {  // best effort: the waiter's deadline passes and the queue drops it anyway
  }
}

Task<TargetExtension> KeySetTarget::extend(const std::string& /*value*/, std::chrono::milliseconds /*lease*/) {
  throw Error(Errc::bad_option, describe("extend") + ": a set of keys has no extend yet");
  co_return TargetExtension{};
}

Task<LockInfo> KeySetTarget::inspect(std::string_view /*mine*/) {
  throw Error(Errc::bad_option, describe("inspect") + ": a set of keys has no inspect yet");
  co_return LockInfo{};
}

std::string KeySetTarget::event_key() const {
  std::string joined;
  for (const std::string& key : keys_) joined += (joined.empty() ? "" : " ") + key;
  return joined;
}

std::unique_ptr<KeySetTarget> make_key_set_target(const std::shared_ptr<ClientState>& state,
                                                  std::vector<std::string> keys, const MutexOptions& options,
                                                  std::shared_ptr<Routes> routes) {
  if (state->redlock()) {
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
  if (state->url.topology == RedisUrl::Topology::cluster) require_one_slot(keys);
  return std::make_unique<KeySetTarget>(state, std::move(keys), options.fair_waiter_timeout, std::move(routes));
}

}  // namespace lockbridge::detail
