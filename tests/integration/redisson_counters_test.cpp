// Latch and Semaphore are Redisson's RCountDownLatch and RSemaphore, checked against the
// fixture's redis-server and a Java peer played by Redisson 4.7.0's own scripts
// (redisson_peer.hpp): one count and one pool of permits for both sides, each side's changes
// waking the other's waiters. The C++ waiters re-read only once a minute, so a wake-up that did
// not come fails the test.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "contenders.hpp"
#include "lockbridge/latch.hpp"
#include "lockbridge/semaphore.hpp"
#include "redis_test_support.hpp"
#include "redisson_peer.hpp"
#include "topology.hpp"

namespace lockbridge::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr LatchOptions kMessageOnlyLatch{.recheck = std::chrono::minutes(1)};
constexpr SemaphoreOptions kMessageOnlySemaphore{.acquire_timeout = seconds(50), .recheck = std::chrono::minutes(1)};

std::int64_t subscribers_of(const std::string& channel) {
  const Reply counted = raw({"PUBSUB", "NUMSUB", channel});
  return counted.elements.size() == 2 ? counted.elements[1].integer : 0;
}

bool ends_true(std::future<bool>& waited) {
  return waited.wait_for(seconds(30)) == std::future_status::ready && waited.get();
}

// ---- Latch -------------------------------------------------------------------------------------

TEST(RedissonLatch, ReachingZeroWakesEveryWaiterOfEveryProcess) {
  const std::string key = unique_key();
  ASSERT_EQ(raw(redisson_latch_try_set_count_command(key, 2)).integer, 1);
  // Three C++ processes (a Client each: its own subscriber connection) and a Java one.
  std::vector<Client> clients{test_client(), test_client(), test_client()};
  std::vector<std::future<bool>> waits;
  for (Client& client : clients) {
    waits.push_back(std::async(std::launch::async, [&client, key] { return Latch(client, key, kMessageOnlyLatch).wait(); }));
  }
  PeerSubscriber java_waiter(test_dir() + "/redis.sock", "SUBSCRIBE", redisson_latch_channel(key));
  ASSERT_TRUE(java_waiter.subscribed());
  ASSERT_TRUE(eventually([&] { return subscribers_of(redisson_latch_channel(key)) == 4; }));
  Latch latch(test_client(), key);
  latch.count_down();
  EXPECT_EQ(latch.count(), 1);
  EXPECT_FALSE(latch.try_wait());
  raw(redisson_latch_count_down_command(key));  // Java's count-down opens it
  for (auto& wait : waits) EXPECT_TRUE(ends_true(wait)) << "a C++ waiter was not woken";
  EXPECT_EQ(java_waiter.next_message(), "0");
  EXPECT_EQ(raw({"EXISTS", key}).integer, 0);
  EXPECT_TRUE(latch.try_wait());
}

// Four waiting processes and a Java subscriber; Java counts down first, then our count-down opens
// the latch: every process passes, none before it opened, and Java hears the one opening message.
TEST(RedissonLatch, WaitersInSeparateProcessesPassOnlyOnceItOpens) {
  const std::string key = unique_key();
  const std::string opening = key + ":opening";
  ASSERT_EQ(raw(redisson_latch_try_set_count_command(key, 2)).integer, 1);
  PeerSubscriber java_waiter(test_dir() + "/redis.sock", "SUBSCRIBE", redisson_latch_channel(key));
  ASSERT_TRUE(java_waiter.subscribed());
  Contenders waiters(std::vector<std::string>(4, contender_command("latch", "-", key, opening, 1)));
  ASSERT_TRUE(eventually([&] { return subscribers_of(redisson_latch_channel(key)) == 5; }));
  raw(redisson_latch_count_down_command(key));
  Latch latch(test_client(), key);
  EXPECT_EQ(latch.count(), 1);
  EXPECT_EQ(subscribers_of(redisson_latch_channel(key)), 5) << "a waiter left a closed latch";
  raw({"SET", opening, "1"});
  latch.count_down();
  const ContenderTotals totals = waiters.finish();
  EXPECT_EQ(totals.failed_processes, 0);
  EXPECT_EQ(totals.acquisitions, 4) << "every process passed";
  EXPECT_EQ(totals.violations, 0) << "a process passed before the latch opened";
  EXPECT_EQ(totals.errors, 0) << "a process was not woken";
  EXPECT_EQ(java_waiter.next_message(), "0") << "the opening was not announced once, as Java announces it";
  EXPECT_EQ(raw({"EXISTS", key}).integer, 0);
}

