#include "redlock/quorum.hpp"

#include <poll.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <map>
#include <numeric>

#include "lockbridge/error.hpp"
#include "redis/eval_fallback.hpp"
#include "redis/script_runner.hpp"
#include "strategies/strategy.hpp"
#include "util/poll_timeout.hpp"

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

Quorum::Quorum(std::span<const std::unique_ptr<ConnectionPool>> masters, ScriptCache& scripts)
    : masters_(masters), scripts_(scripts) {}

milliseconds Quorum::drift(milliseconds lease) noexcept { return lease / 100 + milliseconds(2); }

std::vector<Quorum::Answer> Quorum::round(std::span<const std::vector<std::string_view>> commands,
                                          std::vector<std::size_t> which, Clock::time_point deadline) {
  if (which.empty()) {
    which.resize(masters_.size());
    std::iota(which.begin(), which.end(), std::size_t{0});
  }
  std::vector<Answer> answers(masters_.size());
  struct InFlight {
    std::size_t master;
    ConnectionPool::PooledConnection connection;
    std::vector<ReplyPtr> replies;
    bool waiting = true;
  };
  std::vector<InFlight> flying;
  flying.reserve(which.size());
  const auto replies_due = Clock::now() + masters_.front()->options().command_timeout;
  for (const std::size_t master : which) {
    try {
      ConnectionPool::PooledConnection connection = masters_[master]->borrow(deadline);
      connection->send_pipeline(commands);
      flying.push_back(InFlight{master, std::move(connection), {}});
    } catch (const Error& error) {
      answers[master].failure = message_of(error);
    }
  }
  // Wait for every master's replies together: one slow master costs the round its own delay once.
  std::vector<pollfd> fds;
  std::vector<InFlight*> polled;
  for (;;) {
    fds.clear();
    polled.clear();
    for (InFlight& request : flying) {
      if (!request.waiting) continue;
      fds.push_back(pollfd{request.connection->fd(), POLLIN, 0});
      polled.push_back(&request);
    }
    const auto left = std::chrono::ceil<milliseconds>(replies_due - Clock::now());
    if (fds.empty() || left <= milliseconds::zero()) break;
    const int ready = poll(fds.data(), fds.size(), poll_timeout(left));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) break;
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      InFlight& request = *polled[i];
      try {
        for (ReplyPtr& reply : request.connection->read_available()) request.replies.push_back(std::move(reply));
        if (request.replies.size() < commands.size()) continue;
        answers[request.master].replies = std::move(request.replies);
      } catch (const Error& error) {
        answers[request.master].failure = message_of(error);
      }
      request.waiting = false;
    }
  }
  for (InFlight& request : flying) {
    if (!request.waiting) continue;
    request.connection->discard();  // its reply can never be matched up again
    answers[request.master].failure =
        masters_[request.master]->url().redacted() + ": no reply within the command timeout (the command may have run)";
  }
  return answers;
}

std::vector<Quorum::Answer> Quorum::script_round(const Script& script, std::string_view key,
                                                 std::span<const std::string_view> args) {
  // The calls are the masters: the ones whose script cache lacks it (restarted, flushed) go again.
  // Each round runs in place, on every master at once.
  const auto send = [&](ScriptForm form, const std::vector<std::size_t>& masters) -> Task<std::vector<Answer>> {
    std::vector<std::string_view> argv{
        form == ScriptForm::sha ? "EVALSHA" : "EVAL",
        form == ScriptForm::sha ? std::string_view(scripts_.sha_for(script)) : script.body, "1", key};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<Answer> every = round(std::vector<std::vector<std::string_view>>{std::move(argv)}, masters);
    std::vector<Answer> asked;
    asked.reserve(masters.size());
    for (const std::size_t master : masters) asked.push_back(std::move(every[master]));
    co_return asked;
  };
  return run_with_eval_fallback<Answer>(
             masters_.size(), send,
             [](const Answer& answer) { return answer.failure.empty() && lacks_script(*answer.replies.front()); })
      .run_now();
}

std::string Quorum::failures_text(const std::vector<Answer>& answers) const {
  std::string text;
  for (const Answer& answer : answers) {
    if (!answer.failure.empty()) text += "; " + answer.failure;
  }
  return text;
}

Quorum::Outcome Quorum::acquire(std::string_view key, const std::string& value, milliseconds lease,
                                bool learn_remaining, Clock::time_point deadline) {
  const auto started = Clock::now();
  const std::string lease_ms = std::to_string(lease.count());
  // With GET (Redis 7.0) a key of another type answers WRONGTYPE instead of passing for held; nil
  // means we set it.
  std::vector<std::vector<std::string_view>> commands{{"SET", key, value, "NX", "PX", lease_ms, "GET"}};
  if (learn_remaining) commands.push_back({"PTTL", key});
  std::vector<Answer> answers = round(commands, {}, deadline);
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
  if (outcome.held) return outcome;
  // A master that failed may have set the key before its reply was lost: delete ours everywhere.
  if (votes > 0 || failed > 0) delete_ours(key, value);
  outcome = Outcome{false, votes, milliseconds::zero(), holder_remaining};
  if (size() - failed - wrong_type >= majority()) return outcome;  // held by another owner: wait
  if (wrong_type > 0) {
    throw Error(Errc::wrong_type, describe("acquire", key) + ": the key holds another type than a string on " +
                                      std::to_string(wrong_type) + " of " + std::to_string(size()) + " masters");
  }
  throw Error(Errc::no_quorum, describe("acquire", key) + ": only " + std::to_string(size() - failed) + " of " +
                                   std::to_string(size()) + " masters answered; Redlock needs " +
                                   std::to_string(majority()) + failures_text(answers));
}

Quorum::Outcome Quorum::extend(std::string_view key, const std::string& value, milliseconds lease) {
  const auto started = Clock::now();
  const std::string lease_ms = std::to_string(lease.count());
  const std::array<std::string_view, 2> args{value, lease_ms};
  const std::vector<Answer> answers = script_round(kCompareAndPexpire, key, args);
  Outcome outcome;
  for (const Answer& answer : answers) {
    const redisReply* reply = answer.failure.empty() ? answer.replies.front().get() : nullptr;
    if (reply != nullptr && reply->type == REDIS_REPLY_INTEGER && reply->integer == 1) ++outcome.votes;
  }
  outcome.validity = std::chrono::floor<milliseconds>(started + lease - drift(lease) - Clock::now());
  outcome.held = outcome.votes >= majority() && outcome.validity > milliseconds::zero();
  if (!outcome.held) {
    delete_ours(key, value);  // a minority's copies would only block the next owner
    outcome.validity = milliseconds::zero();
  }
  return outcome;
}

int Quorum::release(std::string_view key, const std::string& value) {
  const std::array<std::string_view, 2> args{value, ""};
  const std::vector<Answer> answers = script_round(kCompareAndDelete, key, args);
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
  return deleted;
}

void Quorum::delete_ours(std::string_view key, const std::string& value) noexcept {
  try {
    (void)release(key, value);
  } catch (...) {  // best effort: the copies end with their lease
  }
}

LockInfo Quorum::inspect(std::string_view key, std::string_view my_value) {
  const std::vector<std::vector<std::string_view>> commands{{"GET", key}, {"PTTL", key}};
  const std::vector<Answer> answers = round(commands);
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
  return info;
}

}  // namespace lockbridge::detail
