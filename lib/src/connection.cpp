#include "connection.hpp"

#include <poll.h>
#include <pthread.h>
#include <sys/time.h>

#include <csignal>

#include <array>
#include <cerrno>
#include <chrono>

#include "lockbridge/error.hpp"
#include "poll_timeout.hpp"

namespace lockbridge::detail {
namespace {

timeval to_timeval(std::chrono::milliseconds duration) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(duration.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((duration.count() % 1000) * 1000);
  return tv;
}

bool is_timeout(int err, int saved_errno, std::string_view message) {
  return (err == REDIS_ERR_IO && (saved_errno == EAGAIN || saved_errno == EWOULDBLOCK || saved_errno == ETIMEDOUT)) ||
         message.find("timed out") != std::string_view::npos ||
         message.find("temporarily unavailable") != std::string_view::npos;
}

// Writing to a connection the server has closed raises SIGPIPE, whose default action kills the
// process; hiredis 0.14 writes with write(2), which cannot opt out per call. So SIGPIPE is blocked
// in this thread while we write, and one we caused is consumed before unblocking: the failure
// then arrives as EPIPE and becomes Errc::io, and the application's signal setup is untouched.
class SigpipeGuard {
 public:
  SigpipeGuard() noexcept {
    sigemptyset(&sigpipe_);
    sigaddset(&sigpipe_, SIGPIPE);
    sigset_t previous;
    pthread_sigmask(SIG_BLOCK, &sigpipe_, &previous);
    was_blocked_ = sigismember(&previous, SIGPIPE) == 1;  // then a pending one is not ours
  }
  ~SigpipeGuard() {
    if (was_blocked_) return;
    sigset_t pending;
    sigpending(&pending);
    if (sigismember(&pending, SIGPIPE) == 1) {
      const timespec no_wait{0, 0};
      sigtimedwait(&sigpipe_, nullptr, &no_wait);
    }
    pthread_sigmask(SIG_UNBLOCK, &sigpipe_, nullptr);
  }
  SigpipeGuard(const SigpipeGuard&) = delete;
  SigpipeGuard& operator=(const SigpipeGuard&) = delete;

