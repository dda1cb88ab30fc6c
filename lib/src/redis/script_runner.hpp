// EVALSHA with the script's SHA1 (computed here, never asked of the server); EVAL on NOSCRIPT (a
// server that has not seen the script yet: a new, restarted or flushed one), which also puts the
// script into the server's cache. No SCRIPT LOAD, so an ACL that denies SCRIPT but allows EVAL and
// EVALSHA does not stop a lock from being released.
#pragma once

#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "redis/connection.hpp"
#include "redis/link.hpp"
#include "strategies/scripts.hpp"

namespace lockbridge::detail {

// Each script's SHA1, computed once per Client. No I/O.
class ScriptCache {
 public:
  const std::string& sha_for(const Script& script);

 private:
  std::mutex mutex_;
  std::unordered_map<const char*, std::string> sha_by_body_;
};

// One script invocation, kept as data so that many can share one pipeline (the watchdog's batches).
struct ScriptCall {
  const Script* script = nullptr;
  std::vector<std::string> keys;
  std::vector<std::string> args;
};

// Whether the server answered NOSCRIPT: it lacks the script, and the EVALSHA did not run.
bool lacks_script(const redisReply& reply) noexcept;

// Runs every call in one pipelined round trip. The calls the server answers NOSCRIPT (it lacks the
// script: new, restarted or flushed) did not run; they are sent again as EVAL in one more pipeline
// (run_with_eval_fallback, eval_fallback.hpp). Replies in order; error replies are returned.
Task<std::vector<ReplyPtr>> run_scripts(Link& link, ScriptCache& cache, std::span<const ScriptCall> calls);
// The same, run in place on a connection (the watchdog's batches).
std::vector<ReplyPtr> run_scripts(Connection& connection, ScriptCache& cache, std::span<const ScriptCall> calls);

// Runs `script` with `keys` then `args`, any number of each. Error replies are returned (see
// throw_if_error). The views must live until the task ends.
Task<ReplyPtr> run_script(Link& link, ScriptCache& cache, const Script& script, std::span<const std::string_view> keys,
                          std::span<const std::string_view> args);

}  // namespace lockbridge::detail
