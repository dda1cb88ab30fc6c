#include "strategies/strategy.hpp"

#include <algorithm>
#include <array>
#include <span>
#include <vector>

#include "lockbridge/error.hpp"
#include "strategies/companion_keys.hpp"
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

namespace {

// An error reply refusing the script command itself: an ACL user that may not run scripts. Nothing ran.
bool refuses_scripts(const redisReply& reply) {
  if (reply.type != REDIS_REPLY_ERROR) return false;
  const std::string_view text = as_view(reply);
  return text.starts_with("NOPERM") &&
         (text.find("'evalsha'") != std::string_view::npos || text.find("'eval'") != std::string_view::npos);
}

// An owner-checked delete in plain commands, for a user that may not run scripts (it could take
// the lock with SET NX, and must be able to give it back). WATCH makes the DEL inside MULTI/EXEC
// happen only if nobody changed the key after the GET that found our value. MULTI is confirmed
// before the DEL is sent: a DEL outside a transaction would not be guarded by the WATCH. No
// handoff and no release message (a command the user may not run would abort the transaction):
// waiters elsewhere find the key free at their next attempt.
ReleaseOutcome release_without_script(Connection& connection, std::string_view key, std::string_view value) {
  const ReplyContext context("release (without a script)", key);
  struct Unwatch {  // a WATCH left on a pooled connection would fail someone's later EXEC
    Connection& connection;
    bool watching = false;
    ~Unwatch() {
      if (!watching) return;
      try {
        (void)connection.run({"UNWATCH"});
      } catch (...) {  // the connection is dropped after an error: nothing is left watched
      }
    }
  };
  for (int attempt = 0; attempt < 3; ++attempt) {
    Unwatch unwatch{connection};
    const std::array<std::vector<std::string_view>, 2> look{std::vector<std::string_view>{"WATCH", key},
                                                            std::vector<std::string_view>{"GET", key}};
    const auto seen = connection.pipeline(look);
    unwatch.watching = seen[0]->type != REDIS_REPLY_ERROR;
    throw_if_error(*seen[0], context);
    throw_if_error(*seen[1], context);
    if (seen[1]->type != REDIS_REPLY_STRING || as_view(*seen[1]) != value) return ReleaseOutcome::not_ours;
    throw_if_error(*connection.run({"MULTI"}), context);
    const std::array<std::vector<std::string_view>, 2> remove{std::vector<std::string_view>{"DEL", key},
                                                              std::vector<std::string_view>{"EXEC"}};
    const auto done = connection.pipeline(remove);
    unwatch.watching = false;  // EXEC (or its refusal, EXECABORT) ends the WATCH and the transaction
    throw_if_error(*done[1], context);
    if (done[1]->type == REDIS_REPLY_ARRAY) return ReleaseOutcome::released;
    // nil: the key changed between the GET and the EXEC (a lease renewed, or ended and taken):
    // look again.
  }
  return ReleaseOutcome::not_ours;  // changed under us three times: it is not ours to delete
}

ReleaseOutcome release_outcome(std::int64_t reply) {
  switch (reply) {
    case 0:
      return ReleaseOutcome::not_ours;
    case 2:
      return ReleaseOutcome::handed_over;
    default:
      return ReleaseOutcome::released;
  }
}

}  // namespace

ReleaseOutcome release_by_script(Connection& connection, ScriptCache& scripts, const Script& script,
                                 std::initializer_list<std::string_view> keys,
                                 std::initializer_list<std::string_view> args) {
  const ReplyPtr reply = run_script(connection, scripts, script, keys, args);
  const std::string_view key = *keys.begin();
  if (refuses_scripts(*reply)) {
    try {
      return release_without_script(connection, key, *args.begin());
    } catch (const Error& error) {
      throw Error(error.errc(), message_of(error) + " (tried because this user may not run scripts: " +
                                    std::string(as_view(*reply)) + "); the lock stays until its lease ends");
    }
  }
  return release_outcome(expect_integer(*reply, ReplyContext("release", key)));
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
