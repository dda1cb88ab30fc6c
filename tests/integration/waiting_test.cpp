// Waiting for a held lock: retry policies, release notifications and the local queue, against the
// fixture's redis-server. Assertions are about behaviour (who gets the lock, in what order, how
// many attempts), never about how long anything took; where a wait must be bounded, the bound is
// far below what the behaviour under test would need without the feature (a 60 s poll interval).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "redis_test_support.hpp"

namespace lockbridge::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

MutexOptions waiting(StrategyKind strategy, WaitMode mode, RetryPolicy retry) {
  MutexOptions options = strategy == StrategyKind::token ? token_options() : hardened_options();
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

// Waits until `waiter` has made its first attempt and is waiting (the key's GET/SET count moved).
void wait_until_waiting(Client& client, const std::function<std::uint64_t()>& attempts) {
  const auto give_up = std::chrono::steady_clock::now() + seconds(10);
  while (attempts() == 0 && std::chrono::steady_clock::now() < give_up) std::this_thread::sleep_for(milliseconds(1));
  (void)client;
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
  wait_until_waiting(waiter_client, [&] { return waiter_client.stats().round_trips - before >= 2 ? 1U : 0U; });
  EXPECT_EQ(waited.wait_for(milliseconds(200)), std::future_status::timeout) << "it must wait while the lock is held";
  holder.unlock();
  // Polling would take 60 s; the release message brings it in at once. 30 s bounds a broken test.
  ASSERT_EQ(waited.wait_for(seconds(30)), std::future_status::ready) << "the release did not wake the waiter";
  waited.get();
  EXPECT_TRUE(waiter.owns_lock());
  waiter.unlock();
}

INSTANTIATE_TEST_SUITE_P(TokenAndHardenedLegacy, NotifyWakesAWaiter,
                         ::testing::Values(StrategyKind::token, StrategyKind::legacy),
                         [](const auto& param_info) { return std::string(to_string(param_info.param)); });

}  // namespace
}  // namespace lockbridge::testing
