// The event-driven front's routes: every operation of every lock of one async client goes on one
// pipelined connection to the server (or to the master the sentinels name), on the program's
// loop. The connection is opened off the loop, because a connect, a TLS handshake, AUTH and SELECT
// block: on a short-lived thread of its own, which posts the result back. Operations that need the
// connection meanwhile wait for it, each until its own deadline. A connection that ends (a reset,
// a request past its deadline) is dropped, and the next operation opens another; after a failed
// connect, the reconnect backoff makes further operations fail fast, as the pool does.
//
// Redis Cluster and Redlock are not served yet: make() refuses them (Error{bad_option}).
#pragma once

#include <coroutine>
#include <memory>
#include <mutex>
#include <optional>
#include <variant>
#include <vector>

#include "core/routes.hpp"
#include "lockbridge/event_loop.hpp"
#include "redis/pipeline.hpp"
#include "redis/reconnect_backoff.hpp"

namespace lockbridge::detail {

class PipelineRoutes final : public Routes, public std::enable_shared_from_this<PipelineRoutes> {
 public:
  // Call on the loop. Nothing connects yet.
  static std::shared_ptr<PipelineRoutes> make(std::shared_ptr<ClientState> state, std::shared_ptr<EventLoop> loop);
  ~PipelineRoutes() override;
  PipelineRoutes(const PipelineRoutes&) = delete;
  PipelineRoutes& operator=(const PipelineRoutes&) = delete;

  // On the loop. Waits for the connection (until `deadline`, or one command timeout for a single
  // try whose deadline has passed), then runs `operation` on a PipelineLink.
  Task<void> on_link(std::string_view key, const Operation& operation, Clock::time_point deadline) override;

  EventLoop& loop() const noexcept { return *loop_; }
  const ClientState& state() const noexcept { return *state_; }

 private:
  PipelineRoutes(std::shared_ptr<ClientState> state, std::shared_ptr<EventLoop> loop);

  using Opened = std::variant<std::shared_ptr<Pipeline>, Error>;
  // One operation waiting for the connection. Shared with the loop's callbacks: an operation
  // that is cancelled (its coroutine destroyed) marks it gone, and nothing resumes it then.
  struct Waiter {
    std::optional<Opened> opened;
    std::coroutine_handle<> waiting{};
    std::unique_ptr<EventLoop::Timer> timer;  // its deadline
    bool gone = false;
  };
  class Wait;  // the awaiter

  // The open pipeline, or one opened for the caller by `deadline`. Throws Error.
  Task<std::shared_ptr<Pipeline>> open(Clock::time_point deadline);
  void start_connect();
  // On the loop, with the connect's outcome.
  void connected(std::unique_ptr<Connection> connection, std::optional<Error> failure);
  static void tell(const std::shared_ptr<Waiter>& waiter, Opened opened);

  // Whether the routes still exist, for the connecting thread: it posts its outcome to the loop
  // only under this lock and only while they do, so it never posts to a loop they outlived.
  struct Alive {
    std::mutex mutex;
    bool alive = true;
  };

  const std::shared_ptr<ClientState> state_;
  const std::shared_ptr<EventLoop> loop_;
  const std::shared_ptr<Alive> alive_ = std::make_shared<Alive>();
  std::shared_ptr<Pipeline> pipeline_;  // null, or open
  bool connecting_ = false;
  ReconnectBackoff backoff_;
  std::vector<std::shared_ptr<Waiter>> waiters_;
};

}  // namespace lockbridge::detail
