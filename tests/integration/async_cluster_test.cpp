// The async front (lockbridge/asio.hpp) on a redis-cluster:// Client, against a real 3-master
// Redis Cluster started here on loopback: each lock lives on the master of its key's slot, every
// operation to one master goes on the one pipeline the client keeps to it, a release wakes an async
// waiter through the slot's master, and a slot moved to another master (MOVED), or moving while
// coroutines lock a key in it (ASK, TRYAGAIN), is followed with no overlap and no error.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <asio/co_spawn.hpp>
#include <asio/executor_work_guard.hpp>
#include <asio/experimental/as_tuple.hpp>
#include <asio/io_context.hpp>
#include <asio/post.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "lockbridge/asio.hpp"
#include "lockbridge/latch.hpp"
#include "lockbridge/semaphore.hpp"
#include "loop_runner.hpp"
#include "redis_test_support.hpp"
#include "strategies/companion_keys.hpp"
#include "strategies/redisson.hpp"
#include "topology.hpp"

namespace lockbridge::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class AsyncCluster : public ::testing::Test {
 protected:
  // Runs `body` as a coroutine on the loop until it ends (bounded); rethrows what it threw.
  void run(std::function<asio::awaitable<void>()> body) {
    std::exception_ptr failure;
    bool done = false;
    asio::co_spawn(runner_.io(), std::move(body), [&](std::exception_ptr error) {
      failure = error;
      done = true;
    });
    ASSERT_TRUE(runner_.run_until([&] { return done; })) << "the coroutine did not end within the bound";
    if (failure) std::rethrow_exception(failure);
  }

  ClusterTopology cluster_{3};
  LoopRunner runner_;  // after the topology: its drain runs while the servers are still up
};

TEST_F(AsyncCluster, EachLockLivesOnTheMasterOfItsSlotOnOnePipelinePerMaster) {
  AsyncClient client(runner_.io().get_executor(), Client(cluster_.url(), topology_client()));
  std::set<int> owners;
  for (int i = 0; owners.size() < 3 && i < 60; ++i) {  // sixty random keys miss a master one run in 1e10
    const std::string key = unique_key(std::to_string(i));
    const int owner = cluster_.owner_of_slot(cluster_.slot_of(key));
    owners.insert(owner);
    AsyncMutex mutex(client, key, one_attempt_options());
    run([&]() -> asio::awaitable<void> {
      const bool acquired = co_await mutex.async_try_lock(asio::use_awaitable);
      EXPECT_TRUE(acquired) << key;
      EXPECT_EQ(cluster_.nodes[owner]->command({"GET", key}), mutex.value());
      EXPECT_TRUE(co_await mutex.async_extend(seconds(30), asio::use_awaitable));
      EXPECT_GT(std::stoll(cluster_.nodes[owner]->command({"PTTL", key})), 10000);
      co_await mutex.async_unlock(asio::use_awaitable);
    });
    EXPECT_EQ(cluster_.nodes[owner]->command({"EXISTS", key}), "0");
  }
  ASSERT_EQ(owners.size(), 3U) << "sixty random keys should have reached every master";
  // The map was read on a connection of its own, closed after; what stays is one pipeline per master.
  for (const auto& node : cluster_.nodes) {
    EXPECT_TRUE(eventually([&] { return connections_on_port(*node, node->client_port()) == 1; }))
        << node->address() << " has " << connections_on_port(*node, node->client_port()) << " client connections";
  }
}

TEST_F(AsyncCluster, AnAsyncLockFollowsItsSlotToANewMaster) {
  AsyncClient client(runner_.io().get_executor(), Client(cluster_.url(), topology_client()));
  const std::string key = unique_key();
  const int slot = cluster_.slot_of(key);
  AsyncMutex mutex(client, key, one_attempt_options());
  const auto cycle = [&](int owner) {
    run([&]() -> asio::awaitable<void> {
      EXPECT_TRUE(co_await mutex.async_try_lock(asio::use_awaitable));
      EXPECT_EQ(cluster_.nodes[owner]->command({"GET", key}), mutex.value());
      co_await mutex.async_unlock(asio::use_awaitable);
    });
  };
  cycle(cluster_.owner_of_slot(slot));  // the client has read the map, and has a pipeline there
  const int next = (cluster_.owner_of_slot(slot) + 1) % 3;
  cluster_.move_slot(slot, next);
  cycle(next);  // the former master answers MOVED; the client follows it
  EXPECT_EQ(cluster_.nodes[next]->command({"EXISTS", key}), "0");
}

