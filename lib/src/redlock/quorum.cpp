#include "redlock/quorum.hpp"

#include <algorithm>
#include <array>
#include <map>

#include "lockbridge/error.hpp"
#include "redis/eval_fallback.hpp"
#include "redis/script_runner.hpp"
#include "strategies/strategy.hpp"

namespace lockbridge::detail {

namespace {
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

bool is_error(const redisReply& reply, std::string_view prefix) {
  return reply.type == REDIS_REPLY_ERROR && as_view(reply).starts_with(prefix);
}
}  // namespace

void require_redlock_options(const MutexOptions& options) {
  const auto refuse = [](const std::string& what) {
    throw Error(Errc::bad_option, "redlock:// " + what + " (docs/guarantees.md, Redlock)");
  };
  if (options.strategy != StrategyKind::token) {
    refuse("needs the token strategy, not " + std::string(to_string(options.strategy)) +
           " (a legacy takeover by GETSET and client clocks, or Redisson's per-holder hash, does not compose with a "
           "majority of independent masters)");
  }
  if (options.token.fencing) refuse("cannot draw fencing tokens: each master would count its own");
  if (options.wait_mode == WaitMode::fair) refuse("has no fair queue: each master would keep its own order");
  if (options.watchdog.enabled) refuse("has no watchdog yet: renew with extend(), which needs a majority");
  if (options.replica_ack.replicas > 0) refuse("masters are independent: replica_ack does not apply");
}

milliseconds Quorum::drift(milliseconds lease) noexcept { return lease / 100 + milliseconds(2); }

Task<std::vector<Quorum::Answer>> Quorum::script_round(const Script& script, std::string_view key,
                                                       std::span<const std::string_view> args) {
  // The calls are the masters: the ones whose script cache lacks it (restarted, flushed) go again.
  const auto send = [&](ScriptForm form, const std::vector<std::size_t>& masters) -> Task<std::vector<Answer>> {
    std::vector<std::string_view> argv{
        form == ScriptForm::sha ? "EVALSHA" : "EVAL",
        form == ScriptForm::sha ? std::string_view(scripts_.sha_for(script)) : script.body, "1", key};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<std::vector<std::string_view>> commands;
    commands.push_back(std::move(argv));
    std::vector<Answer> every = co_await round(commands, masters);
    std::vector<Answer> asked;
    asked.reserve(masters.size());
    for (const std::size_t master : masters) asked.push_back(std::move(every[master]));
    co_return asked;
  };
  co_return co_await run_with_eval_fallback<Answer>(
      static_cast<std::size_t>(size()), send,
      [](const Answer& answer) { return answer.failure.empty() && lacks_script(*answer.replies.front()); });
}

std::string Quorum::failures_text(const std::vector<Answer>& answers) const {
  std::string text;
  for (const Answer& answer : answers) {
    if (!answer.failure.empty()) text += "; " + answer.failure;
  }
  return text;
}

Task<Quorum::Outcome> Quorum::acquire(std::string_view key, const std::string& value, milliseconds lease,
                                      bool learn_remaining, Clock::time_point deadline) {
  const auto started = Clock::now();
  const std::string lease_ms = std::to_string(lease.count());
  // With GET (Redis 7.0) a key of another type answers WRONGTYPE instead of passing for held; nil
  // means we set it.
  std::vector<std::vector<std::string_view>> commands{{"SET", key, value, "NX", "PX", lease_ms, "GET"}};
  if (learn_remaining) commands.push_back({"PTTL", key});
  const std::vector<std::size_t> every_master;  // named: no temporary inside a co_await (GCC 12)
  std::vector<Answer> answers = co_await round(commands, every_master, deadline);
  int votes = 0;
  int wrong_type = 0;
  int failed = 0;
  std::optional<milliseconds> holder_remaining;
  for (Answer& answer : answers) {
    if (answer.failure.empty()) {
      const redisReply& reply = *answer.replies.front();
      if (reply.type == REDIS_REPLY_NIL) {
        ++votes;
      } else if (reply.type == REDIS_REPLY_STRING && learn_remaining &&
                 answer.replies[1]->type == REDIS_REPLY_INTEGER && answer.replies[1]->integer >= 0) {
        const milliseconds left(answer.replies[1]->integer);
        holder_remaining = holder_remaining ? std::min(*holder_remaining, left) : left;
      } else if (is_error(reply, "WRONGTYPE")) {
        ++wrong_type;
      } else if (reply.type == REDIS_REPLY_ERROR) {
        answer.failure = describe("acquire", key) + " on " + std::string(as_view(reply));
      }
    }
    if (!answer.failure.empty()) ++failed;
  }
  Outcome outcome;
  outcome.votes = votes;
  outcome.validity = std::chrono::floor<milliseconds>(started + lease - drift(lease) - Clock::now());
  outcome.held = votes >= majority() && outcome.validity > milliseconds::zero();
  if (outcome.held) co_return outcome;
  // A master that failed may have set the key before its reply was lost: delete ours everywhere.
  if (votes > 0 || failed > 0) co_await delete_ours(key, value);
  outcome = Outcome{false, votes, milliseconds::zero(), holder_remaining};
  if (size() - failed - wrong_type >= majority()) co_return outcome;  // held by another owner: wait
  if (wrong_type > 0) {
    throw Error(Errc::wrong_type, describe("acquire", key) + ": the key holds another type than a string on " +
                                      std::to_string(wrong_type) + " of " + std::to_string(size()) + " masters");
  }
  throw Error(Errc::no_quorum, describe("acquire", key) + ": only " + std::to_string(size() - failed) + " of " +
                                   std::to_string(size()) + " masters answered; Redlock needs " +
                                   std::to_string(majority()) + failures_text(answers));
}

Task<Quorum::Outcome> Quorum::extend(std::string_view key, const std::string& value, milliseconds lease) {
  const auto started = Clock::now();
  const std::string lease_ms = std::to_string(lease.count());
  const std::array<std::string_view, 2> args{value, lease_ms};
  const std::vector<Answer> answers = co_await script_round(kCompareAndPexpire, key, args);
  Outcome outcome;
  for (const Answer& answer : answers) {
    const redisReply* reply = answer.failure.empty() ? answer.replies.front().get() : nullptr;
    if (reply != nullptr && reply->type == REDIS_REPLY_INTEGER && reply->integer == 1) ++outcome.votes;
  }
  outcome.validity = std::chrono::floor<milliseconds>(started + lease - drift(lease) - Clock::now());
  outcome.held = outcome.votes >= majority() && outcome.validity > milliseconds::zero();
  if (!outcome.held) {
    co_await delete_ours(key, value);  // a minority's copies would only block the next holder
    outcome.validity = milliseconds::zero();
  }
  co_return outcome;
}

Task<int> Quorum::release(std::string_view key, const std::string& value) {
  const std::array<std::string_view, 2> args{value, ""};
  const std::vector<Answer> answers = co_await script_round(kCompareAndDelete, key, args);
  int deleted = 0;
  int answered = 0;
  for (const Answer& answer : answers) {
    if (!answer.failure.empty()) continue;
    ++answered;
    const redisReply& reply = *answer.replies.front();
    if (reply.type == REDIS_REPLY_INTEGER && reply.integer == 1) ++deleted;
  }
  if (answered == 0) {
    throw Error(Errc::no_quorum, describe("release", key) + ": no master answered; each copy ends with its lease" +
                                     failures_text(answers));
  }
  co_return deleted;
}

Task<void> Quorum::delete_ours(std::string_view key, const std::string& value) {
  try {
    (void)co_await release(key, value);
  } catch (...) {  // best effort: the copies end with their lease
  }
}

Task<LockInfo> Quorum::inspect(std::string_view key, std::string_view my_value) {
  const std::vector<std::vector<std::string_view>> commands{{"GET", key}, {"PTTL", key}};
  const std::vector<std::size_t> every_master;  // named: no temporary inside a co_await (GCC 12)
  const std::vector<Answer> answers = co_await round(commands, every_master);
  const std::string context = describe("inspect", key);
  std::map<std::string, std::vector<milliseconds>> ttls_by_value;  // -1 ms: no TTL
  int answered = 0;
  for (const Answer& answer : answers) {
    if (!answer.failure.empty()) continue;
    ++answered;
    const redisReply& value = *answer.replies[0];
    throw_if_error(value, context);
    if (value.type != REDIS_REPLY_STRING) continue;
    ttls_by_value[std::string(as_view(value))].push_back(milliseconds(expect_integer(*answer.replies[1], context)));
  }
  if (answered < majority()) {
    throw Error(Errc::no_quorum, context + ": only " + std::to_string(answered) + " of " + std::to_string(size()) +
                                     " masters answered" + failures_text(answers));
  }
  LockInfo info;
  for (const auto& [value, ttls] : ttls_by_value) {
    if (static_cast<int>(ttls.size()) < majority()) continue;
    info.exists = true;
    info.value = value;
    info.held_by_me = !my_value.empty() && value == my_value;
    const milliseconds shortest = *std::min_element(ttls.begin(), ttls.end());
    if (shortest >= milliseconds::zero()) info.ttl = shortest;
  }
  co_return info;
}

}  // namespace lockbridge::detail
