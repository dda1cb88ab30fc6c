// The reply path: whatever bytes a "server" sends, through lockbridge's transport and hiredis's
// reader into the reply handling of every strategy's operations. A Connection talks over a unix
// socket to a peer that is this process: the input's first two bytes pick the options and the
// operation, the rest is
// written as the server's answer before the operation runs, and the peer then hangs up. Every
// outcome is a result or a lockbridge::Error (protocol, server_reply, wrong_type, bad_value, io for
// the hang-up); nothing crashes, leaks or waits.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "cluster/redirect.hpp"
#include "lockbridge/error.hpp"
#include "lockbridge/options.hpp"
#include "lockbridge/url.hpp"
#include "redis/connection.hpp"
#include "redis/reply.hpp"
#include "redis/script_runner.hpp"
#include "strategies/strategy.hpp"

namespace {

using lockbridge::detail::Connection;

// The listening end, made once per process.
struct Peer {
  Peer() {
    path = "/tmp/lockbridge-fuzz-reply-" + std::to_string(getpid()) + ".sock";
    unlink(path.c_str());
    listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    path.copy(address.sun_path, sizeof address.sun_path - 1);
    if (listener < 0 || bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        listen(listener, 16) != 0) {
      std::abort();
    }
    url = lockbridge::parse_redis_url("unix://" + path);
    options.connect_timeout = std::chrono::milliseconds(1000);
    options.command_timeout = std::chrono::milliseconds(1000);
  }
  ~Peer() {
    close(listener);
    unlink(path.c_str());
  }
  std::string path;
  int listener = -1;
  lockbridge::RedisUrl url;
  lockbridge::ClientOptions options;
  std::atomic<std::uint64_t> round_trips{0};
  lockbridge::detail::ScriptCache scripts;
};

Peer& peer() {
  static Peer instance;
  return instance;
}

// Every shape check the reply handling has, on one reply.
void read_every_way(const redisReply& reply) {
  namespace detail = lockbridge::detail;
  const std::string keys[] = {"fuzz:key", "fuzz:key:other"};
  const auto attempt = [](auto&& check) {
    try {
      check();
    } catch (const lockbridge::Error&) {
    }
  };
  attempt([&] { detail::throw_if_error(reply, "fuzz"); });
  attempt([&] { detail::throw_if_script_error(reply, "fuzz", keys); });
  attempt([&] { (void)detail::expect_integer(reply, "fuzz"); });
  attempt([&] { (void)detail::expect_array(reply, 2, "fuzz"); });
  attempt([&] { (void)detail::string_or_nil(reply, "fuzz"); });
  attempt([&] { detail::throw_if_rerouted(reply); });
  (void)detail::to_public_reply(reply);
  if (reply.type == REDIS_REPLY_ERROR) (void)detail::parse_redirect(detail::as_view(reply));
}

lockbridge::MutexOptions options_for(unsigned pick) {
  lockbridge::MutexOptions options;
  switch (pick % 4) {
    case 0:
      options.strategy = lockbridge::StrategyKind::token;
      options.token.fencing = (pick & 4) != 0;
      break;
    case 1:
      options.strategy = lockbridge::StrategyKind::legacy;
      options.legacy.preset = lockbridge::LegacyPreset::hardened;
      break;
    case 2:
      options.strategy = lockbridge::StrategyKind::legacy;
      options.legacy.preset = lockbridge::LegacyPreset::faithful;
      break;
    default:
      options.strategy = lockbridge::StrategyKind::redisson;
      break;
  }
  if ((pick & 8) != 0) options.wait_mode = lockbridge::WaitMode::fair;
  return options;
}

// One of a strategy's operations, reading whatever the peer answered.
void run_operation(Connection& connection, unsigned pick, unsigned operation) {
  Peer& p = peer();
  const lockbridge::MutexOptions options = options_for(pick);
  std::unique_ptr<lockbridge::detail::LockStrategy> strategy;
  try {
    strategy = lockbridge::detail::make_strategy(options, p.scripts, false);
  } catch (const lockbridge::Error&) {
    return;  // a combination the options refuse
  }
  const std::string key = "fuzz:key";
  lockbridge::detail::AttemptRequest request;
  request.lease = std::chrono::milliseconds(30000);
  request.learn_remaining = (pick & 16) != 0;
  if ((pick & 32) != 0) request.queued_waiter = "0123456789abcdef0123456789abcdef";
  // The blocking front's link: each call runs in place.
  lockbridge::detail::BlockingLink link(connection);
  switch (operation) {
    case 0:
      (void)strategy->try_acquire(link, key, request).run_now();
      break;
    case 1:
      (void)strategy->release(link, key, "0123456789abcdef0123456789abcdef", "fuzz:channel").run_now();
      break;
    case 2:
      (void)strategy->extend(link, key, "0123456789abcdef0123456789abcdef", std::chrono::milliseconds(30000)).run_now();
      break;
    default:
      (void)strategy->inspect(link, key, "0123456789abcdef0123456789abcdef").run_now();
      break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  Peer& p = peer();
  const unsigned pick = data[0];
  const unsigned operation = data[1] % 5;  // 4: the generic path
  const std::string answer(reinterpret_cast<const char*>(data + 2), size - 2);
  std::unique_ptr<Connection> connection;
  try {
    connection = std::make_unique<Connection>(p.url, p.options, p.round_trips);
  } catch (const lockbridge::Error&) {
    std::abort();  // the listener is this process's: connecting cannot fail
  }
  const int server = accept4(p.listener, nullptr, nullptr, SOCK_CLOEXEC);
  if (server < 0) std::abort();
  // The answer is there before the question: the socket buffer holds it (inputs are small), and
  // the hang-up after it ends every read at once instead of at a timeout.
  std::size_t sent = 0;
  while (sent < answer.size()) {
    const ssize_t n = send(server, answer.data() + sent, answer.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n <= 0) break;
    sent += static_cast<std::size_t>(n);
  }
  shutdown(server, SHUT_WR);
  try {
    if (operation == 4) {
      // The generic path: replies read one by one, each checked every way.
      for (int i = 0; i < 8 && !connection->broken(); ++i) read_every_way(*connection->run({"PING"}));
    } else {
      run_operation(*connection, pick, operation);
    }
  } catch (const lockbridge::Error&) {
    // What a bad server should get: an error, with the connection marked broken where it is.
  }
  connection.reset();
  close(server);
  return 0;
}