TEST(RedissonLatch, OurCountDownWakesAJavaWaiterAndOurSetCountClosesForIt) {
  const std::string key = unique_key();
  PeerSubscriber java_waiter(test_dir() + "/redis.sock", "SUBSCRIBE", redisson_latch_channel(key));
  ASSERT_TRUE(java_waiter.subscribed());
  Latch latch(test_client(), key);
  ASSERT_TRUE(latch.try_set_count(1));
  EXPECT_EQ(java_waiter.next_message(), "1") << "a new count is announced as Redisson's NEW_COUNT";
  EXPECT_FALSE(latch.try_set_count(5)) << "set only while open";
  EXPECT_EQ(raw(redisson_latch_try_set_count_command(key, 5)).integer, 0);
  EXPECT_EQ(latch.count(), 1);
  latch.count_down();
  EXPECT_EQ(java_waiter.next_message(), "0");
  EXPECT_EQ(raw({"EXISTS", key}).integer, 0);
  latch.count_down();  // an open latch stays open
  EXPECT_EQ(raw({"EXISTS", key}).integer, 0);
  EXPECT_EQ(latch.count(), 0);
}

TEST(RedissonLatch, AWaitEndsAtItsDeadlineOrStopWithTheLatchClosed) {
  const std::string key = unique_key();
  Latch latch(test_client(), key, kMessageOnlyLatch);
  ASSERT_TRUE(latch.try_set_count(1));
  EXPECT_FALSE(latch.try_wait_for(milliseconds(50)));
  std::stop_source stop;
  auto waited = std::async(std::launch::async, [&] { return latch.wait(stop.get_token()); });
  ASSERT_TRUE(eventually([&] { return subscribers_of(redisson_latch_channel(key)) == 1; }));
  stop.request_stop();
  ASSERT_EQ(waited.wait_for(seconds(10)), std::future_status::ready);
  EXPECT_FALSE(waited.get());
  EXPECT_EQ(latch.count(), 1);
}

TEST(RedissonLatch, ValuesThatAreNoCountAreRefusedAndLeftAlone) {
  const std::string key = unique_key();
  Latch latch(test_client(), key);
  raw({"SET", key, "three"});
  EXPECT_EQ(expect_error([&] { latch.count_down(); }).errc(), Errc::bad_value);
  EXPECT_EQ(expect_error([&] { (void)latch.count(); }).errc(), Errc::bad_value);
  EXPECT_EQ(raw({"GET", key}).str, "three");
  raw({"DEL", key});
  raw({"HSET", key, "f", "1"});
  EXPECT_EQ(expect_error([&] { latch.count_down(); }).errc(), Errc::wrong_type);
  EXPECT_EQ(raw({"HGET", key, "f"}).str, "1");
  EXPECT_EQ(expect_error([&] { (void)latch.try_set_count(0); }).errc(), Errc::bad_option);
  EXPECT_EQ(expect_error([&] { Latch(test_client(), ""); }).errc(), Errc::bad_option);
}

// ---- Semaphore ---------------------------------------------------------------------------------

TEST(RedissonSemaphore, PermitsAreSharedWithJavaAndCountedTheSame) {
  const std::string key = unique_key();
  Semaphore permits(test_client(), key);
  EXPECT_EQ(permits.available(), 0);
  EXPECT_FALSE(permits.try_acquire()) << "none set, none available";
  ASSERT_EQ(raw(redisson_semaphore_try_set_command(key, 3)).integer, 1);
  EXPECT_FALSE(permits.try_set_permits(10));
  EXPECT_EQ(permits.available(), 3);
  EXPECT_TRUE(permits.try_acquire(2));
  EXPECT_FALSE(permits.try_acquire(2)) << "all or nothing";
  EXPECT_EQ(raw(redisson_semaphore_acquire_command(key, 1)).integer, 1);
  EXPECT_EQ(raw(redisson_semaphore_acquire_command(key, 1)).integer, 0);
  permits.release(2);
  EXPECT_EQ(raw({"GET", key}).str, "2");
  EXPECT_EQ(permits.add_permits(-1), 1);
  EXPECT_EQ(permits.drain(), 1);
  EXPECT_EQ(permits.available(), 0);
}

