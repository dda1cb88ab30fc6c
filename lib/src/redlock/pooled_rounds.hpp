// The blocking front's Redlock rounds: a connection borrowed from each master's pool, every
// master's request written before any reply is read, and the replies read together with poll(2),
// up to the command timeout. The round runs in place: its task never suspends.
#pragma once

#include <memory>
#include <span>

#include "redis/connection_pool.hpp"
#include "redlock/quorum.hpp"

namespace lockbridge::detail {

class PooledRounds final : public QuorumRounds {
 public:
  // `masters` (the Client's, in URL order) must outlive this object.
  explicit PooledRounds(std::span<const std::unique_ptr<ConnectionPool>> masters) noexcept : masters_(masters) {}
  int size() const noexcept override { return static_cast<int>(masters_.size()); }
  Task<std::vector<QuorumAnswer>> round(std::span<const std::vector<std::string_view>> commands,
                                        std::vector<std::size_t> which, Clock::time_point deadline) override;

 private:
  std::span<const std::unique_ptr<ConnectionPool>> masters_;
};

}  // namespace lockbridge::detail