 private:
  sigset_t sigpipe_{};
  bool was_blocked_ = false;
};

}  // namespace

Connection::Connection(const RedisUrl& url, const ClientOptions& options, std::atomic<std::uint64_t>& round_trips)
    : where_(url.redacted()), command_timeout_(options.command_timeout), round_trips_(&round_trips) {
  // hiredis hands the connect timeout to poll(2) as an int of milliseconds.
  const timeval connect_tv = to_timeval(std::chrono::milliseconds(poll_timeout(options.connect_timeout)));
  errno = 0;
  context_.reset(url.transport == RedisUrl::Transport::unix_socket
                     ? redisConnectUnixWithTimeout(url.socket_path.c_str(), connect_tv)
                     : redisConnectWithTimeout(url.host.c_str(), url.port, connect_tv));
  if (!context_) throw Error(Errc::io, "connect to " + where_ + ": out of memory");
  if (context_->err != 0) {
    const int saved_errno = errno;
    const std::string message = context_->errstr;
    throw Error(is_timeout(context_->err, saved_errno, message) ? Errc::timeout : Errc::io,
                "connect to " + where_ + ": " + message);
  }
  set_reply_timeout(command_timeout_);
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

void Connection::set_reply_timeout(std::chrono::milliseconds timeout) {
  if (redisSetTimeout(context_.get(), to_timeval(timeout)) != REDIS_OK) {
    broken_ = true;
    throw Error(Errc::io, "on " + where_ + ": cannot set the socket timeout");
  }
}

ReplyPtr Connection::run_held(Args args, std::chrono::milliseconds server_wait) {
  set_reply_timeout(command_timeout_ + server_wait);
  ReplyPtr reply = run(args);  // a failure breaks the connection: its timeout no longer matters
  set_reply_timeout(command_timeout_);
  return reply;
}

void Connection::fail(std::string_view doing, bool outcome_unknown) {
  const int saved_errno = errno;
  broken_ = true;
  const std::string message = context_->err != 0 ? context_->errstr : "no reply";
  const bool timed_out = is_timeout(context_->err, saved_errno, message);
  const Errc code = timed_out ? Errc::timeout : (context_->err == REDIS_ERR_PROTOCOL ? Errc::protocol : Errc::io);
  throw Error(code, std::string(doing) + " on " + where_ + ": " +
                        (timed_out ? "no reply within the command timeout" : message) +
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
  if (redisAppendCommandArgv(context_.get(), static_cast<int>(args.size()), argv, lens) != REDIS_OK) {
    fail("send", false);  // only buffered so far: nothing reached the server
  }
}

ReplyPtr Connection::read_reply() {
  void* raw = nullptr;
  errno = 0;
  const int status = redisGetReply(context_.get(), &raw);
  ReplyPtr reply(static_cast<redisReply*>(raw));  // wrap before checking the status
  // The buffered commands are written inside redisGetReply: a failure here may come after the
  // server ran them.
  if (status != REDIS_OK || !reply) fail("read reply", true);
  // A server that became a replica (a failover demoted it) refuses every write: the connection is
  // no use for locks any more, so it is dropped and its Endpoint looks for the master again.
  if (reply->type == REDIS_REPLY_ERROR) {
    const std::string_view text = as_view(*reply);
    if (text.starts_with("READONLY")) {
      broken_ = true;
      throw Error(Errc::io, "write to " + where_ + " refused: " + std::string(text) +
                                " (the server is a replica now: a failover demoted it, or the URL names a replica)");
    }
    if (!redirect_ && is_redirect(*reply)) redirect_ = parse_redirect(text);
    if (text.starts_with("TRYAGAIN")) try_again_ = true;
    if (text.starts_with("CLUSTERDOWN")) {
      // A master failed and its replica is not promoted yet: like an unreachable server, a state
      // to retry through (any further replies of a pipeline are dropped with the connection).
      broken_ = true;
      throw Error(Errc::io, "command on " + where_ + " refused: " + std::string(text));
    }
  }
  return reply;
}

void Connection::append_asking() {
  if (asking_) append(std::initializer_list<std::string_view>{"ASKING"});
}

void Connection::skip_asking_reply() {
  if (asking_) (void)read_reply();  // +OK, or an error the command's own reply repeats
}

ReplyPtr Connection::receive() {
  if (context_->err != 0) throw Error(Errc::io, "connection to " + where_ + " is broken");
  const SigpipeGuard guard;
  return read_reply();
}

ReplyPtr Connection::run(Args args) {
  if (broken_) throw Error(Errc::io, "connection to " + where_ + " is broken");
  append_asking();
  append(args);
  round_trips_->fetch_add(1, std::memory_order_relaxed);
  const SigpipeGuard guard;
  skip_asking_reply();
  return read_reply();
}

void Connection::send(Args args) {
  if (broken_) throw Error(Errc::io, "connection to " + where_ + " is broken");
  append(args);
  flush();
}

void Connection::send_pipeline(std::span<const std::vector<std::string_view>> commands) {
  if (broken_) throw Error(Errc::io, "connection to " + where_ + " is broken");
  for (const auto& command : commands) append(command);
  flush();
}

void Connection::flush() {
  round_trips_->fetch_add(1, std::memory_order_relaxed);
  const SigpipeGuard guard;
  int done = 0;
  while (done == 0) {
    errno = 0;
    if (redisBufferWrite(context_.get(), &done) != REDIS_OK) fail("send", true);
  }
}

bool Connection::closed_by_peer() const noexcept {
  if (broken_) return true;
  pollfd socket{context_->fd, POLLIN | POLLRDHUP, 0};
  return poll(&socket, 1, 0) != 0;  // readable, hung up, in error, or poll itself failed
}

std::vector<ReplyPtr> Connection::read_available() {
  if (broken_) throw Error(Errc::io, "connection to " + where_ + " is broken");
  errno = 0;
  if (redisBufferRead(context_.get()) != REDIS_OK) fail("read", false);
  std::vector<ReplyPtr> replies;
  for (;;) {
    void* raw = nullptr;
    if (redisGetReplyFromReader(context_.get(), &raw) != REDIS_OK) fail("read", false);
    if (raw == nullptr) return replies;
    replies.emplace_back(static_cast<redisReply*>(raw));
  }
}

std::vector<ReplyPtr> Connection::pipeline(std::span<const std::vector<std::string_view>> commands) {
  if (broken_) throw Error(Errc::io, "connection to " + where_ + " is broken");
  for (const auto& command : commands) {
    append_asking();
    append(command);
  }
  round_trips_->fetch_add(1, std::memory_order_relaxed);
  const SigpipeGuard guard;
  std::vector<ReplyPtr> replies;
  replies.reserve(commands.size());
  for (std::size_t i = 0; i < commands.size(); ++i) {
    skip_asking_reply();
    replies.push_back(read_reply());
  }
  return replies;
}

}  // namespace lockbridge::detail
