// How a strategy, a script or a lock target reaches its server for one call: commands in, replies
// out, awaited. The lock protocol is written once against it, as coroutines (util/task.hpp): the
// blocking front's link (BlockingLink) runs each request on a Connection in place, so the
// coroutines never suspend; an event-driven front's link pipelines them on the program's loop.
//
// Commands are views: a link formats them before its call returns (the blocking link while it
// runs them, an event-driven one as it queues them), so what they point to need only live until
// then, never across the wait for the reply.
#pragma once

#include <array>
#include <chrono>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "redis/connection.hpp"
#include "redis/reply.hpp"
#include "util/task.hpp"

namespace lockbridge::detail {

class Link {
 public:
  virtual ~Link() = default;
  // One command, one round trip. Error replies are returned, not thrown; a transport failure
  // throws Error (io, timeout, protocol: the outcome is unknown once the command was written).
  virtual Task<ReplyPtr> run(Args args) = 0;
  // run() of a command given as its parts: command("GET", key). (Not a braced list: GCC 12 cannot
  // keep an initializer_list's array across a co_await.) The parts are formatted before this
  // returns, so they need not outlive the call.
  template <class... Parts>
  Task<ReplyPtr> command(const Parts&... parts) {
    const std::array<std::string_view, sizeof...(Parts)> args{std::string_view(parts)...};
    return run(Args(args));
  }
  // Several commands in one round trip; replies in order, error replies returned.
  virtual Task<std::vector<ReplyPtr>> pipeline(std::span<const std::vector<std::string_view>> commands) = 0;
  // A command the server itself holds for up to `server_wait` before it answers (WAIT): its reply
  // is waited for that long on top of the command timeout. On a shared pipeline it holds back the
  // requests behind it as long.
  virtual Task<ReplyPtr> run_held(Args args, std::chrono::milliseconds server_wait) = 0;
  // Whether no other caller's requests share the connection while this link is used: a
  // transaction spread over several requests (WATCH ... MULTI ... EXEC) needs it, or their
  // commands would join it.
  virtual bool exclusive() const noexcept = 0;
  // A link that is exclusive, to the same server: over the same connection when this link is
  // exclusive (then it must not outlive this one), else over a connection of its own that other
  // callers' transactions wait for while the returned link exists. Throws Error.
  virtual Task<std::unique_ptr<Link>> exclusive_link() = 0;
};

// The blocking front's link: a Connection (pooled, borrowed for the call), each request run in place.
class BlockingLink final : public Link {
 public:
  explicit BlockingLink(Connection& connection) noexcept : connection_(connection) {}
  using Link::run;
  Task<ReplyPtr> run(Args args) override { co_return connection_.run(args); }
  Task<std::vector<ReplyPtr>> pipeline(std::span<const std::vector<std::string_view>> commands) override {
    co_return connection_.pipeline(commands);
  }
  Task<ReplyPtr> run_held(Args args, std::chrono::milliseconds server_wait) override {
    co_return connection_.run_held(args, server_wait);
  }
  bool exclusive() const noexcept override { return true; }  // borrowed for the call
  Task<std::unique_ptr<Link>> exclusive_link() override { co_return std::make_unique<BlockingLink>(connection_); }

 private:
  Connection& connection_;
};

}  // namespace lockbridge::detail
