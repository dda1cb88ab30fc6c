// EVALSHA with the script's hash, loaded once per Client; EVAL on NOSCRIPT (a restarted or
// flushed server), which also puts the script back into the server's cache.
#pragma once

#include <initializer_list>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "connection.hpp"
#include "scripts.hpp"

namespace lockbridge::detail {

class ScriptCache {
 public:
  // The SHA1 of the script, loading it with SCRIPT LOAD on first use (outside the lock).
  const std::string& sha_for(Connection& connection, const Script& script);
  // The SHA1 when a SCRIPT LOAD has already reported it; null before that. No I/O.
  const std::string* known_sha(const Script& script);

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

// Runs every call in one pipelined round trip. If the server answers NOSCRIPT (its script cache
// was lost), the missing scripts are loaded again and those calls resent in one more pipeline.
// Replies in order; error replies are returned.
std::vector<ReplyPtr> run_scripts(Connection& connection, ScriptCache& cache, std::span<const ScriptCall> calls);

// Runs `script` with `keys` then `args`, any number of each. Error replies are returned (see
// throw_if_error).
ReplyPtr run_script(Connection& connection, ScriptCache& cache, const Script& script,
                    std::span<const std::string_view> keys, std::span<const std::string_view> args);
ReplyPtr run_script(Connection& connection, ScriptCache& cache, const Script& script,
                    std::initializer_list<std::string_view> keys, std::initializer_list<std::string_view> args);

}  // namespace lockbridge::detail
