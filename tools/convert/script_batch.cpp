#include "script_batch.hpp"

#include "lockbridge/error.hpp"
#include "replies.hpp"

namespace lockbridge::tools::convert {

namespace {
bool is_noscript(const Reply& reply) { return reply.kind == Reply::Kind::error && reply.str.starts_with("NOSCRIPT"); }
}  // namespace

void ScriptBatch::load() {
  sha_ = string_reply(client_.command({"SCRIPT", "LOAD", source_}), {"SCRIPT LOAD"});
}

std::vector<Reply> ScriptBatch::run(const std::vector<KeyCall>& calls) {
  if (sha_.empty()) load();
  std::vector<Reply> replies(calls.size());
  std::vector<std::size_t> pending(calls.size());
  for (std::size_t i = 0; i < calls.size(); ++i) pending[i] = i;
  // EVALSHA first. A NOSCRIPT reply means that call did not run, so it is sent again as EVAL with
  // the source, which also caches the script on that server: the one that lost its cache (a
  // restart, SCRIPT FLUSH), or a cluster master that SCRIPT LOAD never reached.
  for (int round = 0; round < 2 && !pending.empty(); ++round) {
    std::vector<std::vector<std::string>> commands;
    commands.reserve(pending.size());
    for (const std::size_t i : pending) {
      std::vector<std::string> command{round == 0 ? "EVALSHA" : "EVAL", round == 0 ? sha_ : std::string(source_), "1",
                                       calls[i].key};
      command.insert(command.end(), calls[i].args.begin(), calls[i].args.end());
      commands.push_back(std::move(command));
    }
    std::vector<Reply> answers = client_.pipeline(commands);
    std::vector<std::size_t> again;
    for (std::size_t j = 0; j < pending.size(); ++j) {
      if (is_noscript(answers[j])) again.push_back(pending[j]);
      replies[pending[j]] = std::move(answers[j]);
    }
    pending = std::move(again);
  }
  return replies;
}

}  // namespace lockbridge::tools::convert