// Redisson's latch and semaphore through the async front: their keys on the slot's master, and
// their waiters woken by SSUBSCRIBE there when the blocking front counts down or gives back.
TEST_F(AsyncCluster, ALatchAndASemaphoreWaitOnTheirSlotsMasterAndWakeOnItsShardMessages) {
  AsyncClient client(runner_.io().get_executor(), Client(cluster_.url(), topology_client()));
  const Client blocking(cluster_.url(), topology_client());
  LatchOptions latch_options;
  latch_options.recheck = std::chrono::minutes(1);
  SemaphoreOptions semaphore_options;
  semaphore_options.recheck = std::chrono::minutes(1);
  const std::string key = unique_key();
  ServerProcess& owner = *cluster_.nodes[cluster_.owner_of_slot(cluster_.slot_of(key))];

  AsyncLatch latch(client, key, latch_options);
  std::optional<std::error_code> opened;
  run([&]() -> asio::awaitable<void> { EXPECT_TRUE(co_await latch.async_try_set_count(1, asio::use_awaitable)); });
  EXPECT_EQ(owner.command({"GET", key}), "1");
  latch.async_wait([&](std::error_code error) { opened = error; });
  ASSERT_TRUE(runner_.run_until([&] { return has_one_shard_subscriber(owner, Latch::channel_name(key)); }));
  Latch(blocking, key).count_down();
  ASSERT_TRUE(runner_.run_until([&] { return opened.has_value(); })) << "the count-down did not wake the waiter";
  EXPECT_FALSE(*opened);

  const std::string pool = unique_key("pool");
  ServerProcess& pool_owner = *cluster_.nodes[cluster_.owner_of_slot(cluster_.slot_of(pool))];
  AsyncSemaphore slots(client, pool, semaphore_options);
  std::optional<std::pair<std::error_code, bool>> taken;
  slots.async_try_acquire_for(std::chrono::minutes(5), 1,
                              [&](std::error_code error, bool won) { taken.emplace(error, won); });
  ASSERT_TRUE(runner_.run_until([&] { return has_one_shard_subscriber(pool_owner, Semaphore::channel_name(pool)); }));
  Semaphore(blocking, pool).release();
  ASSERT_TRUE(runner_.run_until([&] { return taken.has_value(); })) << "the release did not wake the waiter";
  EXPECT_EQ(*taken, std::make_pair(std::error_code(), true));
  EXPECT_EQ(pool_owner.command({"GET", pool}), "0");
}

class AsyncClusterNotify : public ::testing::TestWithParam<StrategyKind> {};

TEST_P(AsyncClusterNotify, AReleaseWakesAnAsyncWaiterThroughTheSlotsMaster) {
  ClusterTopology cluster(3);
  LoopRunner runner;
  const std::string key = unique_key();
  const MutexOptions options = minute_poll_waiter(one_attempt_options(GetParam()));
  Mutex holder(Client(cluster.url(), topology_client()), key, options);
  ASSERT_TRUE(holder.try_lock());
  AsyncClient client(runner.io().get_executor(), Client(cluster.url(), topology_client()));
  AsyncMutex waiter(client, key, options);
  std::optional<std::error_code> locked;
  waiter.async_lock([&](std::error_code error) { locked = error; });
  ServerProcess& owner = *cluster.nodes[cluster.owner_of_slot(cluster.slot_of(key))];
  const std::string channel = GetParam() == StrategyKind::redisson ? detail::RedissonStrategy::channel_name(key)
                                                                   : detail::release_channel(key);
  ASSERT_TRUE(runner.run_until([&] { return has_one_shard_subscriber(owner, channel); }))
      << "the waiter did not subscribe on the slot's master";
  EXPECT_FALSE(locked.has_value());
  holder.unlock();
  ASSERT_TRUE(runner.run_until([&] { return locked.has_value(); })) << "the release did not wake the waiter";
  EXPECT_FALSE(*locked) << locked->message();
  EXPECT_TRUE(waiter.owns_lock());
}

