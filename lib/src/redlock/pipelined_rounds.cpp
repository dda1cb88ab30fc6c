#include "redlock/pipelined_rounds.hpp"

#include <numeric>

#include "redis/pipeline_link.hpp"

namespace lockbridge::detail {

Task<std::vector<QuorumAnswer>> PipelinedRounds::round(std::span<const std::vector<std::string_view>> commands,
                                                       std::vector<std::size_t> which,
                                                       Clock::time_point /*deadline: a connect ends within its own timeouts*/) {
  if (which.empty()) {
    which.resize(masters_.size());
    std::iota(which.begin(), which.end(), std::size_t{0});
  }
  // Tasks are eager: each master's request is under way before the first answer is awaited, so
  // the round costs the slowest master's round trip.
  std::vector<Task<QuorumAnswer>> asked;
  asked.reserve(which.size());
  for (const std::size_t master : which) asked.push_back(ask(master, commands));
  std::vector<QuorumAnswer> answers(masters_.size());
  for (std::size_t i = 0; i < which.size(); ++i) answers[which[i]] = co_await std::move(asked[i]);
  co_return answers;
}

Task<QuorumAnswer> PipelinedRounds::ask(std::size_t master, std::span<const std::vector<std::string_view>> commands) {
  QuorumAnswer answer;
  ServerPipeline& server = *masters_[master];
  try {
    const std::shared_ptr<Pipeline> pipeline = co_await server.open();
    PipelineLink link(pipeline, server.command_timeout());
    answer.replies = co_await link.pipeline(commands);
  } catch (const Error& error) {
    answer.failure = message_of(error);
  }
  co_return answer;
}

}  // namespace lockbridge::detail
