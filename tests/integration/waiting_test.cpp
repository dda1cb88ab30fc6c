// Waiting for a held lock: retry policies, release notifications and the local queue, against the
// fixture's redis-server. Assertions are about behaviour (who gets the lock, in what order, how
// many attempts), never about how long anything took; where a wait must be bounded, the bound is
// far below what the behaviour under test would need without the feature (a 60 s poll interval).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <mutex>
#include <stop_token>
#include <thread>
#include <vector>

#include "lockbridge/lock_keys.hpp"
#include "redis_test_support.hpp"

namespace lockbridge::testing {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::seconds;

MutexOptions waiting(StrategyKind strategy, WaitMode mode, RetryPolicy retry) {
  MutexOptions options = strategy == StrategyKind::legacy ? hardened_options() : token_options();
  options.strategy = strategy;
  options.wait_mode = mode;
  options.retry = retry;
  options.local_queue = false;  // these waiters stand for other processes
  options.acquire_timeout = seconds(50);
  return options;
}

// Runs lock() of `waiter` on another thread; the future is ready once it returns.
std::future<void> lock_in_background(Mutex& waiter) {
  return std::async(std::launch::async, [&waiter] { waiter.lock(); });
}

class NotifyWakesAWaiter : public ::testing::TestWithParam<StrategyKind> {};

TEST_P(NotifyWakesAWaiter, WithASixtySecondPollIntervalRightAfterTheRelease) {
  const std::string key = unique_key();
  Client holder_client = test_client();
  Client waiter_client = test_client();
  Mutex holder(holder_client, key, waiting(GetParam(), WaitMode::notify, RetryPolicy::fixed_retries(5, seconds(60))));
  Mutex waiter(waiter_client, key, waiting(GetParam(), WaitMode::notify, RetryPolicy::fixed_retries(5, seconds(60))));
  ASSERT_TRUE(holder.try_lock());
  const auto before = waiter_client.stats().round_trips;
  auto waited = lock_in_background(waiter);
  // The waiter has failed once and subscribed: two requests of its own at least.
  EXPECT_TRUE(eventually([&] { return waiter_client.stats().round_trips - before >= 2; }));
  EXPECT_EQ(waited.wait_for(milliseconds(200)), std::future_status::timeout) << "it must wait while the lock is held";
  holder.unlock();
  // Polling would take 60 s; the release message brings it in at once. 30 s bounds a broken test.
  ASSERT_EQ(waited.wait_for(seconds(30)), std::future_status::ready) << "the release did not wake the waiter";
  waited.get();
  EXPECT_TRUE(waiter.owns_lock());
  waiter.unlock();
}

INSTANTIATE_TEST_SUITE_P(TokenAndHardenedLegacy, NotifyWakesAWaiter,
                         ::testing::Values(StrategyKind::token, StrategyKind::legacy, StrategyKind::redisson),
                         [](const auto& param_info) { return std::string(to_string(param_info.param)); });

// A stop request ends a wait at once, whatever it sleeps on: the local line (a holder in this
// process), Redis's notify or fair queue (which the waiter then leaves), or a plain poll. The
// holder keeps the lock for a minute and the retry interval is a minute: only the stop can end it.
TEST(Waiting, AStopRequestEndsAWaitAtOnceAndTheWaiterLeavesItsQueue) {
  for (const WaitMode mode : {WaitMode::notify, WaitMode::fair, WaitMode::poll}) {
    for (const bool local_line : {false, true}) {
      SCOPED_TRACE(std::string(to_string(mode)) + (local_line ? ", the holder in the local line" : ""));
      const std::string key = unique_key();
      MutexOptions options = token_options();
      options.wait_mode = mode;
      options.lease = std::chrono::minutes(1);
      options.retry = RetryPolicy::jedis_lock_resolution(std::chrono::minutes(1));
      options.local_queue = local_line;
      const Client client = test_client();
      Mutex holder(local_line ? client : test_client(), key, options);
      ASSERT_TRUE(holder.try_lock());
      Mutex waiter(client, key, options);
      std::stop_source stop;
      auto waited = std::async(std::launch::async,
                               [&] { return waiter.try_lock_for(std::chrono::minutes(10), stop.get_token()); });
      // Waiting: queued in Redis (seen there), or asleep in the local line or between polls (given
      // time to fall asleep; the stop ends the wait wherever it is, before or after).
      const LockKeyNames names = lock_key_names(key);
      if (mode != WaitMode::poll && !local_line) {
        ASSERT_TRUE(eventually([&] {
          return raw({"LLEN", names.waiter_queue}).integer + raw({"LLEN", names.fair_queue}).integer == 1;
        }));
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
      }
      stop.request_stop();
      ASSERT_EQ(waited.wait_for(std::chrono::seconds(10)), std::future_status::ready) << "the stop ended the wait";
      EXPECT_FALSE(waited.get());
      EXPECT_FALSE(waiter.owns_lock());
      EXPECT_TRUE(eventually([&] {
        return raw({"LLEN", names.waiter_queue}).integer == 0 && raw({"LLEN", names.fair_queue}).integer == 0;
      })) << "the waiter left its queue";
      holder.unlock();
    }
  }
  // A stop requested before the call still makes the one attempt: a free lock is taken.
  const std::string key = unique_key();
  Mutex mutex(test_client(), key, token_options());
  std::stop_source stopped;
  stopped.request_stop();
  EXPECT_TRUE(mutex.try_lock_for(std::chrono::minutes(1), stopped.get_token()));
  mutex.unlock();
}

TEST(Waiting, AFaithfulHoldersSilentReleaseIsFoundByTheFallbackPolling) {
  const std::string key = unique_key();
  Client client = test_client();
  Mutex holder(client, key, faithful_options());  // DEL only: announces nothing
  Mutex waiter(client, key,
               waiting(StrategyKind::legacy, WaitMode::notify,
                       RetryPolicy::backoff_with_jitter(milliseconds(1), milliseconds(20))));
  ASSERT_TRUE(holder.try_lock());
  auto waited = lock_in_background(waiter);
  EXPECT_EQ(waited.wait_for(milliseconds(100)), std::future_status::timeout);
  holder.unlock();
  ASSERT_EQ(waited.wait_for(seconds(30)), std::future_status::ready);
  waited.get();
  EXPECT_TRUE(waiter.owns_lock());
}

TEST(Waiting, BackoffNeverSleepsPastTheHoldersLease) {
  // The holder vanishes without releasing; its 300 ms lease ends. With a 60 s backoff bound the
  // waiter would sleep far past that if it did not cap each sleep at the lease's end.
  const std::string key = unique_key();
  Client client = test_client();
  MutexOptions short_lease = token_options();
  short_lease.lease = milliseconds(300);
  Mutex crashed(client, key, short_lease);
  ASSERT_TRUE(crashed.try_lock());
  Mutex waiter(
      client, key,
      waiting(StrategyKind::token, WaitMode::poll, RetryPolicy::backoff_with_jitter(hours(24 * 365), hours(24 * 365))));
  EXPECT_TRUE(waiter.try_lock_for(seconds(30)));
  waiter.unlock();
}

TEST(Waiting, FixedRetriesMakeExactlyOnePlusRetriesAttempts) {
  const std::string key = unique_key();
  Client holder_client = test_client();
  Mutex holder(holder_client, key, token_options());
  ASSERT_TRUE(holder.try_lock());
  Client waiter_client = test_client();
  waiter_client.ping();  // connect first: the count below is attempts only
  Mutex waiter(waiter_client, key,
               waiting(StrategyKind::token, WaitMode::poll, RetryPolicy::fixed_retries(3, milliseconds(1))));
  const auto before = waiter_client.stats().round_trips;
  EXPECT_FALSE(waiter.try_lock_for(seconds(30)));
  EXPECT_EQ(waiter_client.stats().round_trips - before, 4U) << "RedisLocker style: 1 + RetryCount attempts";
}

TEST(Waiting, JedisLockResolutionSpendsTheTimeoutInSteps) {
  const std::string key = unique_key();
  Client holder_client = test_client();
  Mutex holder(holder_client, key, token_options());
  ASSERT_TRUE(holder.try_lock());
  Client waiter_client = test_client();
  waiter_client.ping();
  Mutex waiter(waiter_client, key,
               waiting(StrategyKind::token, WaitMode::poll, RetryPolicy::jedis_lock_resolution(milliseconds(10))));
  const auto before = waiter_client.stats().round_trips;
  // 39 ms: 39 / 10 + 1 = 4 attempts, and still 4 if the schedule starts up to 9 ms after the
  // deadline was set (a sanitized run's stall), where 35 ms allowed 5.
  EXPECT_FALSE(waiter.try_lock_for(milliseconds(39)));
  EXPECT_EQ(waiter_client.stats().round_trips - before, 4U) << "jedis-lock: timeout / resolution + 1 attempts";
}

TEST(Waiting, TheSubscriptionLastsWhileSomeoneWaitsAndIsDroppedAfter) {
  const std::string key = unique_key();
  Client client = test_client();
  Mutex holder(client, key, token_options());
  Mutex waiter(client, key, waiting(StrategyKind::token, WaitMode::notify, RetryPolicy::fixed_retries(5, seconds(60))));
  ASSERT_TRUE(holder.try_lock());
  auto waited = lock_in_background(waiter);
  EXPECT_TRUE(eventually([&] { return release_subscribers(key) == 1; })) << "one subscriber connection per Client";
  holder.unlock();
  ASSERT_EQ(waited.wait_for(seconds(30)), std::future_status::ready);
  waited.get();
  waiter.unlock();
  EXPECT_TRUE(eventually([&] { return release_subscribers(key) == 0; })) << "dropped once the last waiter left";
}

TEST(Waiting, ThreadsOfOneProcessQueueLocallyAndDoNotStormRedis) {
  // Eight threads, each with its own Client (as separate components of one service would have),
  // take the same lock 25 times each. Only the first in the local line contends in Redis, and a
  // local release wakes it directly: about one acquire and one release per acquisition.
  const std::string key = unique_key();
  constexpr int kThreads = 8;
  constexpr int kRounds = 25;
  std::vector<Client> clients;
  for (int i = 0; i < kThreads; ++i) clients.push_back(test_client());
  for (auto& client : clients) client.ping();
  std::uint64_t before = 0;
  for (auto& client : clients) before += client.stats().round_trips;
  std::atomic<int> inside{0};
  std::atomic<int> overlaps{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      MutexOptions options = token_options();
      options.wait_mode = WaitMode::notify;
      Mutex mutex(clients[i], key, options);
      for (int round = 0; round < kRounds; ++round) {
        std::lock_guard guard(mutex);
        if (inside.fetch_add(1) != 0) overlaps.fetch_add(1);
        std::this_thread::yield();
        inside.fetch_sub(1);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  std::uint64_t after = 0;
  for (auto& client : clients) after += client.stats().round_trips;
  EXPECT_EQ(overlaps.load(), 0);
  const double per_acquisition = static_cast<double>(after - before) / (kThreads * kRounds);
  EXPECT_LE(per_acquisition, 2.5) << "round trips per acquisition";
}

TEST(Waiting, ALocalWaiterContendsAsSoonAsTheWatchdogFindsTheHoldersLeaseLost) {
  // The holder's key vanishes behind its back (an operator's DEL). The first thread in the local
  // line was told the lock is held until the end of a 15 s lease; the watchdog's first renewal
  // (at most a third of the lease in) finds the loss, and that ends the hold in the line too, so
  // the waiter contends then, not when the lease would have ended.
  const std::string key = unique_key();
  const Client client = test_client();
  MutexOptions options = token_options();
  options.lease = seconds(15);
  options.watchdog.enabled = true;
  options.acquire_timeout = seconds(60);
  Mutex holder(client, key, options);
  ASSERT_TRUE(holder.try_lock());
  const auto lease_would_end = std::chrono::steady_clock::now() + options.lease;
  std::stop_token lost = holder.lease_token();
  Mutex waiter(client, key, options);
  std::future<void> waited = lock_in_background(waiter);
  raw({"DEL", key});
  waited.get();
  EXPECT_LT(std::chrono::steady_clock::now(), lease_would_end - seconds(5))
      << "the waiter waited for the lost lease's end";
  EXPECT_TRUE(lost.stop_requested());
  EXPECT_FALSE(holder.owns_lock());
  EXPECT_EQ(raw({"GET", key}).str, waiter.value());
}

}  // namespace
}  // namespace lockbridge::testing
