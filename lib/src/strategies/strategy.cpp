#include "strategies/strategy.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <span>
#include <vector>

#include "lockbridge/error.hpp"
#include "strategies/companion_keys.hpp"
#include "strategies/legacy_timestamp.hpp"
#include "strategies/redisson.hpp"
#include "strategies/token.hpp"

namespace lockbridge::detail {

Task<void> LockStrategy::abandon_attempt(Link& /*link*/, std::string_view /*key*/) { co_return; }
ReleaseChannel LockStrategy::release_channel_of(std::string_view key) const {
  return ReleaseChannel{release_channel(key)};
}
Task<void> LockStrategy::leave_queue(Link& /*link*/, std::string_view /*key*/, std::string_view /*queued_waiter*/) {
  co_return;
}

Task<std::optional<std::string>> LockStrategy::extend(Link& link, std::string_view key, std::string_view value,
                                                      std::chrono::milliseconds lease) {
  const ScriptCall call = extend_call(key, value, lease);
  const auto replies = co_await run_scripts(link, scripts_, std::span(&call, 1));
  co_return extend_outcome(*replies.front(), key, value);
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

// A WATCH left on a pooled connection would fail someone's later EXEC. Best effort: after a
// transport failure the connection is dropped, and nothing is left watched.
Task<void> unwatch(Link& link) {
  try {
    (void)co_await link.command("UNWATCH");
  } catch (...) {
  }
}

// An owner-checked delete in plain commands, for a user that may not run scripts (it could take
// the lock with SET NX, and must be able to give it back). WATCH makes the DEL inside MULTI/EXEC
// happen only if nobody changed the key after the GET that found our value. MULTI is confirmed
// before the DEL is sent: a DEL outside a transaction would not be guarded by the WATCH. No
// grant and no release message (a command the user may not run would abort the transaction):
// waiters elsewhere find the key free at their next attempt. The transaction spans several
// requests, so the link must be one no other caller's requests share meanwhile (a pooled
// connection, borrowed for the call).
Task<ReleaseOutcome> release_without_script(Link& link, std::string_view key, std::string_view value) {
  const ReplyContext context("release (without a script)", key);
  for (int attempt = 0; attempt < 3; ++attempt) {
    const std::array<std::vector<std::string_view>, 2> look{std::vector<std::string_view>{"WATCH", key},
                                                            std::vector<std::string_view>{"GET", key}};
    const auto seen = co_await link.pipeline(look);
    const bool watching = seen[0]->type != REDIS_REPLY_ERROR;
    const bool ours = seen[1]->type == REDIS_REPLY_STRING && as_view(*seen[1]) == value;
    if (!watching || !ours) {
      if (watching) co_await unwatch(link);
      throw_if_error(*seen[0], context);
      throw_if_error(*seen[1], context);
      co_return ReleaseOutcome::not_ours;
    }
    const ReplyPtr multi = co_await link.command("MULTI");
    if (multi->type == REDIS_REPLY_ERROR) {
      co_await unwatch(link);
      throw_if_error(*multi, context);
    }
    const std::array<std::vector<std::string_view>, 2> remove{std::vector<std::string_view>{"DEL", key},
                                                              std::vector<std::string_view>{"EXEC"}};
    // EXEC (or its refusal, EXECABORT) ends the WATCH and the transaction.
    const auto done = co_await link.pipeline(remove);
    throw_if_error(*done[1], context);
    if (done[1]->type == REDIS_REPLY_ARRAY) co_return ReleaseOutcome::released;
    // nil: the key changed between the GET and the EXEC (a lease renewed, or ended and taken):
    // look again.
  }
  co_return ReleaseOutcome::not_ours;  // changed under us three times: it is not ours to delete
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

Task<ReleaseOutcome> release_by_script(Link& link, ScriptCache& scripts, const Script& script,
                                       std::span<const std::string_view> keys, std::span<const std::string_view> args) {
  const ReplyPtr reply = co_await run_script(link, scripts, script, keys, args);
  const std::string_view key = keys.front();
  if (!refuses_scripts(*reply)) co_return release_outcome(expect_integer(*reply, ReplyContext("release", key)));
  try {
    // The plain-command release is a transaction over several requests: on a shared pipeline
    // other locks' commands would join it, so it takes a connection of its own.
    std::unique_ptr<Link> own;
    if (!link.exclusive()) own = co_await link.exclusive_link();
    Link& used = own ? *own : link;  // named: no ?: inside a co_await (GCC 12)
    co_return co_await release_without_script(used, key, args.front());
  } catch (const Error& error) {
    throw Error(error.errc(), message_of(error) + " (tried because this user may not run scripts: " +
                                  std::string(as_view(*reply)) + "); the lock stays until its lease ends");
  }
}

std::string starving_in_arg(const AttemptRequest& request) {
  constexpr std::chrono::milliseconds kCentury = std::chrono::hours(24 * 36525);
  return std::to_string(std::clamp(request.starving_in, std::chrono::milliseconds(0), kCentury).count());
}

std::string grant_spec(const AttemptRequest& request, std::chrono::milliseconds extra, bool fenced, char kind,
                       std::string_view rest) {
  if (request.grant_lease.count() <= 0 || request.queued_waiter.empty()) return {};
  std::string spec = std::to_string(request.grant_tag) + ' ' + std::to_string(request.grant_lease.count()) + ' ' +
                     std::to_string(extra.count()) + (fenced ? " 1 " : " 0 ");
  spec += kind;
  spec += ' ';
  spec += rest;
  return spec;
}

Task<void> leave_queue_passing_on(LockStrategy& strategy, Link& link, std::string_view key, std::string_view queue,
                                  std::string_view times, std::string_view waiter) {
  if (waiter.empty()) co_return;
  try {
    const std::string record = grant_record(key);
    const std::array<std::vector<std::string_view>, 3> commands{std::vector<std::string_view>{"LREM", queue, "0", waiter},
                                                                std::vector<std::string_view>{"HDEL", times, waiter},
                                                                std::vector<std::string_view>{"GET", record}};
    const auto replies = co_await link.pipeline(commands);
    // "<waiter> <fence> <value>": a release granted this waiter the lock just before it gave up.
    if (replies[2]->type != REDIS_REPLY_STRING) co_return;
    const std::string_view text = as_view(*replies[2]);
    if (!text.starts_with(waiter) || text.size() <= waiter.size() || text[waiter.size()] != ' ') co_return;
    const std::size_t value_at = text.find(' ', waiter.size() + 1);
    if (value_at == std::string_view::npos) co_return;
    const std::string value(text.substr(value_at + 1));
    const std::string channel = strategy.release_channel_of(key).name;
    (void)co_await strategy.release(link, key, value, channel);  // owner-checked: only if it still holds the grant
  } catch (...) {  // best effort: the waiter's deadline passes and the grant's lease runs out anyway
  }
}

Task<void> remove_from_queue(Link& link, std::string_view queue, std::string_view deadlines, std::string_view waiter) {
  const std::array<std::vector<std::string_view>, 2> commands{std::vector<std::string_view>{"LREM", queue, "0", waiter},
                                                              std::vector<std::string_view>{"HDEL", deadlines, waiter}};
  (void)co_await link.pipeline(commands);
}

Task<LockInfo> read_lock_info(Link& link, std::string_view key, std::string_view my_value) {
  const std::vector<std::vector<std::string_view>> commands{{"GET", key}, {"PTTL", key}};
  const auto replies = co_await link.pipeline(commands);
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
  co_return info;
}

}  // namespace lockbridge::detail
