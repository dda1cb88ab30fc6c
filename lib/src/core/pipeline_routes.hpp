// The event-driven front's routes: every operation of every lock of one async client goes, on the
// program's loop, on one pipelined connection to the server that holds its key (redis/
// server_pipeline.hpp): the server of the URL, the master the sentinels name, or on Redis Cluster
// the master serving the key's slot, with the redirects followed as the blocking front follows
// them (cluster/redirect_loop.hpp). The cluster's slot map is read off the loop when it is due, once
// for every operation that needs it meanwhile. With Redlock, a pipeline to each master carries the
// quorum's rounds (redlock/pipelined_rounds.hpp).
#pragma once

#include <map>
#include <memory>

#include "cluster/node_address.hpp"
#include "core/routes.hpp"
#include "lockbridge/event_loop.hpp"
#include "redis/server_pipeline.hpp"
#include "redlock/quorum.hpp"
#include "util/off_loop.hpp"
#include "util/shared_outcome.hpp"

namespace lockbridge::detail {

class PipelineRoutes final : public Routes, public std::enable_shared_from_this<PipelineRoutes> {
 public:
  // Call on the loop. Nothing connects yet.
  static std::shared_ptr<PipelineRoutes> make(std::shared_ptr<ClientState> state, std::shared_ptr<EventLoop> loop);
  PipelineRoutes(const PipelineRoutes&) = delete;
  PipelineRoutes& operator=(const PipelineRoutes&) = delete;

  // On the loop. Waits for the connection (ServerPipeline::open), then runs `operation` on a
  // PipelineLink; on Redis Cluster, follows the redirects, no TRYAGAIN wait past `deadline`.
  Task<void> on_link(std::string_view key, const Operation& operation, Clock::time_point deadline) override;

  const std::shared_ptr<EventLoop>& loop() const noexcept { return loop_; }

  // Redis Cluster only: the pipeline to `node`, made on first use; the master serving `slot`,
  // the map read off the loop first when due (the read ends within its own timeouts).
  ServerPipeline& pipeline_to(const NodeAddress& node);
  Task<NodeAddress> master_of(std::uint16_t slot);

  // Redlock only: the rounds every lock of the client sends to the masters; null otherwise.
  const std::shared_ptr<QuorumRounds>& quorum_rounds() const noexcept { return quorum_rounds_; }

 private:
  PipelineRoutes(std::shared_ptr<ClientState> state, std::shared_ptr<EventLoop> loop);
  void read_map();  // starts a read of the slot map off the loop, unless one runs

  const std::shared_ptr<ClientState> state_;
  const std::shared_ptr<EventLoop> loop_;
  std::shared_ptr<ServerPipeline> server_;                         // not on Redis Cluster
  std::map<NodeAddress, std::shared_ptr<ServerPipeline>> masters_;  // on Redis Cluster
  std::shared_ptr<QuorumRounds> quorum_rounds_;                     // with Redlock
  bool reading_map_ = false;
  SharedOutcome<bool> map_read_;  // whether the read found the map (false: the map we had stays)
  OffLoop off_loop_;              // last: a read's outcome is posted only while everything above exists
};

}  // namespace lockbridge::detail
