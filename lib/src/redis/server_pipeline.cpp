#include "redis/server_pipeline.hpp"

#include <system_error>
#include <utility>

#include "redis/pipeline_link.hpp"

namespace lockbridge::detail {

std::shared_ptr<ServerPipeline> ServerPipeline::make(std::shared_ptr<Endpoint> endpoint,
                                                     std::shared_ptr<EventLoop> loop,
                                                     std::shared_ptr<const void> owner) {
  return std::shared_ptr<ServerPipeline>(new ServerPipeline(std::move(endpoint), std::move(loop), std::move(owner)));
}

ServerPipeline::ServerPipeline(std::shared_ptr<Endpoint> endpoint, std::shared_ptr<EventLoop> loop,
                               std::shared_ptr<const void> owner)
    : endpoint_(std::move(endpoint)),
      loop_(std::move(loop)),
      owner_(std::move(owner)),
      backoff_(endpoint_->options().reconnect_backoff),
      lane_(*loop_),
      off_loop_(*loop_) {}

Task<std::shared_ptr<Pipeline>> ServerPipeline::open() {
  if (pipeline_) {
    if (pipeline_->usable()) co_return pipeline_;
    pipeline_.reset();  // closed (usable() closes one the server closed); its on_closed comes later, on the loop
  }
  if (!connecting_ && backoff_.active()) throw backoff_.refusal();
  if (!connecting_) {
    try {
      start_connect();
    } catch (const std::system_error& error) {  // no thread to connect on (a thread limit)
      throw Error(Errc::io, "connect to " + endpoint_->url().redacted() + ": " + error.what());
    }
  }
  co_return co_await opened_.wait();
}

Task<std::unique_ptr<Link>> ServerPipeline::exclusive_link() {
  LoopLane::Pass turn = co_await lane_.enter();
  if (!transactions_) transactions_ = make(endpoint_, loop_, owner_);
  const std::shared_ptr<Pipeline> pipeline = co_await transactions_->open();
  co_return std::make_unique<PipelineLink>(pipeline, command_timeout(), nullptr, std::move(turn));
}

void ServerPipeline::start_connect() {
  // The thread keeps the endpoint and its owner alive (the endpoint counts requests into the
  // Client's state), and reaches this object only through the loop, weakly.
  off_loop_.run("lockbridge-conn", [endpoint = endpoint_, owner = owner_,
                                    weak = weak_from_this()]() -> std::function<void()> {
    (void)owner;  // kept alive, not used
    auto connection = std::make_shared<std::unique_ptr<Connection>>();
    std::optional<Error> failure;
    try {
      endpoint->refresh_if_stale();  // with Sentinel: has the master moved?
      *connection = endpoint->connect();
    } catch (const Error& error) {
      failure = error;
    } catch (const std::exception& error) {
      failure = Error(Errc::io, "connect to " + endpoint->url().redacted() + ": " + error.what());
    }
    return [weak, connection, failure] {
      if (const auto self = weak.lock()) self->connected(std::move(*connection), failure);
    };
  });
  connecting_ = true;  // once the thread runs: a thread that could not start leaves no connect pending
}

void ServerPipeline::connected(std::unique_ptr<Connection> connection, std::optional<Error> failure) {
  connecting_ = false;
  if (failure) {
    backoff_.failed(*failure);
    opened_.tell(*failure);
    return;
  }
  backoff_.succeeded();
  try {
    pipeline_ = Pipeline::start(*loop_, std::move(connection));
  } catch (const std::exception& error) {  // the loop would not watch the socket: every waiter is told
    opened_.tell(Error(Errc::io, "connect to " + endpoint_->url().redacted() + ": " + error.what()));
    return;
  }
  pipeline_->on_closed([weak = weak_from_this(), closed = std::weak_ptr<Pipeline>(pipeline_)](const Error&) {
    const auto self = weak.lock();
    const auto pipeline = closed.lock();
    if (!self || !pipeline) return;
    // With Sentinel, a broken connection makes the next connect ask whether the master moved.
    self->endpoint_->connection_broke(pipeline->connection());
    if (self->pipeline_ == pipeline) self->pipeline_.reset();
  });
  opened_.tell(pipeline_);
}

}  // namespace lockbridge::detail
