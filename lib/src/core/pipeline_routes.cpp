#include "core/pipeline_routes.hpp"

#include <system_error>
#include <utility>

#include "cluster/key_slot.hpp"
#include "cluster/redirect_loop.hpp"
#include "redis/pipeline_link.hpp"
#include "redlock/pipelined_rounds.hpp"
#include "waiting/change_wait.hpp"

namespace lockbridge::detail {

namespace {
// The event-driven front's hops on Redis Cluster: the pipeline to each master, a loop timer
// between tries.
class PipelineHops final : public ClusterHops {
 public:
  PipelineHops(PipelineRoutes& routes, const Routes::Operation& operation) : routes_(routes), operation_(operation) {}
  Task<NodeAddress> master_of(std::uint16_t slot) override { co_return co_await routes_.master_of(slot); }
  Task<std::optional<Error>> reach(const NodeAddress& node) override {
    std::optional<Error> failure;
    server_ = &routes_.pipeline_to(node);
    try {
      pipeline_ = co_await server_->open();
    } catch (const Error& error) {
      failure = error;
    }
    co_return failure;
  }
  Task<void> run(bool asking, RedirectNote& note) override {
    PipelineLink link(pipeline_, server_->command_timeout(), server_);
    RedirectLink watched(link, asking, note);
    co_await operation_(watched);
  }
  Task<void> pause(Clock::duration pause) override {
    co_await sleep_on(routes_.loop(), pause);
  }

 private:
  PipelineRoutes& routes_;
  const Routes::Operation& operation_;
  ServerPipeline* server_ = nullptr;  // the routes keep it
  std::shared_ptr<Pipeline> pipeline_;
};
}  // namespace

std::shared_ptr<PipelineRoutes> PipelineRoutes::make(std::shared_ptr<ClientState> state,
                                                     std::shared_ptr<EventLoop> loop) {
  return std::shared_ptr<PipelineRoutes>(new PipelineRoutes(std::move(state), std::move(loop)));
}

PipelineRoutes::PipelineRoutes(std::shared_ptr<ClientState> state, std::shared_ptr<EventLoop> loop)
    : state_(std::move(state)), loop_(std::move(loop)), off_loop_(*loop_) {
  if (!state_->cluster) server_ = ServerPipeline::make(state_->endpoint, loop_, state_);
  if (state_->redlock()) {
    std::vector<std::shared_ptr<ServerPipeline>> masters;
    for (const auto& pool : state_->masters) masters.push_back(ServerPipeline::make(pool->endpoint(), loop_, state_));
    quorum_rounds_ = std::make_shared<PipelinedRounds>(std::move(masters));
  }
}

Task<void> PipelineRoutes::on_link(std::string_view key, const Operation& operation, Clock::time_point deadline) {
  if (state_->cluster) {
    PipelineHops hops(*this, operation);
    co_await follow_redirects(*state_->cluster, key_slot(key), hops, deadline);
    co_return;
  }
  // One server serves every key.
  const std::shared_ptr<Pipeline> pipeline = co_await server_->open();
  PipelineLink link(pipeline, server_->command_timeout(), server_.get());
  co_await operation(link);
}

ServerPipeline& PipelineRoutes::pipeline_to(const NodeAddress& node) {
  auto& server = masters_[node];
  if (!server) server = ServerPipeline::make(state_->cluster->endpoint_of(node), loop_, state_);
  return *server;
}

Task<NodeAddress> PipelineRoutes::master_of(std::uint16_t slot) {
  ClusterRouter& router = *state_->cluster;
  if (const auto master = router.master_if_current(slot)) co_return *master;
  if (!reading_map_) {
    try {
      read_map();
    } catch (const std::system_error& error) {  // no thread to read it on (a thread limit)
      throw Error(Errc::io, "read the slot map of " + state_->url.redacted() + ": " + error.what());
    }
  }
  std::optional<Error> failure;
  try {
    (void)co_await map_read_.wait();
  } catch (const Error& error) {
    failure = error;
  }
  // As the blocking front does: a map that could not be read again is the best guess there is
  // (a redirect corrects it); without one, the read's failure is the answer.
  if (const auto master = router.mapped_master(slot)) co_return *master;
  throw failure ? *failure : router.no_master(slot);
}

void PipelineRoutes::read_map() {
  off_loop_.run("lockbridge-map", [state = state_, weak = weak_from_this()]() -> std::function<void()> {
    std::optional<Error> failure;
    try {
      state->cluster->read_map();
    } catch (const Error& error) {
      failure = error;
    } catch (const std::exception& error) {
      failure = Error(Errc::io, "read the slot map of " + state->url.redacted() + ": " + error.what());
    }
    return [weak, failure] {
      const auto self = weak.lock();
      if (!self) return;
      self->reading_map_ = false;
      if (failure) {
        self->map_read_.tell(*failure);
      } else {
        self->map_read_.tell(true);
      }
    };
  });
  reading_map_ = true;  // once the thread runs: a thread that could not start leaves no read pending
}

}  // namespace lockbridge::detail
