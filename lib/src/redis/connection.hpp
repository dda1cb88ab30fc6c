// One connection to a Redis server: connect (TLS when asked, then AUTH and SELECT), binary-safe
// commands and pipelines in RESP (hiredis formats the commands and parses the replies; transport/
// moves the bytes), and the mapping of failures onto lockbridge::Error. After any transport or
// protocol failure the connection is marked broken and must be dropped; the pool makes a new one
// on next use.
#pragma once

#include <hiredis/hiredis.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lockbridge/client.hpp"
#include "lockbridge/error.hpp"
#include "lockbridge/url.hpp"
#include "redis/reply.hpp"
#include "transport/transport.hpp"

namespace lockbridge::detail {

struct ReaderDeleter {
  void operator()(redisReader* reader) const noexcept { redisReaderFree(reader); }
};
using ReaderPtr = std::unique_ptr<redisReader, ReaderDeleter>;

using Args = std::span<const std::string_view>;

// Lets the caller of one operation take part in each of its commands, without Connection knowing
// why: Redis Cluster's routing (cluster/redirect_watch.hpp) sends ASKING before each command after
// an ASK redirect, and notes the MOVED, ASK and TRYAGAIN errors that replies carry.
class CommandHook {
 public:
  // A one-word command to send before each command of run() and pipeline() (its reply is read and
  // dropped: an error it carries is repeated by the command's own reply), or empty for none.
  virtual std::string_view preamble() const noexcept = 0;
  // Every error reply read, by its text (without the leading '-'), before it is returned or thrown.
  virtual void on_error_reply(std::string_view text) = 0;

 protected:
  ~CommandHook() = default;
};

class Connection {
 public:
  // Connects (and shakes hands over TLS) within options.connect_timeout, then authenticates and
  // selects the database. Every request written (a pipeline counts once) adds one to `round_trips`,
  // which must outlive the connection. Throws Error: io, timeout, tls, server_reply (e.g. a refused
  // AUTH).
  Connection(const RedisUrl& url, const ClientOptions& options, std::atomic<std::uint64_t>& round_trips);
  // Not copied or moved: its reader points at it (oversized_reply_).
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // One command, one round trip. Error replies are returned, not thrown (see throw_if_error);
  // a transport failure throws io or timeout and breaks the connection.
  ReplyPtr run(Args args);
  ReplyPtr run(std::initializer_list<std::string_view> args) { return run(Args(args.begin(), args.size())); }
  // A command the server itself holds for up to `server_wait` before it answers (WAIT): its reply
  // is waited for that long on top of the command timeout.
  ReplyPtr run_held(Args args, std::chrono::milliseconds server_wait);
  ReplyPtr run_held(std::initializer_list<std::string_view> args, std::chrono::milliseconds server_wait) {
    return run_held(Args(args.begin(), args.size()), server_wait);
  }

  // Several commands in one round trip; replies in order.
  std::vector<ReplyPtr> pipeline(std::span<const std::vector<std::string_view>> commands);

  bool broken() const noexcept { return broken_; }
  // The server, as messages name it (the URL without its password).
  const std::string& where() const noexcept { return where_; }
  // For an idle connection (no reply due): whether the socket is readable or hung up, which means
  // the server closed it (a restart, a failover, its idle timeout) or sent what nobody asked for.
  // Either way it is unusable. One poll(2) with no wait; no I/O with the server.
  // Over TLS, records without data (session tickets) are read and do not count.
  bool closed_by_peer() noexcept;

  // The Endpoint address generation this connection was made for (endpoint.hpp).
  std::uint64_t generation() const noexcept { return generation_; }
  void set_generation(std::uint64_t generation) noexcept { generation_ = generation; }

