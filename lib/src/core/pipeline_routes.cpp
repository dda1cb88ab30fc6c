#include "core/pipeline_routes.hpp"

#include <utility>

#include "redis/pipeline_link.hpp"
#include "util/background_thread.hpp"

namespace lockbridge::detail {

class PipelineRoutes::Wait {
 public:
  explicit Wait(std::shared_ptr<Waiter> waiter) noexcept : waiter_(std::move(waiter)) {}
  ~Wait() {
    // Destroyed unresumed: the operation was cancelled. Its deadline need not fire.
    waiter_->gone = true;
    waiter_->timer.reset();
  }
  Wait(const Wait&) = delete;
  Wait& operator=(const Wait&) = delete;
  bool await_ready() const noexcept { return waiter_->opened.has_value(); }
  void await_suspend(std::coroutine_handle<> waiting) noexcept { waiter_->waiting = waiting; }
  std::shared_ptr<Pipeline> await_resume() {
    if (auto* error = std::get_if<Error>(&*waiter_->opened)) throw *error;
    return std::get<std::shared_ptr<Pipeline>>(*waiter_->opened);
  }

 private:
  std::shared_ptr<Waiter> waiter_;
};

std::shared_ptr<PipelineRoutes> PipelineRoutes::make(std::shared_ptr<ClientState> state,
                                                     std::shared_ptr<EventLoop> loop) {
  if (state->cluster || state->redlock()) {
    throw Error(Errc::bad_option, "the event-driven front does not serve " +
                                      std::string(state->cluster ? "Redis Cluster" : "Redlock") +
                                      " URLs yet: use redis://, rediss://, unix:// or redis-sentinel://");
  }
  return std::shared_ptr<PipelineRoutes>(new PipelineRoutes(std::move(state), std::move(loop)));
}

PipelineRoutes::PipelineRoutes(std::shared_ptr<ClientState> state, std::shared_ptr<EventLoop> loop)
    : state_(std::move(state)), loop_(std::move(loop)), backoff_(state_->endpoint->options().reconnect_backoff) {}

PipelineRoutes::~PipelineRoutes() {
  std::lock_guard lock(alive_->mutex);
  alive_->alive = false;
}

Task<void> PipelineRoutes::on_link(std::string_view /*key: one server serves them all*/, const Operation& operation,
                                   Clock::time_point deadline) {
  const std::shared_ptr<Pipeline> pipeline = co_await open(deadline);
  PipelineLink link(pipeline, state_->endpoint->options().command_timeout);
  co_await operation(link);
}

Task<std::shared_ptr<Pipeline>> PipelineRoutes::open(Clock::time_point deadline) {
  if (pipeline_) {
    if (pipeline_->usable()) co_return pipeline_;
    pipeline_.reset();  // closed (usable() closes one the server closed); its on_closed comes later, on the loop
  }
  if (!connecting_ && backoff_.active()) throw backoff_.refusal();
  auto waiter = std::make_shared<Waiter>();
  waiters_.push_back(waiter);
  if (!connecting_) start_connect();
  // As the pool waits for a connection: until the caller's deadline, or one command timeout for a
  // single try whose deadline has passed. The connect goes on after a waiter gives up.
  const auto now = Clock::now();
  const auto until = deadline > now ? deadline : now + state_->endpoint->options().command_timeout;
  if (until != Clock::time_point::max()) {
    waiter->timer = loop_->timer();
    waiter->timer->expire_at(until, [weak = std::weak_ptr<Waiter>(waiter), where = state_->url.redacted()] {
      if (const auto waiting = weak.lock())
        tell(waiting, Error(Errc::timeout, "connect to " + where + ": not connected by the caller's deadline"));
    });
  }
  Wait wait(waiter);
  co_return co_await wait;
}

void PipelineRoutes::start_connect() {
  connecting_ = true;
  // The thread keeps the Client's state (its endpoint) alive, and reaches these routes only
  // through the loop, weakly. It holds no reference to the loop: the routes do, and it posts only
  // under `alive`'s lock while they exist (a last reference dropped on this thread could destroy
  // the loop's strand after the program's io_context).
  start_background_thread("lockbridge-conn", [state = state_, alive = alive_, loop = loop_.get(),
                                              weak = weak_from_this()] {
    auto connection = std::make_shared<std::unique_ptr<Connection>>();
    std::optional<Error> failure;
    try {
      state->endpoint->refresh_if_stale();  // with Sentinel: has the master moved?
      *connection = state->endpoint->connect();
    } catch (const Error& error) {
      failure = error;
    } catch (const std::exception& error) {
      failure = Error(Errc::io, "connect to " + state->url.redacted() + ": " + error.what());
    }
    std::lock_guard lock(alive->mutex);
    if (!alive->alive) return;
    loop->post([weak, connection, failure] {
      if (const auto self = weak.lock()) self->connected(std::move(*connection), failure);
    });
  }).detach();
}

void PipelineRoutes::connected(std::unique_ptr<Connection> connection, std::optional<Error> failure) {
  connecting_ = false;
  std::vector<std::shared_ptr<Waiter>> waiting = std::exchange(waiters_, {});
  if (failure) {
    backoff_.failed(*failure);
    for (const auto& waiter : waiting) tell(waiter, *failure);
    return;
  }
  backoff_.succeeded();
  pipeline_ = Pipeline::start(*loop_, std::move(connection));
  pipeline_->on_closed([weak = weak_from_this(), closed = std::weak_ptr<Pipeline>(pipeline_)](const Error&) {
    const auto self = weak.lock();
    const auto pipeline = closed.lock();
    if (!self || !pipeline) return;
    // With Sentinel, a broken connection makes the next connect ask whether the master moved.
    self->state_->endpoint->connection_broke(pipeline->connection());
    if (self->pipeline_ == pipeline) self->pipeline_.reset();
  });
  for (const auto& waiter : waiting) tell(waiter, pipeline_);
}

void PipelineRoutes::tell(const std::shared_ptr<Waiter>& waiter, Opened opened) {
  if (waiter->gone || waiter->opened) return;
  waiter->opened.emplace(std::move(opened));
  waiter->timer.reset();
  if (waiter->waiting) std::exchange(waiter->waiting, {}).resume();
}

}  // namespace lockbridge::detail
