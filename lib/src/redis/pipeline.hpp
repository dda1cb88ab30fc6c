// One connection driven by readiness events on the program's loop (lockbridge/event_loop.hpp):
// requests are written as they come, many in flight at once, and Redis answers them in the order
// they were written, which is the order their replies are handed back in. Nothing waits: a
// request is queued for the socket, and its outcome comes later, on the loop.
//
// What can go wrong is settled here once, for every caller:
// - A reply always goes to its own request. A request whose caller gave up (forget) keeps its
//   place: its reply is read and dropped in its turn, never handed to the next request (the
//   mistake behind redis-py's CVE-2023-28858).
// - Every request has a deadline. When one passes before its reply came, the server is not
//   answering (down, stalled, or a network that drops packets): the connection is closed, and every
//   request in flight fails with a timeout whose outcome is unknown. Nothing waits forever for a
//   server that is gone.
// - A connection reset, a malformed reply or a server that became a replica fails every request in
//   flight the same way (the replies read before it go to their requests first); the owner learns
//   of it once (on_closed) and connects anew for what comes next.
// - An idle pipeline (no request in flight) leaves nothing pending on the loop, so a program's
//   io_context.run() returns once its own work is done. A server that closed an idle connection
//   is found before the next request is sent (usable()), as the pool finds it before a borrow.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "lockbridge/error.hpp"
#include "lockbridge/event_loop.hpp"
#include "redis/connection.hpp"

namespace lockbridge::detail {

class Pipeline : public std::enable_shared_from_this<Pipeline> {
 public:
  using Clock = std::chrono::steady_clock;
  // A request's replies, one per command, in order (error replies included), or the failure that
  // ended it.
  using Outcome = std::variant<std::vector<ReplyPtr>, Error>;
  using Done = std::function<void(Outcome)>;
  using Ticket = std::uint64_t;

  // Drives `connection` (connected) by `loop`'s events from now on. Call on the loop; the loop
  // must outlive the pipeline.
  static std::shared_ptr<Pipeline> start(EventLoop& loop, std::unique_ptr<Connection> connection);
  ~Pipeline();  // closes the connection; the requests in flight are dropped untold (close() tells them)
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  // Writes `commands` as one request (one round trip). `done` is called once, on the loop and never
  // inside this call: with the replies, or with the failure (io, timeout, protocol; the outcome
  // is unknown once a request was written) when the connection ends first or `deadline` passes.
  // The commands are formatted before this returns: the views need not outlive the call.
  Ticket submit(std::span<const std::vector<std::string_view>> commands, Clock::time_point deadline, Done done);
  Ticket submit(const std::vector<std::vector<std::string>>& commands, Clock::time_point deadline, Done done);
  // The caller no longer wants the outcome of `ticket`: its `done` is dropped, never called. The
  // request itself still runs if it was written, and its reply is read and discarded in its turn.
  void forget(Ticket ticket) noexcept;

  // Fails every request in flight with `why`, closes the connection and tells on_closed. Later
  // submits fail at once (posted). Harmless when closed already.
  void close(const Error& why);
  bool closed() const noexcept { return closed_; }
  // Whether requests may be sent: not closed, and, when idle, not closed by the server (one poll,
  // no wait; over TLS, records without data are read). Closes it (on_closed) when it was.
  bool usable();
  std::size_t in_flight() const noexcept { return requests_.size(); }
  // The connection driven (for the Endpoint's bookkeeping of broken connections).
  const Connection& connection() const noexcept { return *connection_; }
  // Told once, on the loop, when the connection ends for any reason.
  void on_closed(std::function<void(const Error&)> handler) { on_closed_ = std::move(handler); }

 private:
  Pipeline(EventLoop& loop, std::unique_ptr<Connection> connection);

  struct Request {
    std::size_t replies_due = 0;
    std::vector<ReplyPtr> replies;
    Done done;  // empty once forgotten
    std::multiset<Clock::time_point>::iterator deadline;
  };

  void arm_read();
  void arm_write();
  void arm_timer();
  void readable();
  void writable();
  void deadline_passed();
  // Each reply to the oldest request still waiting for one; whole requests are told.
  void hand_out(std::vector<ReplyPtr> replies);
  // Posts `outcome` to `done` (on the loop, after the caller's call returns).
  void tell_later(Done done, Outcome outcome);

  EventLoop& loop_;
  std::unique_ptr<Connection> connection_;
  std::unique_ptr<EventLoop::Descriptor> descriptor_;  // after connection_: stops watching first
  std::unique_ptr<EventLoop::Timer> timer_;
  std::deque<Request> requests_;  // in the order written, which is the order of the replies
  Ticket first_ticket_ = 0;       // the ticket of requests_.front()
  std::multiset<Clock::time_point> deadlines_;
  Clock::time_point timer_at_ = Clock::time_point::max();  // the armed expiry; max(): none
  bool write_armed_ = false;
  bool read_armed_ = false;  // while requests are in flight
  bool closed_ = false;
  std::string closed_why_;  // the failure that closed it, for later submits
  std::function<void(const Error&)> on_closed_;
};

}  // namespace lockbridge::detail
