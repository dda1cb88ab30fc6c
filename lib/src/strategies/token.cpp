#include "strategies/token.hpp"

#include <algorithm>
#include <array>
#include <vector>

#include "lockbridge/error.hpp"
#include "lockbridge/identity.hpp"
#include "strategies/companion_keys.hpp"

namespace lockbridge::detail {

TokenStrategy::TokenStrategy(const MutexOptions& options, ScriptCache& scripts)
    : LockStrategy(scripts),
      fencing_(options.token.fencing),
      fixed_value_(options.token.fixed_value),
      fair_(options.wait_mode == WaitMode::fair),
      waiter_timeout_ms_(std::to_string(options.fair_waiter_timeout.count())) {}

Task<AcquireAttempt> TokenStrategy::try_acquire(Link& link, std::string_view key, const AttemptRequest& request) {
  last_token_ = fixed_value_.empty() ? random_token() : fixed_value_;
  const std::string lease_ms = std::to_string(request.lease.count());
  if (!set_nx_get_ || fencing_ || fair_ || !request.queued_waiter.empty())
    co_return co_await acquire_by_script(link, key, lease_ms, request);
  co_return co_await acquire_by_set(link, key, lease_ms, request.learn_remaining);
}

Task<AcquireAttempt> TokenStrategy::acquire_by_set(Link& link, std::string_view key, const std::string& lease_ms,
                                                   bool learn_remaining) {
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
    auto replies = co_await link.pipeline(commands);
    reply = std::move(replies[0]);
    pttl = std::move(replies[1]);
  } else {
    reply = co_await link.command("SET", key, last_token_, "NX", "PX", lease_ms, "GET");
  }
  const ReplyContext context("acquire", key);
  if (reply->type == REDIS_REPLY_ERROR && as_view(*reply).starts_with("ERR syntax")) {
    set_nx_get_ = false;  // Redis before 7.0 cannot combine NX and GET
    co_return co_await acquire_by_script(link, key, lease_ms, AttemptRequest{});
  }
  if (reply->type == REDIS_REPLY_ERROR && as_view(*reply).starts_with("WRONGTYPE")) {
    // Rare: one more round trip to say what the key is.
    const ReplyPtr type = co_await link.command("TYPE", key);
    throw Error(Errc::wrong_type, context.text() + ": WRONGTYPE lock key holds a " +
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
  co_return attempt;
}

Task<AcquireAttempt> TokenStrategy::acquire_by_script(Link& link, std::string_view key, const std::string& lease_ms,
                                                      const AttemptRequest& request) {
  // Fair mode queues every waiter (a single try too: it must not pass the queue); notify mode
  // queues a wait from its second attempt on, in the waiter queue.
  const bool queued = fair_ || !request.queued_waiter.empty();
  ScriptCall call{queued ? &kTokenAcquireFair : &kTokenAcquire, {std::string(key)}, {last_token_, lease_ms}};
  if (queued) {
    call.keys.insert(call.keys.end(), {queue_of(key), deadlines_of(key), grant_record(key)});
    call.args.insert(call.args.end(),
                     {std::string(request.queued_waiter), waiter_timeout_ms_, fair_ ? std::string() : starving_in_arg(request),
                      grant_spec(request, std::chrono::milliseconds(0), fencing_, 't', last_token_)});
  }
  if (fencing_) call.keys.push_back(fence_counter(key));
  const auto replies = co_await run_scripts(link, scripts_, std::span(&call, 1));
  const ReplyContext context("acquire", key);
  throw_if_script_error(*replies.front(), context, call.keys);
  const redisReply& result = expect_array(*replies.front(), 1, context);
  AcquireAttempt attempt;
  const bool acquired = expect_integer(*result.element[0], context) == 1;
  const std::int64_t second = result.elements >= 2 ? expect_integer(*result.element[1], context) : -1;
  if (acquired) {
    attempt.acquired = true;
    attempt.value = last_token_;
    if (result.elements >= 4) {  // {1, fence, value, pttl}: a release granted it to this waiter
      attempt.value = string_or_nil(*result.element[2], context).value_or(last_token_);
      attempt.granted_remaining = std::chrono::milliseconds(std::max<std::int64_t>(0, expect_integer(*result.element[3], context)));
    }
    if (fencing_) attempt.fence = static_cast<std::uint64_t>(second);
  } else if (second >= 0) {
    attempt.holder_remaining = std::chrono::milliseconds(second);
  }
  co_return attempt;
}

std::string TokenStrategy::queue_of(std::string_view key) const { return fair_ ? fair_queue(key) : waiter_queue(key); }

std::string TokenStrategy::deadlines_of(std::string_view key) const {
  return fair_ ? fair_deadlines(key) : waiter_times(key);
}

Task<void> TokenStrategy::leave_queue(Link& link, std::string_view key, std::string_view queued_waiter) {
  const std::string queue = queue_of(key);
  const std::string deadlines = deadlines_of(key);
  co_await leave_queue_passing_on(*this, link, key, queue, deadlines, queued_waiter);
}

Task<ReleaseOutcome> TokenStrategy::release(Link& link, std::string_view key, std::string_view value,
                                            std::string_view release_channel) {
  const std::string queue = queue_of(key);
  const std::string deadlines = deadlines_of(key);
  const std::string record = grant_record(key);
  const std::string fences = fence_counter(key);
  const std::array<std::string_view, 5> keys{key, queue, deadlines, record, fences};
  const std::array<std::string_view, 4> args{value, release_channel, "t", ""};
  co_return co_await release_by_script(link, scripts_, kCompareAndHandOff, keys, args);
}

ScriptCall TokenStrategy::extend_call(std::string_view key, std::string_view value,
                                      std::chrono::milliseconds lease) const {
  return ScriptCall{&kCompareAndPexpire, {std::string(key)}, {std::string(value), std::to_string(lease.count())}};
}

std::optional<std::string> TokenStrategy::extend_outcome(const redisReply& reply, std::string_view key,
                                                         std::string_view value) const {
  if (expect_integer(reply, ReplyContext("extend", key)) != 1) return std::nullopt;
  return std::string(value);  // the token stays; only its TTL moved
}

Task<LockInfo> TokenStrategy::inspect(Link& link, std::string_view key, std::string_view my_value) {
  co_return co_await read_lock_info(link, key, my_value);
}

Task<void> TokenStrategy::abandon_attempt(Link& link, std::string_view key) {
  // The token is ours alone, so deleting it where it is still the value is always safe. A fixed
  // value is not: another holder of the same identity may have written it, so it is left to its TTL.
  if (!fixed_value_.empty()) co_return;
  try {
    const std::string channel = release_channel(key);
    if (!last_token_.empty()) (void)co_await release(link, key, last_token_, channel);
  } catch (...) {  // best effort: the key's TTL runs out anyway
  }
}

}  // namespace lockbridge::detail
