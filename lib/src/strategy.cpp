#include "strategy.hpp"

#include <algorithm>
#include <array>
#include <span>
#include <vector>

#include "companion_keys.hpp"
#include "lockbridge/error.hpp"
#include "strategies/legacy_timestamp.hpp"
#include "strategies/redisson.hpp"
#include "strategies/token.hpp"

namespace lockbridge::detail {

void LockStrategy::abandon_attempt(Connection& /*connection*/, std::string_view /*key*/) noexcept {}
ReleaseChannel LockStrategy::release_channel_of(std::string_view key) const {
  return ReleaseChannel{release_channel(key)};
}
void LockStrategy::leave_queue(Connection& /*connection*/, std::string_view /*key*/,
                               std::string_view /*queued_waiter*/) noexcept {}

std::optional<std::string> LockStrategy::extend(Connection& connection, std::string_view key, std::string_view value,
                                                std::chrono::milliseconds lease) {
  const ScriptCall call = extend_call(key, value, lease);
  const auto replies = run_scripts(connection, scripts_, std::span(&call, 1));
  return extend_outcome(*replies.front(), key, value);
}

std::unique_ptr<LockStrategy> make_strategy(const MutexOptions& options, ScriptCache& scripts, bool on_cluster) {
  switch (options.strategy) {
    case StrategyKind::token:
      return std::make_unique<TokenStrategy>(options, scripts);
    case StrategyKind::legacy:
      if (options.faithful()) return std::make_unique<LegacyFaithful>(options.legacy, scripts);
      return std::make_unique<LegacyHardened>(options, scripts);
    case StrategyKind::redisson:
      return std::make_unique<RedissonStrategy>(options, scripts, on_cluster);
  }
  throw Error(Errc::bad_option, "unknown strategy");
}

std::string describe(std::string_view operation, std::string_view key) { return ReplyContext(operation, key).text(); }

Error naming_key(const Error& error, std::string_view operation, std::string_view key) {
  const std::string message = message_of(error);
  if (message.find(printable_key(key)) != std::string::npos) return error;
  return Error(error.errc(), describe(operation, key) + ": " + message);
}

ReleaseOutcome release_by_script(Connection& connection, ScriptCache& scripts, const Script& script,
                                 std::initializer_list<std::string_view> keys,
                                 std::initializer_list<std::string_view> args) {
  const ReplyPtr reply = run_script(connection, scripts, script, keys, args);
  switch (expect_integer(*reply, ReplyContext("release", *keys.begin()))) {
    case 0:
      return ReleaseOutcome::not_ours;
    case 2:
      return ReleaseOutcome::handed_over;
    default:
      return ReleaseOutcome::released;
  }
}

std::string starving_in_arg(const AttemptRequest& request) {
  constexpr std::chrono::milliseconds kCentury = std::chrono::hours(24 * 36525);
  return std::to_string(std::clamp(request.starving_in, std::chrono::milliseconds(0), kCentury).count());
}

void remove_from_queue(Connection& connection, std::string_view queue, std::string_view deadlines,
                       std::string_view waiter) {
  const std::array<std::vector<std::string_view>, 2> commands{std::vector<std::string_view>{"LREM", queue, "0", waiter},
                                                              std::vector<std::string_view>{"HDEL", deadlines, waiter}};
  (void)connection.pipeline(commands);
}

LockInfo read_lock_info(Connection& connection, std::string_view key, std::string_view my_value) {
  const std::vector<std::vector<std::string_view>> commands{{"GET", key}, {"PTTL", key}};
  const auto replies = connection.pipeline(commands);
  const std::string context = describe("inspect", key);
  throw_if_error(*replies[0], context);
  LockInfo info;
  if (replies[0]->type == REDIS_REPLY_STRING) {
    info.exists = true;
    info.value.assign(as_view(*replies[0]));
    info.held_by_me = !my_value.empty() && info.value == my_value;
  } else if (replies[0]->type != REDIS_REPLY_NIL) {
    unexpected_reply(*replies[0], "a string or nil", context);
  }
  const std::int64_t pttl = expect_integer(*replies[1], context);
  if (pttl >= 0) info.ttl = std::chrono::milliseconds(pttl);
  return info;
}

}  // namespace lockbridge::detail