INSTANTIATE_TEST_SUITE_P(Strategies, AsyncClusterNotify,
                         ::testing::Values(StrategyKind::token, StrategyKind::legacy, StrategyKind::redisson),
                         [](const auto& param_info) { return std::string(to_string(param_info.param)); });

// Coroutines of two async clients (two pipelines to each master, as two processes would have)
// lock and unlock one key, on an io_context run by a thread of its own, while the test moves the
// key's slot away and back.
class AsyncLockers {
 public:
  AsyncLockers(const std::string& url, const std::string& key, const MutexOptions& options) {
    for (int c = 0; c < 2; ++c) clients_.push_back(std::make_unique<AsyncClient>(io_.get_executor(), Client(url, topology_client())));
    for (int i = 0; i < 4; ++i) {
      auto mutex = std::make_unique<AsyncMutex>(*clients_[i % 2], key, options);
      asio::co_spawn(io_, cycle(*mutex), [this](std::exception_ptr) { ++ended_; });
      mutexes_.push_back(std::move(mutex));
    }
    thread_ = std::thread([this] { io_.run(); });
  }
  ~AsyncLockers() { stop(); }
  void stop() {
    if (!thread_.joinable()) return;
    stop_ = true;
    (void)eventually([&] { return ended_.load() == 4; });
    asio::post(io_, [this] {
      mutexes_.clear();  // released in the background, on the loop
      clients_.clear();
      guard_.reset();
    });
    thread_.join();
  }
  bool make_progress(int more) const {
    const int wanted = acquisitions_.load() + more;
    return eventually([&] { return acquisitions_.load() >= wanted; });
  }
  int overlaps() const { return overlaps_.load(); }
  int acquisitions() const { return acquisitions_.load(); }
  // Read once stopped.
  const std::map<std::string, int>& errors() const { return errors_; }
  const std::string& last_error() const { return last_error_; }
  bool stopped() const { return !thread_.joinable(); }

 private:
  asio::awaitable<void> cycle(AsyncMutex& mutex) {
    asio::steady_timer pause(io_);
    while (!stop_.load()) {
      auto [error, acquired] = co_await mutex.async_try_lock_for(seconds(5), asio::experimental::as_tuple(asio::use_awaitable));
      if (!error && acquired) {
        if (inside_++ != 0) ++overlaps_;
        pause.expires_after(milliseconds(1));
        co_await pause.async_wait(asio::use_awaitable);
        --inside_;
        std::tie(error) = co_await mutex.async_unlock(asio::experimental::as_tuple(asio::use_awaitable));
        ++acquisitions_;
      }
      if (error) {
        ++errors_[error.message()];
        last_error_ = error.message();
        pause.expires_after(milliseconds(20));
        co_await pause.async_wait(asio::use_awaitable);
      }
    }
  }

  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> guard_{io_.get_executor()};
  std::vector<std::unique_ptr<AsyncClient>> clients_;
  std::vector<std::unique_ptr<AsyncMutex>> mutexes_;
  std::atomic<bool> stop_{false};
  std::atomic<int> ended_{0};
  int inside_ = 0;  // on the loop's thread only
  std::atomic<int> overlaps_{0};
  std::atomic<int> acquisitions_{0};
  std::map<std::string, int> errors_;  // on the loop's thread until stopped
  std::string last_error_;
  std::thread thread_;
};

// For assertion messages: the acquisitions so far and, once stopped, the errors seen.
std::ostream& operator<<(std::ostream& out, const AsyncLockers& lockers) {
  out << lockers.acquisitions() << " acquisitions";
  if (lockers.stopped()) out << ", errors " << ::testing::PrintToString(lockers.errors()) << ", last: " << lockers.last_error();
  return out;
}

class AsyncClusterReshard : public ::testing::TestWithParam<const char*> {};

TEST_P(AsyncClusterReshard, CoroutinesLockingAKeyInAMovingSlotSeeNoOverlapAndNoError) {
  lock_through_a_reshard(GetParam(), [](const std::string& url, const std::string& key, const MutexOptions& options) {
    return std::make_unique<AsyncLockers>(url, key, options);
  });
}

INSTANTIATE_TEST_SUITE_P(Strategies, AsyncClusterReshard,
                         ::testing::Values("token", "legacy_hardened", "legacy_faithful", "redisson"), kVariantName);

}  // namespace
}  // namespace lockbridge::testing
