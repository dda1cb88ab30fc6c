// One Lua script run over many keys in one pipelined round trip (one per master on a cluster):
// EVALSHA with the script's SHA1 computed here (no SCRIPT LOAD, which an ACL may deny while it
// allows EVAL); the calls a server answers NOSCRIPT (it has not seen the script: new, restarted,
// flushed) did not run, and are sent again as EVAL.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "lockbridge/client.hpp"

namespace lockbridge::tools::convert {

struct KeyCall {
  std::string key;                // KEYS[1]
  std::vector<std::string> args;  // ARGV
};

class ScriptBatch {
 public:
  ScriptBatch(const Client& client, std::string_view source);

  // Replies in the order of `calls`; an error reply is returned in place (Reply::Kind::error).
  // Throws Error for transport failures.
  std::vector<Reply> run(const std::vector<KeyCall>& calls);

 private:
  const Client& client_;
  const std::string_view source_;
  const std::string sha_;
};

}  // namespace lockbridge::tools::convert
