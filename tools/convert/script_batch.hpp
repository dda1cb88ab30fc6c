// One Lua script run over many keys in one pipelined round trip (one per master on a cluster):
// EVALSHA, after loading the script once; the calls a server answers NOSCRIPT (a restart, SCRIPT
// FLUSH, a cluster master the load did not reach) did not run, and are sent again as EVAL.
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
  ScriptBatch(const Client& client, std::string_view source) : client_(client), source_(source) {}

  // Replies in the order of `calls`; an error reply is returned in place (Reply::Kind::error).
  // Throws Error for transport failures.
  std::vector<Reply> run(const std::vector<KeyCall>& calls);

 private:
  void load();

  const Client& client_;
  const std::string_view source_;
  std::string sha_;
};

}  // namespace lockbridge::tools::convert