TEST(RedissonSemaphore, ReleasesWakeWaitersBothWays) {
  const std::string key = unique_key();
  ASSERT_EQ(raw(redisson_semaphore_try_set_command(key, 0)).integer, 1);
  Semaphore waiter(test_client(), key, kMessageOnlySemaphore);
  auto waited = std::async(std::launch::async, [&] { return waiter.try_acquire_for(seconds(50), 2); });
  ASSERT_TRUE(eventually([&] { return subscribers_of(redisson_semaphore_channel(key)) == 1; }));
  raw(redisson_semaphore_release_command(key, 1));  // one is not enough
  raw(redisson_semaphore_release_command(key, 1));
  ASSERT_TRUE(ends_true(waited)) << "Java's releases did not wake the C++ waiter";
  EXPECT_EQ(raw({"GET", key}).str, "0");

  PeerSubscriber java_waiter(test_dir() + "/redis.sock", "SUBSCRIBE", redisson_semaphore_channel(key));
  ASSERT_TRUE(java_waiter.subscribed());
  waiter.release(2);
  EXPECT_EQ(java_waiter.next_message(), "2") << "the new count, as Redisson announces it";
  EXPECT_EQ(raw(redisson_semaphore_acquire_command(key, 2)).integer, 1);
}

TEST(RedissonSemaphore, AcquireGivesUpAtItsTimeoutAndBadInputIsRefused) {
  const std::string key = unique_key();
  Semaphore none(test_client(), key, {.acquire_timeout = milliseconds(0), .recheck = seconds(5)});
  EXPECT_EQ(expect_error([&] { none.acquire(); }).errc(), Errc::timeout);
  EXPECT_EQ(expect_error([&] { (void)none.try_acquire(0); }).errc(), Errc::bad_option);
  EXPECT_EQ(expect_error([&] { none.release(-1); }).errc(), Errc::bad_option);
  EXPECT_EQ(expect_error([&] { (void)none.try_set_permits(-1); }).errc(), Errc::bad_option);
  raw({"SET", key, "many"});
  EXPECT_EQ(expect_error([&] { (void)none.try_acquire(); }).errc(), Errc::bad_value);
  EXPECT_EQ(expect_error([&] { none.release(); }).errc(), Errc::bad_value);
  EXPECT_EQ(expect_error([&] { (void)none.available(); }).errc(), Errc::bad_value);
  EXPECT_EQ(raw({"GET", key}).str, "many");
  raw({"DEL", key});
  raw({"LPUSH", key, "x"});
  EXPECT_EQ(expect_error([&] { (void)none.try_acquire(); }).errc(), Errc::wrong_type);
  EXPECT_EQ(raw({"LLEN", key}).integer, 1);
}

TEST(RedissonSemaphore, PermitsStayWithinAJavaIntAndANegativeCountIsNotAnnounced) {
  const std::string key = unique_key();
  Semaphore permits(test_client(), key);
  EXPECT_EQ(expect_error([&] { (void)permits.try_set_permits(2147483648LL); }).errc(), Errc::bad_option);
  EXPECT_EQ(expect_error([&] { (void)permits.try_acquire(2147483648LL); }).errc(), Errc::bad_option);
  ASSERT_TRUE(permits.try_set_permits(2147483647LL));
  EXPECT_EQ(expect_error([&] { permits.release(); }).errc(), Errc::bad_value) << "beyond a Java int";
  EXPECT_EQ(raw({"GET", key}).str, "2147483647");
  // Taking more away than there are: the count goes negative, and no Java listener is told it.
  PeerSubscriber java_waiter(test_dir() + "/redis.sock", "SUBSCRIBE", redisson_semaphore_channel(key));
  ASSERT_TRUE(java_waiter.subscribed());
  EXPECT_EQ(permits.add_permits(-2147483647LL), 0);
  EXPECT_EQ(permits.add_permits(-1), -1);
  permits.release(2);
  EXPECT_EQ(java_waiter.next_message(), "1") << "the first positive count was not the first message";
}