  // For a connection in subscribe mode, driven by poll(2) on fd(): send() writes a command without
  // waiting for its reply; read_available() reads all the socket has (call it when poll says
  // readable; it never waits) and returns every complete reply and message. Both throw io and break the connection
  // when the server is gone.
  int fd() const noexcept { return transport_.fd(); }
  void send(Args args);
  void send(std::initializer_list<std::string_view> args) { send(Args(args.begin(), args.size())); }
  // Several commands written at once (one round trip), their replies left for receive().
  void send_pipeline(std::span<const std::vector<std::string_view>> commands);
  // The hook that takes part in every command from now on (null: none). Not owned: it must stay
  // alive until it is replaced or the connection is gone.
  void set_hook(CommandHook* hook) noexcept { hook_ = hook; }

  // Driven by readiness events (redis/pipeline.hpp): from now on nothing on it waits. Call once,
  // before the first send_now().
  void drive_by_events() { transport_.drive_by_events(); }
  // Formats `commands` as one request (one round trip) and writes what the socket takes now; true
  // when all of it, and all sent before, went out (false: send_pending() once writable). Throws
  // io and breaks the connection when the server is gone.
  bool send_now(std::span<const std::vector<std::string_view>> commands);
  bool send_pending();
  // Every reply whose bytes have arrived, in order, reading until the socket has no more. Throws
  // like a blocking read (io, protocol; READONLY and CLUSTERDOWN break the connection, as in run()),
  // but only once the replies read before the failure were returned: the next call throws it.
  std::vector<ReplyPtr> receive_now();

  // A request sent on it will not be waited for: the connection must not be reused.
  void discard() noexcept { broken_ = true; }
  // From now on no write or read waits past `cap`, whatever the command timeout leaves: one that
  // would is a timeout (outcome unknown, the connection broken), as at the command timeout. For an
  // operation bound to end by a moment of its own (the watchdog's renewals: a lease's end). max():
  // no cap. WaitCap sets it for a scope.
  void cap_waits(Deadline cap) noexcept { cap_ = cap; }
  std::vector<ReplyPtr> read_available();
  // The next reply to a send(), waiting up to the command timeout: with send(), one request on
  // each of several connections can be in flight at once (Redlock's masters).
  ReplyPtr receive();

 private:
  void append(Args args);
  void flush();  // writes what append() buffered: one request
  void append_preamble();
  void skip_preamble_reply();
  ReplyPtr read_reply(std::chrono::milliseconds timeout);
  ReplyPtr read_reply() { return read_reply(command_timeout_); }
  // The next reply the reader has whole, or null. A malformed reply breaks the connection.
  ReplyPtr next_parsed();
  ReplyPtr checked(ReplyPtr reply);
  [[noreturn]] void fail(std::string_view doing, const TransportError& error, bool outcome_unknown);
  void require_usable() const;
  Deadline wait_deadline(std::chrono::milliseconds timeout) const;

  std::string where_;  // the redacted URL, for messages
  Transport transport_;
  ReaderPtr reader_;
  std::string pending_;  // commands appended, not yet written
  std::chrono::milliseconds command_timeout_;
  Deadline cap_ = Deadline::max();  // cap_waits()
  bool oversized_reply_ = false;    // the reader refused an array too large (connection.cpp)
  bool replied_ = false;            // whether the server ever answered: a plain port that hangs up at once may want TLS
  bool broken_ = false;
  std::exception_ptr held_failure_;  // receive_now(): thrown by the next call
  CommandHook* hook_ = nullptr;
  std::uint64_t generation_ = 0;
  std::atomic<std::uint64_t>* round_trips_;
};

// Caps a connection's waits (Connection::cap_waits) for the scope it lives in.
class WaitCap {
 public:
  WaitCap(Connection& connection, Deadline cap) noexcept : connection_(connection) { connection_.cap_waits(cap); }
  ~WaitCap() { connection_.cap_waits(Deadline::max()); }
  WaitCap(const WaitCap&) = delete;
  WaitCap& operator=(const WaitCap&) = delete;

 private:
  Connection& connection_;
};

}  // namespace lockbridge::detail
