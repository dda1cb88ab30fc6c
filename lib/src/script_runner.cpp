#include "script_runner.hpp"

#include <array>

#include "lockbridge/error.hpp"

namespace lockbridge::detail {

const std::string& ScriptCache::sha_for(Connection& connection, const Script& script) {
  {
    std::lock_guard lock(mutex_);
    if (const auto it = sha_by_body_.find(script.body.data()); it != sha_by_body_.end()) return it->second;
  }
  const ReplyPtr reply = connection.run({"SCRIPT", "LOAD", script.body});
  const std::string context = "SCRIPT LOAD " + std::string(script.name);
  if (reply->type != REDIS_REPLY_STRING) unexpected_reply(*reply, "a SHA1", context);
  std::lock_guard lock(mutex_);
  // Map nodes never move or go away, so the reference stays valid after the lock is released.
  return sha_by_body_.emplace(script.body.data(), std::string(as_view(*reply))).first->second;
}

namespace {
// EVALSHA <sha> or EVAL <body>, then numkeys, keys and args: views into `call` and `head`.
std::vector<std::string_view> script_command(const ScriptCall& call, std::string_view verb, std::string_view script,
                                             const std::string& numkeys) {
  std::vector<std::string_view> command{verb, script, numkeys};
  command.insert(command.end(), call.keys.begin(), call.keys.end());
  command.insert(command.end(), call.args.begin(), call.args.end());
  return command;
}
}  // namespace

std::vector<ReplyPtr> run_scripts(Connection& connection, ScriptCache& cache, std::span<const ScriptCall> calls) {
  std::vector<std::string> numkeys;
  numkeys.reserve(calls.size());
  std::vector<std::vector<std::string_view>> commands;
  commands.reserve(calls.size());
  for (const ScriptCall& call : calls) {
    numkeys.push_back(std::to_string(call.keys.size()));
    commands.push_back(script_command(call, "EVALSHA", cache.sha_for(connection, *call.script), numkeys.back()));
  }
  std::vector<ReplyPtr> replies = connection.pipeline(commands);
  for (std::size_t i = 0; i < replies.size(); ++i) {
    if (replies[i]->type == REDIS_REPLY_ERROR && as_view(*replies[i]).starts_with("NOSCRIPT")) {
      replies[i] = connection.run(script_command(calls[i], "EVAL", calls[i].script->body, numkeys[i]));
    }
  }
  return replies;
}

ReplyPtr run_script(Connection& connection, ScriptCache& cache, const Script& script,
                    std::initializer_list<std::string_view> keys, std::initializer_list<std::string_view> args) {
  constexpr std::size_t kMaxArgs = 16;
  if (keys.size() + args.size() + 3 > kMaxArgs) throw Error(Errc::bad_option, "too many script arguments");
  const std::string& sha = cache.sha_for(connection, script);
  const std::string numkeys = std::to_string(keys.size());
  std::array<std::string_view, kMaxArgs> argv{};
  std::size_t argc = 0;
  argv[argc++] = "EVALSHA";
  argv[argc++] = sha;
  argv[argc++] = numkeys;
  for (const auto key : keys) argv[argc++] = key;
  for (const auto arg : args) argv[argc++] = arg;
  ReplyPtr reply = connection.run(Args(argv.data(), argc));
  if (reply->type == REDIS_REPLY_ERROR && as_view(*reply).starts_with("NOSCRIPT")) {
    argv[0] = "EVAL";
    argv[1] = script.body;
    reply = connection.run(Args(argv.data(), argc));
  }
  return reply;
}

}  // namespace lockbridge::detail
