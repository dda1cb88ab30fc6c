#include "redis/connection.hpp"

#include <chrono>

#include "lockbridge/error.hpp"

namespace lockbridge::detail {
namespace {

Deadline after(std::chrono::milliseconds timeout) {
  // Timeouts are at most 365 days (option_limits.hpp): no overflow.
  return std::chrono::steady_clock::now() + timeout;
}

Transport open_transport(const RedisUrl& url, const ClientOptions& options, const std::string& where) {
  try {
    return Transport(url, options, after(options.connect_timeout));
  } catch (const TransportError& error) {
    throw Error(error.code(), "connect to " + where + ": " + error.what());
  }
}

// hiredis allocates an array's element pointers when its header arrives, before any element does:
// "*2000000000\r\n" from a broken or hostile server would ask for 16 GB at once (found by
// fuzz_reply). Every array of a reply lockbridge reads is far below this bound.
constexpr int kMaxReplyElements = 1 << 24;

using CreateArray = void* (*)(const redisReadTask*, int);
CreateArray hiredis_create_array = nullptr;

// hiredis's own reply objects, except that an array above kMaxReplyElements is refused (the
// reader's privdata, a Connection's flag, says why the reader then reports an error).
redisReplyObjectFunctions* bounded_reply_functions() {
  static redisReplyObjectFunctions functions = [] {
    const ReaderPtr probe(redisReaderCreate());
    if (!probe) throw Error(Errc::io, "out of memory");
    redisReplyObjectFunctions bounded = *probe->fn;
    hiredis_create_array = bounded.createArray;
    bounded.createArray = [](const redisReadTask* task, int elements) -> void* {
      if (elements > kMaxReplyElements) {
        if (task->privdata != nullptr) *static_cast<bool*>(task->privdata) = true;
        return nullptr;  // hiredis reports it as out of memory; next_parsed() says what it was
      }
      return hiredis_create_array(task, elements);
    };
    return bounded;
  }();
  return &functions;
}

}  // namespace

Connection::Connection(const RedisUrl& url, const ClientOptions& options, std::atomic<std::uint64_t>& round_trips)
    : where_(url.redacted()),
      transport_(open_transport(url, options, where_)),
      reader_(redisReaderCreateWithFunctions(bounded_reply_functions())),
      command_timeout_(options.command_timeout),
      round_trips_(&round_trips) {
  if (!reader_) throw Error(Errc::io, "connect to " + where_ + ": out of memory");
  reader_->privdata = &oversized_reply_;  // (hiredis's redisReaderSetPrivdata casts the pointer to int)
  const auto setup = [this](std::initializer_list<std::string_view> args, const std::string& what) {
    ReplyPtr reply = run(args);
    if (reply->type == REDIS_REPLY_ERROR) {
      throw Error(Errc::server_reply, what + " on " + where_ + " refused: " + std::string(as_view(*reply)));
    }
  };
  if (url.user) {
    // A user without a password is fine for ACL users marked nopass, which accept any password.
    setup({"AUTH", *url.user, url.password.value_or("")}, "AUTH");
  } else if (url.password) {
    setup({"AUTH", *url.password}, "AUTH");
  }
  if (url.db != 0) setup({"SELECT", std::to_string(url.db)}, "SELECT " + std::to_string(url.db));
}

Deadline Connection::wait_deadline(std::chrono::milliseconds timeout) const { return std::min(after(timeout), cap_); }

void Connection::require_usable() const {
  if (broken_) throw Error(Errc::io, "connection to " + where_ + " is broken");
}

ReplyPtr Connection::run_held(Args args, std::chrono::milliseconds server_wait) {
  require_usable();
  append(args);
  flush();
  return read_reply(command_timeout_ + server_wait);
}

void Connection::fail(std::string_view doing, const TransportError& error, bool outcome_unknown) {
  broken_ = true;
  std::string reason = error.what();
  if (error.code() == Errc::io && !replied_ && !transport_.tls()) {
    // Redis drops a plain client on its TLS port at once: the first request meets a closed socket.
    reason += " (if the port expects TLS, use rediss:// or --tls)";
  }
  // A session the server refused by an alert ran nothing, though TLS 1.3 may tell so only after
  // the first request went out (docs/errors.md, tls).
  outcome_unknown = outcome_unknown && !error.session_refused();
  throw Error(error.code(), std::string(doing) + " on " + where_ + ": " + reason +
                                (outcome_unknown ? " (the command may have run: outcome unknown)" : ""));
}

void Connection::append(Args args) {
  // Small commands (all of the lock protocol) build their argv on the stack.
  constexpr std::size_t kInline = 16;
  std::array<const char*, kInline> argv_inline{};
  std::array<std::size_t, kInline> len_inline{};
  std::vector<const char*> argv_heap;
  std::vector<std::size_t> len_heap;
  const char** argv = argv_inline.data();
  std::size_t* lens = len_inline.data();
  if (args.size() > kInline) {
    argv_heap.resize(args.size());
    len_heap.resize(args.size());
    argv = argv_heap.data();
    lens = len_heap.data();
  }
  for (std::size_t i = 0; i < args.size(); ++i) {
    argv[i] = args[i].data();
    lens[i] = args[i].size();
  }
  // The sds variant: redisFormatCommandArgv writes each length with sprintf, which was a third of
  // a lock cycle's client-side instructions (callgrind); sds formats integers itself.
  sds formatted = nullptr;
  const int length = redisFormatSdsCommandArgv(&formatted, static_cast<int>(args.size()), argv, lens);
  if (length < 0 || formatted == nullptr) {
    broken_ = true;  // nothing reached the server
    throw Error(Errc::io, "send on " + where_ + ": out of memory");
  }
  pending_.append(formatted, static_cast<std::size_t>(length));
  redisFreeSdsCommand(formatted);
}

void Connection::flush() {
  round_trips_->fetch_add(1, std::memory_order_relaxed);
  try {
    transport_.write_all(pending_, wait_deadline(command_timeout_));
  } catch (const TransportError& error) {
    fail("send", error, true);  // part of the request may have reached the server
  }
  pending_.clear();
}

ReplyPtr Connection::next_parsed() {
  void* raw = nullptr;
  if (redisReaderGetReply(reader_.get(), &raw) != REDIS_OK) {
    broken_ = true;
    if (oversized_reply_) {
      throw Error(Errc::protocol, "read reply on " + where_ + ": an array of more than " +
                                      std::to_string(kMaxReplyElements) +
                                      " elements, not a reply lockbridge can use (the command may have run: outcome "
                                      "unknown)");
    }
    throw Error(Errc::protocol, "read reply on " + where_ + ": " + std::string(reader_->errstr) +
                                    " (the command may have run: outcome unknown)");
  }
  return ReplyPtr(static_cast<redisReply*>(raw));
}

ReplyPtr Connection::read_reply(std::chrono::milliseconds timeout) {
  const Deadline deadline = wait_deadline(timeout);
  ReplyPtr reply = next_parsed();
  while (!reply) {
    try {
      const std::string_view bytes = transport_.read_some(deadline);
      redisReaderFeed(reader_.get(), bytes.data(), bytes.size());
    } catch (const TransportError& error) {
      fail("read reply", error, true);  // the request was written: the server may have run it
    }
    reply = next_parsed();
  }
  return checked(std::move(reply));
}

ReplyPtr Connection::checked(ReplyPtr reply) {
  replied_ = true;
  if (reply->type != REDIS_REPLY_ERROR) return reply;
  const std::string_view text = as_view(*reply);
  // A server that became a replica (a failover demoted it) refuses every write: the connection is
  // no use for locks any more, so it is dropped and its Endpoint looks for the master again.
  if (text.starts_with("READONLY")) {
    broken_ = true;
    throw Error(Errc::io, "write to " + where_ + " refused: " + std::string(text) +
                              " (the server is a replica now: a failover demoted it, or the URL names a replica)");
  }
  if (hook_ != nullptr) hook_->on_error_reply(text);
  if (text.starts_with("CLUSTERDOWN")) {
    // A master failed and its replica is not promoted yet: like an unreachable server, a state
    // to retry through (any further replies of a pipeline are dropped with the connection).
    broken_ = true;
    throw Error(Errc::io, "command on " + where_ + " refused: " + std::string(text));
  }
  return reply;
}

void Connection::append_preamble() {
  if (hook_ == nullptr) return;
  const std::string_view preamble = hook_->preamble();
  if (!preamble.empty()) append(Args(&preamble, 1));
}

void Connection::skip_preamble_reply() {
  if (hook_ != nullptr && !hook_->preamble().empty()) (void)read_reply();
}

ReplyPtr Connection::receive() {
  require_usable();
  return read_reply();
}

ReplyPtr Connection::run(Args args) {
  require_usable();
  append_preamble();
  append(args);
  flush();
  skip_preamble_reply();
  return read_reply();
}

void Connection::send(Args args) {
  require_usable();
  append(args);
  flush();
}

void Connection::send_pipeline(std::span<const std::vector<std::string_view>> commands) {
  require_usable();
  for (const auto& command : commands) append(command);
  flush();
}

bool Connection::closed_by_peer() noexcept { return broken_ || transport_.unusable_when_idle(); }

std::vector<ReplyPtr> Connection::read_available() {
  require_usable();
  // Until the transport has nothing more: over TLS one read gives one record, and a second record
  // that arrived with it waits in memory, where poll(2) cannot see it.
  try {
    for (;;) {
      const std::string_view bytes = transport_.read_now(wait_deadline(command_timeout_));
      if (bytes.empty()) break;
      redisReaderFeed(reader_.get(), bytes.data(), bytes.size());
    }
  } catch (const TransportError& error) {
    fail("read", error, false);
  }
  std::vector<ReplyPtr> replies;
  while (ReplyPtr reply = next_parsed()) replies.push_back(std::move(reply));
  return replies;
}

bool Connection::send_now(std::span<const std::vector<std::string_view>> commands) {
  require_usable();
  for (const auto& command : commands) append(command);
  round_trips_->fetch_add(1, std::memory_order_relaxed);
  const std::string request = std::exchange(pending_, {});
  try {
    return transport_.write_now(request);
  } catch (const TransportError& error) {
    fail("send", error, true);  // part of the request may have reached the server
  }
}

bool Connection::send_pending() {
  require_usable();
  try {
    return transport_.write_pending();
  } catch (const TransportError& error) {
    fail("send", error, true);
  }
}

std::vector<ReplyPtr> Connection::receive_now() {
  if (held_failure_) std::rethrow_exception(std::exchange(held_failure_, nullptr));
  require_usable();
  std::vector<ReplyPtr> replies;
  try {
    for (;;) {
      std::string_view bytes;
      try {
        bytes = transport_.read_now(wait_deadline(command_timeout_));
      } catch (const TransportError& error) {
        fail("read reply", error, true);  // requests were written: the server may have run them
      }
      if (bytes.empty()) break;
      redisReaderFeed(reader_.get(), bytes.data(), bytes.size());
      while (ReplyPtr reply = next_parsed()) replies.push_back(checked(std::move(reply)));
    }
  } catch (const Error&) {
    // The replies before the failure are their requests' own: they are returned, and the failure
    // is thrown by the next call.
    if (replies.empty()) throw;
    held_failure_ = std::current_exception();
  }
  return replies;
}

std::vector<ReplyPtr> Connection::pipeline(std::span<const std::vector<std::string_view>> commands) {
  require_usable();
  for (const auto& command : commands) {
    append_preamble();
    append(command);
  }
  flush();
  std::vector<ReplyPtr> replies;
  replies.reserve(commands.size());
  for (std::size_t i = 0; i < commands.size(); ++i) {
    skip_preamble_reply();
    replies.push_back(read_reply());
  }
  return replies;
}

}  // namespace lockbridge::detail
