// The event-driven connection (redis/pipeline.hpp) on an Asio io_context, through lockbridge/asio.hpp's
// event loop, against the fixture's real server (over TLS too, in the TLS copies): replies reach
// their own requests, a request given up on keeps its place, a server that never answers fails
// requests at their deadlines, and a reset fails every request in flight.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "loop_runner.hpp"
#include "redis/pipeline.hpp"
#include "redis/reply.hpp"
#include "redis_test_support.hpp"
#include "silent_server.hpp"

namespace lockbridge::testing {
namespace {

using detail::Pipeline;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// The outcome a request was told, copied out (replies as text), and how often it was told.
struct Told {
  int times = 0;
  std::vector<std::string> replies;
  std::optional<Errc> error;
  std::string message;
};

Pipeline::Done record(Told& told) {
  return [&told](Pipeline::Outcome outcome) {
    ++told.times;
    if (auto* error = std::get_if<Error>(&outcome)) {
      told.error = error->errc();
      told.message = error->what();
      return;
    }
    for (const auto& reply : std::get<0>(outcome)) {
      told.replies.push_back(reply->type == REDIS_REPLY_INTEGER ? std::to_string(reply->integer)
                                                                : std::string(detail::as_view(*reply)));
    }
  };
}

class PipelineTest : public ::testing::Test {
 protected:
  std::string url() const { return over_tls() ? tls_url() : unix_url(); }
  ClientOptions options() const {
    ClientOptions options;
    if (over_tls()) options.tls = test_tls();
    return options;
  }
  std::shared_ptr<Pipeline> start(const std::string& where, ClientOptions client_options) {
    auto connection = std::make_unique<detail::Connection>(parse_redis_url(where), client_options, round_trips_);
    return Pipeline::start(*runner_.loop(), std::move(connection));
  }
  std::shared_ptr<Pipeline> start() { return start(url(), options()); }
  template <class Done>
  void run_until(Done&& done) {
    ASSERT_TRUE(runner_.run_until(std::forward<Done>(done))) << "the loop ran 10 s without getting there";
  }
  static Clock::time_point soon() { return Clock::now() + std::chrono::seconds(5); }

