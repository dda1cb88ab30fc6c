// One hiredis connection: connect (with AUTH and SELECT), binary-safe commands, pipelines, and the
// mapping of hiredis failures onto lockbridge::Error. After any context error the connection is
// marked broken and must be dropped; the pool makes a new one on next use.
#pragma once

#include <hiredis/hiredis.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cluster/redirect.hpp"
#include "lockbridge/client.hpp"
#include "lockbridge/error.hpp"
#include "lockbridge/url.hpp"

namespace lockbridge::detail {

struct ContextDeleter {
  void operator()(redisContext* context) const noexcept { redisFree(context); }
};
struct ReplyDeleter {
  void operator()(redisReply* reply) const noexcept { freeReplyObject(reply); }
};
using ContextPtr = std::unique_ptr<redisContext, ContextDeleter>;
using ReplyPtr = std::unique_ptr<redisReply, ReplyDeleter>;

using Args = std::span<const std::string_view>;

class Connection {
 public:
  // Connects within options.connect_timeout, authenticates and selects the database. Every request
  // written (a pipeline counts once) adds one to `round_trips`, which must outlive the connection.
  // Throws Error: io, timeout, server_reply (e.g. a refused AUTH).
  Connection(const RedisUrl& url, const ClientOptions& options, std::atomic<std::uint64_t>& round_trips);

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
  // For an idle connection (no reply due): whether the socket is readable or hung up, which means
  // the server closed it (a restart, a failover, its idle timeout) or sent what nobody asked for.
  // Either way it is unusable. One poll(2) with no wait; no I/O with the server.
  bool closed_by_peer() const noexcept;

  // The Endpoint address generation this connection was made for (endpoint.hpp).
  std::uint64_t generation() const noexcept { return generation_; }
  void set_generation(std::uint64_t generation) noexcept { generation_ = generation; }

  // For a connection in subscribe mode, driven by poll(2) on fd(): send() writes a command without
  // waiting for its reply; read_available() reads what the socket has (call it when poll says
  // readable) and returns every complete reply and message. Both throw io and break the connection
  // when the server is gone.
  int fd() const noexcept { return context_->fd; }
  void send(Args args);
  void send(std::initializer_list<std::string_view> args) { send(Args(args.begin(), args.size())); }
  // Several commands written at once (one round trip), their replies left for receive().
  void send_pipeline(std::span<const std::vector<std::string_view>> commands);
  // Redis Cluster: while set, run() and pipeline() send ASKING before each command (and drop its
  // reply), so a slot being migrated is served by the node an ASK redirect named.
  void set_asking(bool asking) noexcept { asking_ = asking; }
  // The first MOVED or ASK redirect a reply carried since the last call (the reply itself is
  // returned as the error it is).
  std::optional<Redirect> take_redirect() noexcept { return std::exchange(redirect_, std::nullopt); }
  // Whether a reply since the last call was TRYAGAIN (a multi-key command on a slot being
  // migrated, with its keys split between the two nodes): the command did not run.
  bool take_try_again() noexcept { return std::exchange(try_again_, false); }

  // A request sent on it will not be waited for: the connection must not be reused.
  void discard() noexcept { broken_ = true; }
  std::vector<ReplyPtr> read_available();
  // The next reply to a send(), waiting up to the command timeout: with send(), one request on
  // each of several connections can be in flight at once (Redlock's masters).
  ReplyPtr receive();

 private:
  void append(Args args);
  void flush();  // writes what append() buffered: one request
  void append_asking();
  void skip_asking_reply();
  ReplyPtr read_reply();
  [[noreturn]] void fail(std::string_view doing, bool outcome_unknown);

  void set_reply_timeout(std::chrono::milliseconds timeout);

  ContextPtr context_;
  std::string where_;  // the redacted URL, for messages
  std::chrono::milliseconds command_timeout_;
  bool broken_ = false;
  bool asking_ = false;
  std::optional<Redirect> redirect_;
  bool try_again_ = false;
  std::uint64_t generation_ = 0;
  std::atomic<std::uint64_t>* round_trips_;
};

// Throws when `reply` is an error reply: WRONGTYPE maps to Errc::wrong_type, anything else to
// Errc::server_reply. `context` names the operation, e.g. "acquire 'orders:42'".
void throw_if_error(const redisReply& reply, std::string_view context);

// throw_if_error for the reply of one of our scripts (scripts.hpp). A script names the key an error
// is about as "KEYS[n]", replaced here by that key of `keys` (quoted, escaped): a key's bytes never
// travel inside a Redis error line. Besides WRONGTYPE, a counter Redis cannot increment (not an
// integer, or at its maximum) maps to Errc::bad_value.
void throw_if_script_error(const redisReply& reply, std::string_view context, std::span<const std::string> keys);

// Shape checks that throw Errc::protocol naming what was expected.
std::int64_t expect_integer(const redisReply& reply, std::string_view context);
[[noreturn]] void unexpected_reply(const redisReply& reply, std::string_view expected, std::string_view context);

inline std::string_view as_view(const redisReply& reply) noexcept { return {reply.str, reply.len}; }

// A Redis Cluster MOVED or ASK error reply: the command did not run.
inline bool is_redirect(const redisReply& reply) noexcept {
  if (reply.type != REDIS_REPLY_ERROR) return false;
  const std::string_view text = as_view(reply);
  return text.starts_with("MOVED ") || text.starts_with("ASK ");
}

// A reply that says the command did not run and the cluster router runs it again: a redirect
// (MOVED, ASK: followed) or TRYAGAIN (keys split by a migration: waited out).
inline bool is_rerouted(const redisReply& reply) noexcept {
  return is_redirect(reply) || (reply.type == REDIS_REPLY_ERROR && as_view(reply).starts_with("TRYAGAIN"));
}

// For operations run through Redis Cluster routing that return error replies instead of throwing:
// a rerouted reply is thrown (Errc::server_reply), so that the router follows the redirect or
// waits the migration out.
void throw_if_rerouted(const redisReply& reply);
// Whether every reply of a pipeline was a redirect: then none of its commands ran, and the whole
// pipeline may be sent where the first redirect points.
inline bool all_redirected(std::span<const ReplyPtr> replies) noexcept {
  return std::all_of(replies.begin(), replies.end(), [](const ReplyPtr& reply) { return is_redirect(*reply); });
}

// An Error's message without the code description that what() ends with, for quoting it inside
// another Error's message (which adds its own).
std::string message_of(const Error& error);

// A key for messages: quoted, with bytes that are not printable ASCII escaped, truncated if long.
std::string printable_key(std::string_view key);

// Copies a hiredis reply into the public Reply type.
Reply to_public_reply(const redisReply& reply);

}  // namespace lockbridge::detail
