// The event-driven front's Link: each request goes out on a Pipeline at once (formatted before the
// call returns), and the coroutine that awaits it is resumed on the program's loop when its replies
// come, or its failure. A request whose awaiting coroutine is destroyed first (its operation was
// cancelled) is forgotten: it keeps its place on the connection, and its reply is dropped.
#pragma once

#include <chrono>
#include <coroutine>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "redis/link.hpp"
#include "redis/pipeline.hpp"
#include "util/loop_lane.hpp"

namespace lockbridge::detail {

class ServerPipeline;

class PipelineLink final : public Link {
 public:
  using Clock = std::chrono::steady_clock;
  // Each request's deadline is `timeout` after it is sent (ClientOptions::command_timeout).
  // `server`: where exclusive_link() finds a connection for transactions (null: nowhere). A link
  // made with a lane's `pass` is exclusive: it is that connection, and the turn ends with it.
  PipelineLink(std::shared_ptr<Pipeline> pipeline, std::chrono::milliseconds timeout, ServerPipeline* server = nullptr,
               LoopLane::Pass pass = {}, bool exclusive = false)
      : pipeline_(std::move(pipeline)),
        timeout_(timeout),
        server_(server),
        pass_(std::move(pass)),
        exclusive_(exclusive || static_cast<bool>(pass_)) {}
  // An exclusive link whose request was given up on (its operation cancelled halfway through a
  // transaction) closes its connection: a WATCH or an open MULTI left on it would otherwise catch
  // the next transaction's commands.
  ~PipelineLink() override;
  PipelineLink(const PipelineLink&) = delete;
  PipelineLink& operator=(const PipelineLink&) = delete;

  using Link::run;
  Task<ReplyPtr> run(Args args) override;
  Task<std::vector<ReplyPtr>> pipeline(std::span<const std::vector<std::string_view>> commands) override;
  Task<ReplyPtr> run_held(Args args, std::chrono::milliseconds server_wait) override;
  // Shared by every lock of the client, unless made for a transaction.
  bool exclusive() const noexcept override { return exclusive_; }
  Task<std::unique_ptr<Link>> exclusive_link() override;

 private:
  // One request in flight: submitted when made, awaited once. Neither copied nor moved: the
  // pipeline's callback points at it.
  class Request {
   public:
    // `abandoned` is set when the request is destroyed before its outcome came.
    Request(Pipeline& pipeline, std::span<const std::vector<std::string_view>> commands, Clock::time_point deadline,
            bool& abandoned);
    ~Request();
    Request(const Request&) = delete;
    Request& operator=(const Request&) = delete;

    bool await_ready() const noexcept { return state_->outcome.has_value(); }
    void await_suspend(std::coroutine_handle<> waiting) noexcept { state_->waiting = waiting; }
    // The replies, in order; throws the failure.
    std::vector<ReplyPtr> await_resume();

   private:
    // What the pipeline's callback reaches: shared, because a failure may already be posted to
    // the loop (the connection closed) when the request is destroyed; the callback then finds
    // it gone and does nothing.
    struct State {
      std::optional<Pipeline::Outcome> outcome;
      std::coroutine_handle<> waiting{};
      bool gone = false;
    };
    Pipeline& pipeline_;
    bool& abandoned_;
    Pipeline::Ticket ticket_ = 0;
    std::shared_ptr<State> state_ = std::make_shared<State>();
  };

  // One command, its reply awaited up to `wait`.
  Task<ReplyPtr> send(Args args, std::chrono::milliseconds wait);

  std::shared_ptr<Pipeline> pipeline_;
  std::chrono::milliseconds timeout_;
  ServerPipeline* server_;
  LoopLane::Pass pass_;
  bool exclusive_;
  bool abandoned_ = false;  // a request was given up on before its outcome came
};

}  // namespace lockbridge::detail
