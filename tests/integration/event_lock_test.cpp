// The lock core driven by events (LockCore::acquire_on, EventWait, PipelineRoutes) on an Asio
// io_context, against the fixture's real server: the same waiting loop, strategy and release path
// as the blocking Mutex, with no thread per waiter. A release by a blocking holder wakes the
// event-driven waiter; a stop request ends its wait at once and it leaves the queue; a server
// that is down fails the acquire instead of leaving it waiting.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <utility>

#include "core/lock_core.hpp"
#include "core/pipeline_routes.hpp"
#include "core/single_key_target.hpp"
#include "loop_runner.hpp"
#include "redis_test_support.hpp"
#include "strategies/companion_keys.hpp"

namespace lockbridge::testing {
namespace {

using detail::LockCore;
using detail::Task;
using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

class EventLock : public ::testing::Test {
 protected:
  // Event-driven locks do not wait in the process-local line. A retry interval far beyond the
  // tests' bounds: a waiter that acquires in time was woken by the release's announcement.
  static MutexOptions event_options() {
    MutexOptions options = token_options();
    options.local_queue = false;
    options.wait_mode = WaitMode::notify;
    options.retry = RetryPolicy::fixed_retries(3, seconds(60));
    options.validate();
    return options;
  }
  std::unique_ptr<LockCore> core_for(const Client& client, const std::string& key, MutexOptions options) {
    routes_ = detail::PipelineRoutes::make(client.state(), runner_.loop());
    auto target = std::make_unique<detail::SingleKeyTarget>(client.state(), key, options, routes_);
    return std::make_unique<LockCore>(client.state(), std::move(target), std::move(options), "event-driven lock");
  }
  template <class Done>
  bool run_until(Done&& done) {
    return runner_.run_until(std::forward<Done>(done));
  }
  template <class T>
  T finish(Task<T> task) {
    return runner_.finish(std::move(task));
  }
  const std::shared_ptr<AsioEventLoop>& loop() const { return runner_.loop(); }

  LoopRunner runner_;
  std::shared_ptr<detail::PipelineRoutes> routes_;
};

TEST_F(EventLock, AcquiresAndReleasesOverThePipeline) {
  const Client client = test_client();
  const std::string key = unique_key();
  const auto core = core_for(client, key, event_options());
  EXPECT_TRUE(finish(core->acquire_on(loop(), Clock::now() + seconds(5), {})));
  EXPECT_TRUE(core->holds());
  EXPECT_EQ(raw({"GET", key}).str, core->value());
  finish(core->release_task());
  EXPECT_FALSE(core->holds());
  EXPECT_EQ(raw({"EXISTS", key}).integer, 0);
}

TEST_F(EventLock, ABlockingHoldersReleaseWakesTheEventDrivenWaiter) {
  const Client client = test_client();
  const std::string key = unique_key();
  Mutex holder(test_client(), key, token_options());
  ASSERT_TRUE(holder.try_lock());
  const auto core = core_for(client, key, event_options());
  Task<bool> waiting = core->acquire_on(loop(), Clock::now() + seconds(30), {});
  bool done = false;
  waiting.then([&] { done = true; });
  // Once the waiter has queued (and so subscribed, first), the holder lets go from another thread.
  ASSERT_TRUE(run_until([&] { return raw({"LLEN", detail::waiter_queue(key)}).integer == 1; }));
  std::thread releaser([&] { holder.unlock(); });
  const bool ended = run_until([&] { return done; });
  releaser.join();
  ASSERT_TRUE(ended) << "not woken: the retry policy would only try again after 60 s";
  EXPECT_TRUE(waiting.result());
  EXPECT_EQ(raw({"GET", key}).str, core->value());
  finish(core->release_task());
}

TEST_F(EventLock, AStopRequestEndsAWaitAtOnceAndTheWaiterLeavesTheQueue) {
  const Client client = test_client();
  const std::string key = unique_key();
  Mutex holder(test_client(), key, token_options());
  ASSERT_TRUE(holder.try_lock());
  const auto core = core_for(client, key, event_options());
  std::stop_source stop;
  Task<bool> waiting = core->acquire_on(loop(), Clock::now() + seconds(30), stop.get_token());
  bool done = false;
  waiting.then([&] { done = true; });
  ASSERT_TRUE(run_until([&] { return raw({"LLEN", detail::waiter_queue(key)}).integer == 1; }));
  stop.request_stop();
  ASSERT_TRUE(run_until([&] { return done; })) << "the stop request did not end the wait";
  EXPECT_FALSE(waiting.result());
  EXPECT_FALSE(core->holds());
  // It leaves the queue by itself, on the loop.
  EXPECT_TRUE(run_until([&] { return raw({"LLEN", detail::waiter_queue(key)}).integer == 0; }));
  EXPECT_EQ(raw({"GET", key}).str, holder.value());  // the holder's lock is untouched
  holder.unlock();
}

TEST_F(EventLock, AServerThatIsDownFailsTheAcquireInsteadOfLeavingItWaiting) {
  const Client client("redis://127.0.0.1:1");
  const auto core = core_for(client, "down", event_options());
  try {
    (void)finish(core->acquire_on(loop(), Clock::now() + seconds(30), {}));
    FAIL() << "acquired on a server that is down";
  } catch (const Error& error) {
    EXPECT_EQ(error.errc(), Errc::io) << error.what();
    EXPECT_NE(std::string(error.what()).find("down"), std::string::npos) << error.what();  // names the key
  }
}

}  // namespace
}  // namespace lockbridge::testing
