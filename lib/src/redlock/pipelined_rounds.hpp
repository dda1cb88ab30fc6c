// The event-driven front's Redlock rounds: every master's request goes out at once on the
// client's pipeline to it (redis/server_pipeline.hpp), on the program's loop, and the round ends
// when each master answered or failed; a master that does not answer within the command timeout
// fails its pipeline's requests (and the pipeline is opened anew for the next round). Nothing
// blocks and no thread waits.
#pragma once

#include <memory>
#include <vector>

#include "redis/server_pipeline.hpp"
#include "redlock/quorum.hpp"

namespace lockbridge::detail {

class PipelinedRounds final : public QuorumRounds {
 public:
  // One pipeline per master, in URL order. Call on the loop.
  explicit PipelinedRounds(std::vector<std::shared_ptr<ServerPipeline>> masters) noexcept
      : masters_(std::move(masters)) {}
  int size() const noexcept override { return static_cast<int>(masters_.size()); }
  Task<std::vector<QuorumAnswer>> round(std::span<const std::vector<std::string_view>> commands,
                                        std::vector<std::size_t> which, Clock::time_point deadline) override;

 private:
  // One master's part of a round: the pipeline opened (ServerPipeline::open), the commands sent
  // and their replies awaited.
  Task<QuorumAnswer> ask(std::size_t master, std::span<const std::vector<std::string_view>> commands);

  std::vector<std::shared_ptr<ServerPipeline>> masters_;
};

}  // namespace lockbridge::detail