  LoopRunner runner_;
  std::atomic<std::uint64_t> round_trips_{0};
};

TEST_F(PipelineTest, ManyRequestsInFlightEachGetTheirOwnRepliesInOrder) {
  const auto pipeline = start();
  constexpr int kRequests = 2000;
  std::vector<Told> told(kRequests);
  for (int i = 0; i < kRequests; ++i) {
    // Every third request carries two commands: replies are counted per request.
    std::vector<std::vector<std::string>> commands{{"ECHO", "r" + std::to_string(i)}};
    if (i % 3 == 0) commands.push_back({"ECHO", "again" + std::to_string(i)});
    pipeline->submit(std::move(commands), soon(), record(told[i]));
  }
  EXPECT_GT(pipeline->in_flight(), 0u);  // nothing was told inside submit()
  run_until([&] { return pipeline->in_flight() == 0; });
  for (int i = 0; i < kRequests; ++i) {
    ASSERT_EQ(told[i].times, 1) << i;
    ASSERT_FALSE(told[i].error) << told[i].message;
    std::vector<std::string> expected{"r" + std::to_string(i)};
    if (i % 3 == 0) expected.push_back("again" + std::to_string(i));
    EXPECT_EQ(told[i].replies, expected);
  }
}

TEST_F(PipelineTest, ARequestGivenUpOnKeepsItsPlaceAndItsReplyGoesNowhereElse) {
  const auto pipeline = start();
  Told forgotten, next;
  const auto ticket = pipeline->submit({{"ECHO", "for the forgotten"}}, soon(), record(forgotten));
  pipeline->forget(ticket);
  pipeline->submit({{"ECHO", "for the next"}}, soon(), record(next));
  run_until([&] { return next.times > 0; });
  EXPECT_EQ(forgotten.times, 0);
  EXPECT_EQ(next.replies, std::vector<std::string>{"for the next"});
}

TEST_F(PipelineTest, WhatTheSocketCannotTakeAtOnceIsWrittenAsItMakesRoom) {
  const auto pipeline = start();
  const std::string key = unique_key();
  const std::string value(256 * 1024, 'v');
  constexpr int kRequests = 64;  // 16 MiB: far more than a socket buffer holds
  std::vector<Told> told(kRequests);
  for (int i = 0; i < kRequests; ++i) pipeline->submit({{"SET", key, value}, {"STRLEN", key}}, soon(), record(told[i]));
  run_until([&] { return pipeline->in_flight() == 0; });
  for (const Told& each : told) {
    ASSERT_FALSE(each.error) << each.message;
    EXPECT_EQ(each.replies, (std::vector<std::string>{"OK", std::to_string(value.size())}));
  }
  raw({"DEL", key});
}

TEST_F(PipelineTest, ADoneThatSubmitsAgainIsServedInItsTurn) {
  const auto pipeline = start();
  const std::string key = unique_key();
  int served = 0;
  std::function<void(Pipeline::Outcome)> next = [&](Pipeline::Outcome outcome) {
    ASSERT_EQ(outcome.index(), 0u);
    ASSERT_EQ(std::get<0>(outcome)[0]->integer, served + 1);
    if (++served < 500) pipeline->submit({{"INCR", key}}, soon(), next);
  };
  pipeline->submit({{"INCR", key}}, soon(), next);
  run_until([&] { return served == 500; });
  EXPECT_EQ(raw({"GET", key}).str, "500");
  raw({"DEL", key});
}

TEST_F(PipelineTest, AServerThatNeverAnswersFailsEachRequestAtItsDeadlineWithAnUnknownOutcome) {
  SilentServer silent;
  const auto pipeline = start(silent.url(), {});
  Told first, second;
  pipeline->submit({{"SET", "k", "v"}}, Clock::now() + milliseconds(200), record(first));
  pipeline->submit({{"GET", "k"}}, soon(), record(second));
  std::optional<std::string> closed;
  pipeline->on_closed([&](const Error& why) { closed = why.what(); });
  run_until([&] { return first.times > 0 && second.times > 0 && closed; });
  EXPECT_EQ(first.error, Errc::timeout);
  EXPECT_NE(first.message.find("outcome unknown"), std::string::npos) << first.message;
  // Behind a request that got no reply, none can come: the second fails with it, at once.
  EXPECT_EQ(second.error, Errc::timeout);
  EXPECT_TRUE(pipeline->closed());
}

TEST_F(PipelineTest, AResetFailsEveryRequestInFlightAndLaterOnesFailWithoutBeingSent) {
  const auto pipeline = start();
  Told id, blocked, behind;
  pipeline->submit({{"CLIENT", "ID"}}, soon(), record(id));
  run_until([&] { return id.times > 0; });
  ASSERT_EQ(id.replies.size(), 1u);
  // BLPOP holds this connection's later replies back, server-side, until the kill.
  pipeline->submit({{"BLPOP", unique_key(), "5"}}, soon(), record(blocked));
  pipeline->submit({{"ECHO", "behind"}}, soon(), record(behind));
  std::atomic<bool> killed{false};
  std::thread killer([&] {
    // The kill needs the BLPOP to be blocking: CLIENT LIST shows it (cmd=blpop) once it is.
    for (int i = 0; i < 500 && raw({"CLIENT", "LIST", "ID", id.replies[0]}).str.find("cmd=blpop") == std::string::npos;
         ++i)
      std::this_thread::sleep_for(milliseconds(2));
    raw({"CLIENT", "KILL", "ID", id.replies[0]});
    killed = true;
  });
  run_until([&] { return blocked.times > 0 && behind.times > 0; });
  killer.join();
  EXPECT_TRUE(killed);
  EXPECT_EQ(blocked.error, Errc::io) << blocked.message;
  EXPECT_EQ(behind.error, Errc::io) << behind.message;
  EXPECT_TRUE(behind.replies.empty());
  Told later;
  pipeline->submit({{"ECHO", "after"}}, soon(), record(later));
  EXPECT_EQ(later.times, 0);  // told on the loop, not inside submit()
  run_until([&] { return later.times > 0; });
  EXPECT_EQ(later.error, Errc::io);
}

TEST_F(PipelineTest, AnIdleConnectionTheServerClosedIsFoundBeforeTheNextRequest) {
  const auto pipeline = start();
  Told id;
  pipeline->submit({{"CLIENT", "ID"}}, soon(), record(id));
  run_until([&] { return id.times > 0; });
  ASSERT_EQ(id.replies.size(), 1u);
  std::optional<Errc> closed;
  pipeline->on_closed([&](const Error& why) { closed = why.errc(); });
  EXPECT_TRUE(pipeline->usable());
  raw({"CLIENT", "KILL", "ID", id.replies[0]});
  // Idle, it waits for nothing on the loop; asked before a request, it finds the close.
  bool found = false;
  for (int i = 0; i < 1000 && !found; ++i) {
    found = !pipeline->usable();
    if (!found) std::this_thread::sleep_for(milliseconds(5));
  }
  EXPECT_TRUE(found);
  run_until([&] { return closed.has_value(); });
  EXPECT_EQ(*closed, Errc::io);
}

TEST_F(PipelineTest, AnIdlePipelineLeavesTheLoopNothingToWaitFor) {
  const auto pipeline = start();
  Told told;
  pipeline->submit({{"PING"}}, soon(), record(told));
  run_until([&] { return told.times > 0; });
  // io_context::run() returns once nothing is pending: the program's loop can end.
  runner_.io().restart();
  EXPECT_EQ(runner_.io().run_for(std::chrono::seconds(5)), 0u);
  EXPECT_TRUE(runner_.io().stopped());
}

}  // namespace
}  // namespace lockbridge::testing
