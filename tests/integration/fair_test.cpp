// Fair mode (WaitMode::fair) against the fixture's redis-server: waiters of different Clients
// (standing for processes) get the lock in the order they queued, a waiter that stopped asking is
// skipped, one that gives up leaves the queue, and nobody jumps it. Behaviour, not timings.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "redis_test_support.hpp"
#include "strategies/companion_keys.hpp"

namespace lockbridge::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

MutexOptions fair_options() {
  MutexOptions options = token_options();
  options.wait_mode = WaitMode::fair;
  options.local_queue = false;  // these waiters stand for other processes
  options.acquire_timeout = seconds(30);
  return options;
}

long long queue_length(const std::string& key) { return raw({"LLEN", detail::fair_queue(key)}).integer; }

TEST(FairMode, WaitersOfDifferentProcessesGetTheLockInQueueOrder) {
  constexpr int kWaiters = 4;
  const std::string key = unique_key();
  Client holder_client = test_client();
  Mutex holder(holder_client, key, fair_options());
  ASSERT_TRUE(holder.try_lock());

  std::mutex order_mutex;
  std::vector<int> order;
  std::vector<Client> clients;
  std::vector<std::unique_ptr<Mutex>> waiters;
  std::vector<std::future<void>> done;
  for (int i = 0; i < kWaiters; ++i) {
    clients.push_back(test_client());
    waiters.push_back(std::make_unique<Mutex>(clients.back(), key, fair_options()));
    done.push_back(std::async(std::launch::async, [&, i] {
      waiters[i]->lock();
      {
        std::lock_guard lock(order_mutex);
        order.push_back(i);
      }
      waiters[i]->unlock();
    }));
    // The next waiter starts only once this one is queued: the arrival order is known.
    ASSERT_TRUE(eventually([&] { return queue_length(key) == i + 1; })) << "waiter " << i << " never queued";
  }
  holder.unlock();
  for (auto& future : done) ASSERT_EQ(future.wait_for(seconds(30)), std::future_status::ready);
  for (auto& future : done) future.get();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(queue_length(key), 0);
}

TEST(FairMode, ASingleTryDoesNotJumpTheQueue) {
  const std::string key = unique_key();
  // A live waiter is queued (its deadline a minute ahead by the server's clock) and the key is
  // free: it is that waiter's turn, not a newcomer's.
  raw({"RPUSH", detail::fair_queue(key), "queued-waiter"});
  raw({"HSET", detail::fair_deadlines(key), "queued-waiter", std::to_string(server_ms() + 60000)});
  Client client = test_client();
  Mutex other(client, key, fair_options());
  EXPECT_FALSE(other.try_lock()) << "the key is free but a live waiter is first in line";
  EXPECT_TRUE(raw({"GET", key}).is_nil());
  EXPECT_EQ(queue_length(key), 1) << "a single try does not queue";
  // Once that waiter is gone (it gave up: its entry removed), the newcomer gets the lock.
  raw({"DEL", detail::fair_queue(key), detail::fair_deadlines(key)});
  EXPECT_TRUE(other.try_lock());
}

TEST(FairMode, AWaiterThatStoppedAskingIsSkipped) {
  const std::string key = unique_key();
  MutexOptions options = fair_options();
  options.fair_waiter_timeout = milliseconds(300);
  // A waiter that queued and died: its deadline (server time) will pass and nobody refreshes it.
  raw({"RPUSH", detail::fair_queue(key), "dead-waiter"});
  raw({"HSET", detail::fair_deadlines(key), "dead-waiter", std::to_string(server_ms() + 300)});
  Client client = test_client();
  Mutex live(client, key, options);
  ASSERT_TRUE(live.try_lock_for(seconds(30))) << "the dead waiter must not block the queue forever";
  EXPECT_EQ(raw({"HEXISTS", detail::fair_deadlines(key), "dead-waiter"}).integer, 0);
  EXPECT_EQ(queue_length(key), 0);
}

TEST(FairMode, AWaiterThatGivesUpLeavesTheQueue) {
  const std::string key = unique_key();
  Client client = test_client();
  Mutex holder(client, key, fair_options());
  Client waiter_client = test_client();
  Mutex waiter(waiter_client, key, fair_options());
  ASSERT_TRUE(holder.try_lock());
  EXPECT_FALSE(waiter.try_lock_for(milliseconds(300)));
  EXPECT_EQ(queue_length(key), 0) << "a waiter that gave up must not hold up the ones behind it";
  EXPECT_EQ(raw({"HLEN", detail::fair_deadlines(key)}).integer, 0);
}

TEST(FairMode, TheQueueKeysHaveATtlSoTheyGoWhenEveryWaiterIsGone) {
  const std::string key = unique_key();
  Client client = test_client();
  Mutex holder(client, key, fair_options());
  Client waiter_client = test_client();
  Mutex waiter(waiter_client, key, fair_options());
  ASSERT_TRUE(holder.try_lock());
  auto waited = std::async(std::launch::async, [&] { return waiter.try_lock_for(seconds(30)); });
  ASSERT_TRUE(eventually([&] { return queue_length(key) == 1; }));
  EXPECT_GT(raw({"PTTL", detail::fair_queue(key)}).integer, 0);
  EXPECT_GT(raw({"PTTL", detail::fair_deadlines(key)}).integer, 0);
  holder.unlock();
  ASSERT_TRUE(waited.get());
}

TEST(FairMode, NeedsTheTokenStrategy) {
  Client client = test_client();
  MutexOptions options = hardened_options();
  options.wait_mode = WaitMode::fair;
  EXPECT_EQ(expect_error([&] { Mutex(client, unique_key(), options); }).errc(), Errc::bad_option);
}

}  // namespace
}  // namespace lockbridge::testing
