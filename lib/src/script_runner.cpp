#include "script_runner.hpp"

#include <vector>

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

ReplyPtr run_script(Connection& connection, ScriptCache& cache, const Script& script,
                    std::span<const std::string_view> keys, std::span<const std::string_view> args) {
  const std::string& sha = cache.sha_for(connection, script);
  const std::string numkeys = std::to_string(keys.size());
  std::vector<std::string_view> argv;
  argv.reserve(3 + keys.size() + args.size());
  argv.insert(argv.end(), {"EVALSHA", sha, numkeys});
  argv.insert(argv.end(), keys.begin(), keys.end());
  argv.insert(argv.end(), args.begin(), args.end());
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
  return run_script(connection, cache, script, std::span(keys.begin(), keys.size()), std::span(args.begin(), args.size()));
}

}  // namespace lockbridge::detail
