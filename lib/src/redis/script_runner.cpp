#include "redis/script_runner.hpp"

#include <vector>

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

std::vector<ReplyPtr> run_scripts(Connection& connection, ScriptCache& cache, std::span<const ScriptCall> calls) {
  std::vector<std::string> numkeys;
  numkeys.reserve(calls.size());
  std::vector<std::vector<std::string_view>> commands;
  commands.reserve(calls.size());
  for (const ScriptCall& call : calls) {
    numkeys.push_back(std::to_string(call.keys.size()));
    commands.push_back(script_argv("EVALSHA", cache.sha_for(*call.script), numkeys.back(), call.keys, call.args));
  }
  std::vector<ReplyPtr> replies = connection.pipeline(commands);
  std::vector<std::size_t> missing;  // calls answered NOSCRIPT
  for (std::size_t i = 0; i < replies.size(); ++i) {
    if (replies[i]->type == REDIS_REPLY_ERROR && as_view(*replies[i]).starts_with("NOSCRIPT")) missing.push_back(i);
  }
  if (missing.empty()) return replies;
  // The server lacks the scripts (new, restarted, SCRIPT FLUSH): the failed calls go again as EVAL,
  // in one pipeline. Two round trips for the batch, not one per call.
  std::vector<std::vector<std::string_view>> again;
  again.reserve(missing.size());
  for (const std::size_t i : missing) {
    commands[i][0] = "EVAL";
    commands[i][1] = calls[i].script->body;
    again.push_back(std::move(commands[i]));
  }
  std::vector<ReplyPtr> retried = connection.pipeline(again);
  for (std::size_t j = 0; j < missing.size(); ++j) replies[missing[j]] = std::move(retried[j]);
  return replies;
}

ReplyPtr run_script(Connection& connection, ScriptCache& cache, const Script& script,
                    std::span<const std::string_view> keys, std::span<const std::string_view> args) {
  const std::string numkeys = std::to_string(keys.size());
  std::vector<std::string_view> argv = script_argv("EVALSHA", cache.sha_for(script), numkeys, keys, args);
  ReplyPtr reply = connection.run(Args(argv));
  if (reply->type == REDIS_REPLY_ERROR && as_view(*reply).starts_with("NOSCRIPT")) {
    argv[0] = "EVAL";
    argv[1] = script.body;
    reply = connection.run(Args(argv));
  }
  return reply;
}

ReplyPtr run_script(Connection& connection, ScriptCache& cache, const Script& script,
                    std::initializer_list<std::string_view> keys, std::initializer_list<std::string_view> args) {
  return run_script(connection, cache, script, std::span(keys.begin(), keys.size()),
                    std::span(args.begin(), args.size()));
}

}  // namespace lockbridge::detail
