// Bad input and bad servers: every case is a clear lockbridge::Error with its code, never a crash,
// a hang, or a changed key. (Wrong-type keys and unparsable values: legacy_test.cpp, token_test.cpp.)
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <future>
#include <limits>

#include "embedded_server.hpp"
#include "redis_test_support.hpp"
#include "silent_server.hpp"
#include "topology.hpp"

namespace lockbridge::testing {
namespace {

using std::chrono::milliseconds;
using ::testing::HasSubstr;

TEST(BadInput, EmptyKeyIsRefusedBeforeAnyIo) {
  const Error error = expect_error([] { Mutex mutex(test_client(), "", token_options()); });
  EXPECT_EQ(error.errc(), Errc::bad_option);
  EXPECT_THAT(error.what(), HasSubstr("key"));
}

TEST(BadInput, MalformedUrlNamesTheBadPart) {
  const Error error = expect_error([] { Client client("redis://localhost:notaport"); });
  EXPECT_EQ(error.errc(), Errc::bad_option);
  EXPECT_THAT(error.what(), HasSubstr("port"));
}

TEST(BadInput, RefusedConnectionIsAnIoErrorNamingTheServer) {
  // Port 1 on loopback: nothing listens there, so the kernel refuses at once.
  Mutex mutex(Client("redis://127.0.0.1:1"), unique_key(), token_options());
  const Error error = expect_error([&] { (void)mutex.try_lock(); });
  EXPECT_EQ(error.errc(), Errc::io);
  EXPECT_THAT(error.what(), HasSubstr("127.0.0.1:1"));
  EXPECT_FALSE(mutex.owns_lock());
}

TEST(BadInput, MissingUnixSocketIsAnIoError) {
  Mutex mutex(Client("unix://" + test_dir() + "/no-such.sock"), unique_key(), token_options());
  EXPECT_EQ(expect_error([&] { (void)mutex.try_lock(); }).errc(), Errc::io);
}

TEST(BadInput, UnreachableServerFailsFastDuringReconnectBackoff) {
  ClientOptions options;
  options.reconnect_backoff = std::chrono::seconds(60);
  Mutex mutex(Client("redis://127.0.0.1:1", options), unique_key(), token_options());
  EXPECT_EQ(expect_error([&] { (void)mutex.try_lock(); }).errc(), Errc::io);
  const Error second = expect_error([&] { (void)mutex.try_lock(); });
  EXPECT_EQ(second.errc(), Errc::io);
  EXPECT_THAT(second.what(), HasSubstr("backoff"));
}

// Waits at the ends of their types: the deadline "now + wait" must neither wrap (a negative or
// past wait turned into a huge one, which would block here for good) nor come out in the past for
// a huge one. Against a held lock, a wait that is not positive is one attempt; a free lock is
// taken at once whatever the wait.
TEST(BadInput, ExtremeWaitsAreOneAttemptOrNoDeadlineNeverAWrappedDeadline) {
  using namespace std::chrono;
  const std::string key = unique_key();
  Mutex holder(test_client(), key, token_options());
  ASSERT_TRUE(holder.try_lock());
  Mutex waiter(test_client(), key, token_options());
  const std::vector<std::pair<std::string, std::function<bool()>>> single_attempts{
      {"nanoseconds::min()", [&] { return waiter.try_lock_for(nanoseconds::min()); }},
      {"hours::min()", [&] { return waiter.try_lock_for(hours::min()); }},
      {"NaN seconds", [&] { return waiter.try_lock_for(duration<double>(std::numeric_limits<double>::quiet_NaN())); }},
      {"-inf seconds", [&] { return waiter.try_lock_for(duration<double>(-std::numeric_limits<double>::infinity())); }},
      {"system_clock min()", [&] { return waiter.try_lock_until(system_clock::time_point::min()); }},
      {"steady_clock min()", [&] { return waiter.try_lock_until(steady_clock::time_point::min()); }},
  };
  for (const auto& [name, attempt] : single_attempts) {
    SCOPED_TRACE(name);
    auto result = std::async(std::launch::async, attempt);
    if (result.wait_for(seconds(10)) == std::future_status::ready) {
      EXPECT_FALSE(result.get());
      continue;
    }
    ADD_FAILURE() << "a wait that is not positive blocked (a wrapped deadline)";
    holder.unlock();  // lets the stuck waiter in, so that the test ends
    EXPECT_TRUE(result.get());
    waiter.unlock();
    ASSERT_TRUE(holder.try_lock());
  }
  holder.unlock();
  const std::vector<std::pair<std::string, std::function<bool()>>> no_deadline{
      {"hours::max()", [&] { return waiter.try_lock_for(hours::max()); }},
      {"+inf seconds", [&] { return waiter.try_lock_for(duration<double>(std::numeric_limits<double>::infinity())); }},
      {"system_clock max()", [&] { return waiter.try_lock_until(system_clock::time_point::max()); }},
      {"steady_clock max()", [&] { return waiter.try_lock_until(steady_clock::time_point::max()); }},
  };
  for (const auto& [name, attempt] : no_deadline) {
    SCOPED_TRACE(name);
    EXPECT_TRUE(attempt()) << "a free lock is taken whatever the wait";
    waiter.unlock();
  }
}

TEST(BadInput, ServerThatNeverAnswersIsATimeoutWithUnknownOutcome) {
  const SilentServer server;
  ClientOptions options;
  options.command_timeout = milliseconds(100);
  for (const MutexOptions& lock_options : {token_options(), hardened_options(), faithful_options()}) {
    Mutex mutex(Client(server.url(), options), unique_key(), lock_options);
    const Error error = expect_error([&] { (void)mutex.try_lock(); });
    EXPECT_EQ(error.errc(), Errc::timeout);
    EXPECT_THAT(error.what(), HasSubstr("unknown"));
    EXPECT_FALSE(mutex.owns_lock());
  }
}

TEST(BadInput, ServerGoneWhileHoldingIsAnIoErrorNotACrash) {
  // A private server, so shutting it down disturbs no other test. Writing to the closed unix socket
  // would raise SIGPIPE and kill this process if lockbridge let it through.
  auto server = tools::EmbeddedRedis::start();
  ClientOptions options;
  options.reconnect_backoff = milliseconds(0);
  const Client client(server->url(), options);
  Mutex held(client, unique_key(), token_options());
  ASSERT_TRUE(held.try_lock());
  try {
    Client(server->url()).command({"SHUTDOWN", "NOSAVE"});  // held's pooled connection stays open
  } catch (const Error&) {                                  // the server closes the connection instead of replying
  }
  server.reset();  // waits for the process to exit and removes its socket
  held.unlock();
  EXPECT_EQ(held.last_error(), Errc::io);
  Mutex next(client, unique_key(), token_options());
  EXPECT_EQ(expect_error([&] { (void)next.try_lock(); }).errc(), Errc::io);
}

// A server restarted while the Client's pooled connection sat idle: that connection is dead, but
// the server is back. The next operation notices the closed connection before sending anything
// and makes a new one, so the caller sees no error at all.
TEST(Connections, AServerRestartedWhileAConnectionWasIdleCostsTheCallerNoError) {
  const auto server = ServerProcess::start_server();
  const Client client("redis://" + server->address());
  const std::string key = unique_key();
  Mutex mutex(client, key, token_options());
  ASSERT_TRUE(mutex.try_lock());
  mutex.unlock();  // its connection goes back to the pool, idle
  server->restart();
  ASSERT_TRUE(mutex.try_lock());
  EXPECT_EQ(server->command({"GET", key}), mutex.value());
  mutex.unlock();
  EXPECT_FALSE(mutex.last_error());
}

TEST(BadInput, WrongPasswordIsAServerReplyErrorNamingAuth) {
  const std::string user = "lbtest-" + unique_key().substr(unique_key().size() - 8);
  raw({"ACL", "SETUSER", user, "on", ">right-password", "~*", "&*", "+@all"});
  Client client("redis://" + user + ":wrong-password@127.0.0.1:" + std::to_string(tcp_port()));
  const Error error = expect_error([&] { client.ping(); });
  EXPECT_EQ(error.errc(), Errc::server_reply);
  EXPECT_THAT(error.what(), HasSubstr("AUTH"));
  EXPECT_THAT(error.what(), ::testing::Not(HasSubstr("wrong-password")));
  raw({"ACL", "DELUSER", user});
}

TEST(Connections, APipelineAnswersInOrderAndReturnsErrorRepliesInPlace) {
  const std::string key = unique_key();
  const std::string hash = unique_key("hash");
  raw({"HSET", hash, "f", "v"});
  Client client = test_client();
  const auto before = client.stats().round_trips;
  const std::vector<Reply> replies = client.pipeline(
      std::vector<std::vector<std::string>>{{"SET", key, "v"}, {"GETRANGE", hash, "0", "1"}, {"GET", key}});
  EXPECT_EQ(client.stats().round_trips - before, 1U);
  ASSERT_EQ(replies.size(), 3U);
  EXPECT_EQ(replies[0].kind, Reply::Kind::status);
  EXPECT_EQ(replies[1].kind, Reply::Kind::error);
  EXPECT_THAT(replies[1].str, ::testing::StartsWith("WRONGTYPE"));
  EXPECT_EQ(replies[2].str, "v");
  EXPECT_TRUE(client.pipeline({}).empty());
  EXPECT_EQ(expect_error([&] { (void)client.pipeline(std::vector<std::vector<std::string>>{{}}); }).errc(),
            Errc::bad_option);
  raw({"DEL", key, hash});
}

TEST(Connections, AuthenticatesAndSelectsTheDatabaseFromTheUrl) {
  const std::string user = "lbtest-" + unique_key().substr(unique_key().size() - 8);
  raw({"ACL", "SETUSER", user, "on", ">p@ss word", "~*", "&*", "+@all"});
  const Client client("redis://" + user + ":p%40ss%20word@127.0.0.1:" + std::to_string(tcp_port()) + "/3");
  const std::string key = unique_key();
  Mutex mutex(client, key, token_options());
  ASSERT_TRUE(mutex.try_lock());
  EXPECT_EQ(raw({"EXISTS", key}).integer, 0);  // not in db 0
  EXPECT_EQ(client.command({"GET", key}).str, mutex.value());
  mutex.unlock();
  EXPECT_EQ(client.command({"EXISTS", key}).integer, 0);
  raw({"ACL", "DELUSER", user});
}

TEST(Connections, LocksOverIpv4AndUnixSocket) {
  for (const std::string& url : {"redis://127.0.0.1:" + std::to_string(tcp_port()), unix_url()}) {
    SCOPED_TRACE(url);
    Mutex mutex(Client(url), unique_key(), token_options());
    ASSERT_TRUE(mutex.try_lock());
    mutex.unlock();
    EXPECT_FALSE(mutex.last_error());
  }
}

TEST(Connections, LocksOverIpv6LoopbackWhereTheMachineHasIt) {
  const int probe = socket(AF_INET6, SOCK_STREAM, 0);
  sockaddr_in6 address{};
  address.sin6_family = AF_INET6;
  address.sin6_addr = in6addr_loopback;
  address.sin6_port = htons(static_cast<std::uint16_t>(tcp_port()));
  const bool reachable = probe >= 0 && connect(probe, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  if (probe >= 0) close(probe);
  if (!reachable) GTEST_SKIP() << "no IPv6 loopback on this machine";
  Mutex mutex(Client("redis://[::1]:" + std::to_string(tcp_port())), unique_key(), token_options());
  ASSERT_TRUE(mutex.try_lock());
  mutex.unlock();
  EXPECT_FALSE(mutex.last_error());
}

TEST(Connections, ManyThreadsShareASmallPoolWithoutErrors) {
  ClientOptions options;
  options.pool_size = 2;
  const Client client = test_client(options);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        try {
          client.ping();
        } catch (const Error&) {
          ++failures;
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures, 0);  // threads beyond pool_size wait for a connection instead of failing
}

}  // namespace
}  // namespace lockbridge::testing
