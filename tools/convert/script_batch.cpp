#include "script_batch.hpp"

#include "replies.hpp"

namespace lockbridge::tools::convert {

ScriptBatch::ScriptBatch(const Client& client, std::string_view source)
    : client_(client), source_(source), sha_(script_sha1(source)) {}

std::vector<Reply> ScriptBatch::run(const std::vector<KeyCall>& calls) {
  std::vector<Reply> replies(calls.size());
  std::vector<std::size_t> pending(calls.size());
  for (std::size_t i = 0; i < calls.size(); ++i) pending[i] = i;
  // EVALSHA first. A NOSCRIPT reply means that call did not run, so it is sent again as EVAL with
  // the source, which also caches the script on that server.
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
      if (is_error_reply(answers[j], "NOSCRIPT")) again.push_back(pending[j]);
      replies[pending[j]] = std::move(answers[j]);
    }
    pending = std::move(again);
  }
  return replies;
}

}  // namespace lockbridge::tools::convert