TEST(RedissonSemaphore, SetOnAKeyOfAnotherTypeSaysSoAndAWaitEndsOnStop) {
  const std::string key = unique_key();
  raw({"HSET", key, "f", "1"});
  EXPECT_EQ(expect_error([&] { (void)Semaphore(test_client(), key).try_set_permits(1); }).errc(), Errc::wrong_type);
  EXPECT_EQ(expect_error([&] { (void)Latch(test_client(), key).try_set_count(1); }).errc(), Errc::wrong_type);
  raw({"DEL", key});
  Semaphore waiter(test_client(), key, kMessageOnlySemaphore);
  std::stop_source stop;
  auto waited = std::async(std::launch::async, [&] { return waiter.try_acquire_for(seconds(50), 1, stop.get_token()); });
  ASSERT_TRUE(eventually([&] { return subscribers_of(redisson_semaphore_channel(key)) == 1; }));
  stop.request_stop();
  ASSERT_EQ(waited.wait_for(seconds(10)), std::future_status::ready);
  EXPECT_FALSE(waited.get());
}

// Three permits, four C++ processes and two Java threads drawing from them: never more than three
// holders at once.
TEST(RedissonSemaphore, AMixedFleetNeverHasMoreHoldersThanPermits) {
  const std::string key = unique_key();
  const std::string check = key + ":check";
  const std::string stop = key + ":stop";
  const auto java = [&] {
    long violations = 0;
    while (raw({"EXISTS", stop}).integer == 0) {
      if (raw(redisson_semaphore_acquire_command(key, 1)).integer != 1) {
        std::this_thread::sleep_for(milliseconds(1));
        continue;
      }
      if (raw({"INCR", check}).integer > 3) ++violations;
      raw({"DECR", check});
      raw(redisson_semaphore_release_command(key, 1));
    }
    return violations;
  };
  ASSERT_EQ(raw(redisson_semaphore_try_set_command(key, 3)).integer, 1);
  auto first_java = std::async(std::launch::async, java);
  auto second_java = std::async(std::launch::async, java);
  std::vector<std::string> commands(4, contender_command("semaphore", "3", key, check, 100));
  const ContenderTotals totals = run_contenders(commands);
  raw({"SET", stop, "1"});
  EXPECT_EQ(totals.failed_processes, 0);
  EXPECT_EQ(totals.acquisitions, 400);
  EXPECT_EQ(totals.violations, 0);
  EXPECT_EQ(first_java.get(), 0);
  EXPECT_EQ(second_java.get(), 0);
  EXPECT_EQ(raw({"GET", key}).str, "3") << "every permit came back";
}

// ---- on a Redis Cluster ------------------------------------------------------------------------

TEST(RedissonCountersOnCluster, TheLatchAndTheSemaphoreAnnounceBySpublishBothWays) {
  ClusterTopology cluster(3);
  const std::string latch_key = unique_key("latch");
  const std::string permits_key = unique_key("permits");
  const Client client(cluster.url());
  ServerProcess& latch_master = *cluster.nodes[cluster.owner_of_slot(cluster.slot_of(latch_key))];
  ServerProcess& permits_master = *cluster.nodes[cluster.owner_of_slot(cluster.slot_of(permits_key))];

  Latch latch(client, latch_key, kMessageOnlyLatch);
  ASSERT_TRUE(latch.try_set_count(1));
  auto waited = std::async(std::launch::async, [&] { return latch.try_wait_for(seconds(50)); });
  ASSERT_TRUE(eventually([&] { return has_one_shard_subscriber(latch_master, redisson_latch_channel(latch_key)); }));
  EXPECT_EQ(latch_master.command(redisson_latch_count_down_command(latch_key, "spublish")), "(nil)");
  ASSERT_TRUE(ends_true(waited)) << "Java's SPUBLISH did not wake the C++ waiter";

  PeerSubscriber java_waiter(permits_master.port(), "SSUBSCRIBE", redisson_semaphore_channel(permits_key));
  ASSERT_TRUE(java_waiter.subscribed());
  Semaphore permits(client, permits_key, kMessageOnlySemaphore);
  ASSERT_TRUE(permits.try_set_permits(1));
  EXPECT_EQ(java_waiter.next_message(), "1");
  ASSERT_TRUE(permits.try_acquire());
  permits.release();
  EXPECT_EQ(java_waiter.next_message(), "1");
  EXPECT_EQ(expect_error([&] { Latch(client, "x{y}z"); }).errc(), Errc::bad_option);
}

}  // namespace
}  // namespace lockbridge::testing
