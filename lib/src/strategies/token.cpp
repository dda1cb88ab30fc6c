#include "token.hpp"

#include <array>
#include <vector>

#include "../companion_keys.hpp"
#include "../random.hpp"
#include "lockbridge/error.hpp"

namespace lockbridge::detail {

AcquireAttempt TokenStrategy::try_acquire(Connection& connection, std::string_view key, std::chrono::milliseconds lease, bool learn_remaining) {
  last_token_ = random_token();
  const std::string lease_ms = std::to_string(lease.count());
  if (!set_nx_get_) return acquire_by_script(connection, key, lease_ms);
  // One plain command, no Lua: nil = set (ours); a string = someone else's lock, left as it is;
  // WRONGTYPE for a key of another type. The lock cycle's floor is two round trips, and a script
  // costs the server several times a plain SET.
  // A waiter also wants to know when the holder's lease ends (its backoff never sleeps past it):
  // PTTL rides in the same round trip, one cheap command more for the server.
  ReplyPtr reply;
  ReplyPtr pttl;
  if (learn_remaining) {
    const std::array<std::vector<std::string_view>, 2> commands{
        std::vector<std::string_view>{"SET", key, last_token_, "NX", "PX", lease_ms, "GET"},
        std::vector<std::string_view>{"PTTL", key}};
    auto replies = connection.pipeline(commands);
    reply = std::move(replies[0]);
    pttl = std::move(replies[1]);
  } else {
    reply = connection.run({"SET", key, last_token_, "NX", "PX", lease_ms, "GET"});
  }
  const std::string context = describe("acquire", key);
  if (reply->type == REDIS_REPLY_ERROR && as_view(*reply).starts_with("ERR syntax")) {
    set_nx_get_ = false;  // Redis before 7.0 cannot combine NX and GET
    return acquire_by_script(connection, key, lease_ms);
  }
  if (reply->type == REDIS_REPLY_ERROR && as_view(*reply).starts_with("WRONGTYPE")) {
    // Rare: one more round trip to say what the key is.
    const ReplyPtr type = connection.run({"TYPE", key});
    throw Error(Errc::wrong_type, context + ": WRONGTYPE lock key holds a " +
                                      (type->type == REDIS_REPLY_STATUS ? std::string(as_view(*type)) : "non-string") +
                                      ", not a string");
  }
  throw_if_error(*reply, context);
  AcquireAttempt attempt;
  if (reply->type == REDIS_REPLY_NIL) {
    attempt.acquired = true;
    attempt.value = last_token_;
  } else if (reply->type != REDIS_REPLY_STRING) {
    unexpected_reply(*reply, "nil or a string", context);
  } else if (pttl && pttl->type == REDIS_REPLY_INTEGER && pttl->integer >= 0) {
    attempt.holder_remaining = std::chrono::milliseconds(pttl->integer);
  }
  return attempt;
}

AcquireAttempt TokenStrategy::acquire_by_script(Connection& connection, std::string_view key,
                                                const std::string& lease_ms) {
  const ReplyPtr reply = run_script(connection, scripts_, kTokenAcquire, {key}, {last_token_, lease_ms});
  const std::string context = describe("acquire", key);
  throw_if_error(*reply, context);
  const redisReply& result = expect_array(*reply, 1, context);
  AcquireAttempt attempt;
  if (expect_integer(*result.element[0], context) == 1) {
    attempt.acquired = true;
    attempt.value = last_token_;
    return attempt;
  }
  if (result.elements >= 2) {
    const std::int64_t pttl = expect_integer(*result.element[1], context);
    if (pttl >= 0) attempt.holder_remaining = std::chrono::milliseconds(pttl);
  }
  return attempt;
}

ReleaseOutcome TokenStrategy::release(Connection& connection, std::string_view key, std::string_view value,
                                      std::string_view release_channel) {
  return compare_and_delete(connection, scripts_, key, value, release_channel);
}

std::optional<std::string> TokenStrategy::extend(Connection& connection, std::string_view key, std::string_view value,
                                                 std::chrono::milliseconds lease) {
  const std::string lease_ms = std::to_string(lease.count());
  const ReplyPtr reply = run_script(connection, scripts_, kCompareAndPexpire, {key}, {value, lease_ms});
  if (expect_integer(*reply, describe("extend", key)) != 1) return std::nullopt;
  return std::string(value);
}

LockInfo TokenStrategy::inspect(Connection& connection, std::string_view key, std::string_view my_value) {
  return read_lock_info(connection, key, my_value);
}

void TokenStrategy::abandon_attempt(Connection& connection, std::string_view key) noexcept {
  // The token is ours alone, so deleting it where it is still the value is always safe.
  try {
    if (!last_token_.empty()) (void)compare_and_delete(connection, scripts_, key, last_token_, release_channel(key));
  } catch (...) {  // best effort: the lease expires anyway
  }
}

}  // namespace lockbridge::detail
