// One Lua script run over many keys in one pipelined round trip: EVALSHA, loading the script first
// and again whenever the server answers NOSCRIPT (a restart or SCRIPT FLUSH), in which case only
// the calls that did not run are sent again.
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
