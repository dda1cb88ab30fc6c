#include "redis/pipeline_link.hpp"

#include "redis/server_pipeline.hpp"

namespace lockbridge::detail {

PipelineLink::Request::Request(Pipeline& pipeline, std::span<const std::vector<std::string_view>> commands,
                               Clock::time_point deadline, bool& abandoned)
    : pipeline_(pipeline), abandoned_(abandoned) {
  // Told on the loop, never inside submit(): the coroutine has suspended (or finds the outcome
  // in await_ready) by then.
  ticket_ = pipeline_.submit(commands, deadline, [state = state_](Pipeline::Outcome outcome) {
    if (state->gone) return;
    state->outcome.emplace(std::move(outcome));
    if (state->waiting) std::exchange(state->waiting, {}).resume();
  });
}

PipelineLink::Request::~Request() {
  // Destroyed before its outcome came: the awaiting coroutine is gone (cancelled), so the reply
  // must reach nobody; it still arrives in its turn and is dropped there.
  state_->gone = true;
  if (state_->outcome) return;
  pipeline_.forget(ticket_);
  abandoned_ = true;
}

PipelineLink::~PipelineLink() {
  if (exclusive_ && abandoned_) {
    pipeline_->close(Error(Errc::io, "a transaction was given up on halfway: its connection is closed, so that "
                                     "no WATCH or MULTI of it is left for the next one"));
  }
}

std::vector<ReplyPtr> PipelineLink::Request::await_resume() {
  if (auto* error = std::get_if<Error>(&*state_->outcome)) throw *error;
  return std::move(std::get<std::vector<ReplyPtr>>(*state_->outcome));
}

Task<ReplyPtr> PipelineLink::run(Args args) { co_return co_await send(args, timeout_); }

Task<ReplyPtr> PipelineLink::run_held(Args args, std::chrono::milliseconds server_wait) {
  co_return co_await send(args, timeout_ + server_wait);
}

Task<ReplyPtr> PipelineLink::send(Args args, std::chrono::milliseconds wait) {
  const std::vector<std::string_view> command(args.begin(), args.end());
  const std::shared_ptr<Pipeline> pipeline = pipeline_;  // outlives the request, which points at it
  Request request(*pipeline, std::span(&command, 1), Clock::now() + wait, abandoned_);
  std::vector<ReplyPtr> replies = co_await request;
  co_return std::move(replies.front());
}

Task<std::vector<ReplyPtr>> PipelineLink::pipeline(std::span<const std::vector<std::string_view>> commands) {
  const std::shared_ptr<Pipeline> pipeline = pipeline_;
  Request request(*pipeline, commands, Clock::now() + timeout_, abandoned_);
  co_return co_await request;
}

Task<std::unique_ptr<Link>> PipelineLink::exclusive_link() {
  if (exclusive_) co_return std::make_unique<PipelineLink>(pipeline_, timeout_, nullptr, LoopLane::Pass(), true);
  if (server_ == nullptr) throw Error(Errc::bad_option, "this connection offers no connection for transactions");
  co_return co_await server_->exclusive_link();
}

}  // namespace lockbridge::detail
