// The event-driven front's routes (core/pipeline_routes.*) on an Asio io_context: operations wait
// for the connection, opened off the loop, until the connect ends; a refused connect fails
// them and the reconnect backoff fails the next ones fast; a connection that ends is replaced; an
// operation cancelled while it waits is never resumed.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "core/pipeline_routes.hpp"
#include "loop_runner.hpp"
#include "redis_test_support.hpp"
#include "silent_server.hpp"

namespace lockbridge::testing {
namespace {

using detail::Link;
using detail::PipelineRoutes;
using detail::Task;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

class PipelineRoutesTest : public ::testing::Test {
 protected:
  std::shared_ptr<PipelineRoutes> routes_for(const Client& client) {
    return PipelineRoutes::make(client.state(), runner_.loop());
  }
  // An operation that PINGs and records the reply.
  Task<void> ping(PipelineRoutes& routes, std::optional<std::string>& reply, Clock::time_point deadline) {
    const detail::Routes::Operation operation = [&reply](Link& link) -> Task<void> {
      const auto got = co_await link.command("PING");
      reply = std::string(detail::as_view(*got));
    };
    co_await routes.on_link("any key", operation, deadline);
  }
  // Runs the loop until `task` ends; its error, if any.
  std::optional<Error> finish(Task<void> task) {
    try {
      runner_.finish(std::move(task));
    } catch (const Error& error) {
      return error;
    }
    return std::nullopt;
  }
  static Clock::time_point in_seconds(int count) { return Clock::now() + std::chrono::seconds(count); }

  LoopRunner runner_;
};

TEST_F(PipelineRoutesTest, OperationsWaitForTheConnectionAndShareIt) {
  const Client client = test_client();
  const auto routes = routes_for(client);
  std::optional<std::string> first, second;
  // Both start before the loop runs: the second waits for the connect the first started.
  Task<void> one = ping(*routes, first, in_seconds(5));
  Task<void> two = ping(*routes, second, in_seconds(5));
  EXPECT_FALSE(one.done());
  EXPECT_FALSE(finish(std::move(two)));
  EXPECT_FALSE(finish(std::move(one)));
  EXPECT_EQ(first, "PONG");
  EXPECT_EQ(second, "PONG");
}

TEST_F(PipelineRoutesTest, ARefusedConnectFailsTheOperationAndTheBackoffFailsTheNextFast) {
  ClientOptions options;
  options.reconnect_backoff = std::chrono::seconds(60);
  const Client client("redis://127.0.0.1:1", options);  // nothing listens on port 1
  const auto routes = routes_for(client);
  std::optional<std::string> reply;
  const auto failed = finish(ping(*routes, reply, in_seconds(5)));
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->errc(), Errc::io) << failed->what();
  const auto again = finish(ping(*routes, reply, in_seconds(5)));
  ASSERT_TRUE(again);
  EXPECT_NE(std::string(again->what()).find("reconnect backoff"), std::string::npos) << again->what();
  EXPECT_FALSE(reply);
}

TEST_F(PipelineRoutesTest, AnOperationWaitsForTheConnectToItsEndAsAPoolsBorrowerDoes) {
  // A silent server takes the TCP connection and never answers AUTH: the connect lasts the
  // command timeout (300 ms here), past the operation's own deadline (10 ms), and its failure is
  // the operation's: a connect is bounded by its own timeouts, on both fronts.
  SilentServer silent;
  ClientOptions options;
  options.command_timeout = milliseconds(300);
  const Client client("redis://:password@" + silent.address(), options);
  const auto routes = routes_for(client);
  std::optional<std::string> reply;
  const auto failed = finish(ping(*routes, reply, Clock::now() + milliseconds(10)));
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->errc(), Errc::timeout) << failed->what();
  EXPECT_EQ(std::string(failed->what()).find("caller's deadline"), std::string::npos) << failed->what();
  EXPECT_NE(std::string(failed->what()).find("no reply within the command timeout"), std::string::npos)
      << failed->what();
}

TEST_F(PipelineRoutesTest, AConnectionThatEndsIsReplacedForTheNextOperation) {
  const Client client = test_client();
  const auto routes = routes_for(client);
  std::optional<std::string> id;
  const detail::Routes::Operation client_id = [&id](Link& link) -> Task<void> {
    const auto got = co_await link.command("CLIENT", "ID");
    id = std::to_string(got->integer);
  };
  ASSERT_FALSE(finish(routes->on_link("k", client_id, in_seconds(5))));
  const std::string first_id = *id;
  raw({"CLIENT", "KILL", "ID", first_id});
  // The loop notices the close (or the next request finds it): a new connection serves the next
  // operation, which may fail once if it was sent on the dead one.
  std::optional<Error> failed = finish(routes->on_link("k", client_id, in_seconds(5)));
  if (failed) failed = finish(routes->on_link("k", client_id, in_seconds(5)));
  EXPECT_FALSE(failed) << failed->what();
  EXPECT_NE(*id, first_id);
}

TEST_F(PipelineRoutesTest, AnOperationCancelledWhileItWaitsIsNeverResumed) {
  const Client client = test_client();
  const auto routes = routes_for(client);
  std::optional<std::string> cancelled, served;
  {
    Task<void> gone = ping(*routes, cancelled, in_seconds(5));
    EXPECT_FALSE(gone.done());
  }  // destroyed while waiting for the connect
  EXPECT_FALSE(finish(ping(*routes, served, in_seconds(5))));
  EXPECT_EQ(served, "PONG");
  EXPECT_FALSE(cancelled);
}

}  // namespace
}  // namespace lockbridge::testing
