#include "redis/script_runner.hpp"

#include <vector>

#include "redis/eval_fallback.hpp"

namespace lockbridge::detail {

const std::string& ScriptCache::sha_for(const Script& script) {
  std::lock_guard lock(mutex_);
  auto it = sha_by_body_.find(script.body.data());
  if (it == sha_by_body_.end()) it = sha_by_body_.emplace(script.body.data(), script_sha1(script.body)).first;
  // Map nodes never move or go away, so the reference stays valid after the lock is released.
  return it->second;
}

namespace {
// EVALSHA <sha> (or EVAL <body>), numkeys, keys, args: views into the arguments.
template <class Keys, class Values>
std::vector<std::string_view> script_argv(std::string_view verb, std::string_view script, const std::string& numkeys,
                                          const Keys& keys, const Values& args) {
  std::vector<std::string_view> argv{verb, script, numkeys};
  argv.reserve(3 + keys.size() + args.size());
  argv.insert(argv.end(), keys.begin(), keys.end());
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}
}  // namespace

bool lacks_script(const redisReply& reply) noexcept {
  return reply.type == REDIS_REPLY_ERROR && as_view(reply).starts_with("NOSCRIPT");
}

Task<std::vector<ReplyPtr>> run_scripts(Link& link, ScriptCache& cache, std::span<const ScriptCall> calls) {
  std::vector<std::string> numkeys;
  numkeys.reserve(calls.size());
  for (const ScriptCall& call : calls) numkeys.push_back(std::to_string(call.keys.size()));
  // One pipeline for the batch, and one more for the calls the server lacked the script for.
  const auto send = [&](ScriptForm form, const std::vector<std::size_t>& which) -> Task<std::vector<ReplyPtr>> {
    std::vector<std::vector<std::string_view>> commands;
    commands.reserve(which.size());
    for (const std::size_t i : which) {
      const ScriptCall& call = calls[i];
      commands.push_back(form == ScriptForm::sha
                             ? script_argv("EVALSHA", cache.sha_for(*call.script), numkeys[i], call.keys, call.args)
                             : script_argv("EVAL", call.script->body, numkeys[i], call.keys, call.args));
    }
    co_return co_await link.pipeline(commands);
  };
  co_return co_await run_with_eval_fallback<ReplyPtr>(calls.size(), send,
                                                      [](const ReplyPtr& reply) { return lacks_script(*reply); });
}

std::vector<ReplyPtr> run_scripts(Connection& connection, ScriptCache& cache, std::span<const ScriptCall> calls) {
  BlockingLink link(connection);
  return run_scripts(link, cache, calls).run_now();
}

Task<ReplyPtr> run_script(Link& link, ScriptCache& cache, const Script& script, std::span<const std::string_view> keys,
                          std::span<const std::string_view> args) {
  const std::string numkeys = std::to_string(keys.size());
  const auto send = [&](ScriptForm form,
                        const std::vector<std::size_t>& /*the one call*/) -> Task<std::vector<ReplyPtr>> {
    // Named, not a temporary of the co_await's expression (which GCC 12 may destroy twice).
    const std::vector<std::string_view> argv = form == ScriptForm::sha
                                                   ? script_argv("EVALSHA", cache.sha_for(script), numkeys, keys, args)
                                                   : script_argv("EVAL", script.body, numkeys, keys, args);
    ReplyPtr got = co_await link.run(Args(argv));
    std::vector<ReplyPtr> reply;
    reply.push_back(std::move(got));
    co_return reply;
  };
  std::vector<ReplyPtr> replies =
      co_await run_with_eval_fallback<ReplyPtr>(1, send, [](const ReplyPtr& reply) { return lacks_script(*reply); });
  co_return std::move(replies.front());
}

}  // namespace lockbridge::detail
