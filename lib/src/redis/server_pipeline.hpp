// An event-driven client's one pipelined connection to one server (a standalone server, the
// master the sentinels name, or a master of Redis Cluster), on the program's loop. It is opened
// when first needed, off the loop (util/off_loop.hpp: a connect, a TLS handshake, AUTH and SELECT
// block); operations that need it meanwhile wait for the connect's outcome, which its own timeouts
// bound (connect_timeout, the command timeout of each setup command), as a pool's borrower waits
// for the connect it makes: what an operation may run past its caller's deadline is that connect
// and one command. A connection that ends (a reset, a request past its deadline) is dropped, and
// the next operation opens another; after a failed connect, the reconnect backoff makes further
// operations fail fast, as the pool does.
#pragma once

#include <chrono>
#include <memory>

#include "lockbridge/event_loop.hpp"
#include "redis/endpoint.hpp"
#include "redis/link.hpp"
#include "redis/pipeline.hpp"
#include "redis/reconnect_backoff.hpp"
#include "util/loop_lane.hpp"
#include "util/off_loop.hpp"
#include "util/shared_outcome.hpp"
#include "util/task.hpp"

namespace lockbridge::detail {

class ServerPipeline final : public std::enable_shared_from_this<ServerPipeline> {
 public:
  using Clock = std::chrono::steady_clock;
  // Call on the loop. Nothing connects yet. `owner` (the Client's state) is kept alive by every
  // connect under way: the endpoint counts its requests into it.
  static std::shared_ptr<ServerPipeline> make(std::shared_ptr<Endpoint> endpoint, std::shared_ptr<EventLoop> loop,
                                              std::shared_ptr<const void> owner);
  ServerPipeline(const ServerPipeline&) = delete;
  ServerPipeline& operator=(const ServerPipeline&) = delete;

  // On the loop: the open pipeline, or the one the connect under way (started now, if none is)
  // opens. Throws Error.
  Task<std::shared_ptr<Pipeline>> open();

  std::chrono::milliseconds command_timeout() const noexcept { return endpoint_->options().command_timeout; }

  // On the loop: a link to the same server over a connection of its own (opened on first use),
  // for a transaction spread over several requests, which other callers' requests must not join.
  // One transaction at a time: the others wait their turn until the returned link goes.
  Task<std::unique_ptr<Link>> exclusive_link();

 private:
  ServerPipeline(std::shared_ptr<Endpoint> endpoint, std::shared_ptr<EventLoop> loop, std::shared_ptr<const void> owner);
  void start_connect();
  // On the loop, with the connect's outcome.
  void connected(std::unique_ptr<Connection> connection, std::optional<Error> failure);

  const std::shared_ptr<Endpoint> endpoint_;
  const std::shared_ptr<EventLoop> loop_;
  const std::shared_ptr<const void> owner_;
  std::shared_ptr<Pipeline> pipeline_;  // null, or open
  bool connecting_ = false;
  ReconnectBackoff backoff_;
  SharedOutcome<std::shared_ptr<Pipeline>> opened_;
  LoopLane lane_;                                 // the turns on transactions_
  std::shared_ptr<ServerPipeline> transactions_;  // the connection for transactions, once needed
  OffLoop off_loop_;  // last: the connect's outcome is posted only while everything above exists
};

}  // namespace lockbridge::detail
