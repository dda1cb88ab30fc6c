// The redisson strategy in fair mode is Redisson's RFairLock, checked against the fixture's
// redis-server and a Java peer played by Redisson 4.7.0's own fair-lock scripts (redisson_peer.hpp,
// from its public source, not from lockbridge's): one queue and one set of deadlines for both
// sides, served in the order the waiters queued, each woken on its own channel by whichever side
// released, a waiter that gives up or dies taken out by Redisson's own rules. Assertions are about
// who holds the lock and what Redis holds, never about how long anything took: the C++ waiters
// retry only every minute, so a wake-up that did not come fails the test.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "contenders.hpp"
#include "redis_test_support.hpp"
#include "redisson_peer.hpp"
#include "topology.hpp"

namespace lockbridge::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr char kJavaHolder[] = "8b0c2a1e-0000-4000-8000-000000000000:1";
constexpr char kJavaWaiter[] = "8b0c2a1e-0000-4000-8000-000000000000:2";

// A fair waiter that only a message wakes (a minute between its own attempts, and fair mode's
// heartbeat every 200 s).
MutexOptions fair_options(milliseconds fair_wait = milliseconds(300'000)) {
  MutexOptions options = token_options();
  options.strategy = StrategyKind::redisson;
  options.wait_mode = WaitMode::fair;
  options.lease = seconds(30);
  options.redisson.fair_wait = fair_wait;
  options.local_queue = false;  // these waiters stand for other processes
  options.retry = RetryPolicy::fixed_retries(5, seconds(60));
  options.acquire_timeout = seconds(50);
  options.fair_waiter_timeout = std::chrono::minutes(10);
  return options;
}

std::vector<std::string> queue_of(const std::string& key) {
  std::vector<std::string> fields;
  for (const Reply& entry : raw({"LRANGE", redisson_fair_queue(key), "0", "-1"}).elements) fields.push_back(entry.str);
  return fields;
}

Reply java_lock(const std::string& key, const std::string& field, const std::string& wait_ms = "300000",
                const std::string& lease_ms = "60000") {
  return raw(redisson_fair_lock_command(key, field, wait_ms, lease_ms));
}

// Whether `waited` (a lock() running elsewhere) returns within a bound.
bool returns(std::future<void>& waited) {
  if (waited.wait_for(seconds(30)) != std::future_status::ready) return false;
  waited.get();
  return true;
}

// A C++ waiter queued behind a Java holder, in a wait that only its stop request ends.
// Once made, the waiter is parked: it has queued, subscribed, and made the attempt that follows
// its subscription (a release before that attempt would hand it the lock there and then).
struct QueuedBehindJava {
  explicit QueuedBehindJava(const std::string& key) : waiter(test_client(), key, fair_options()) {
    held = java_lock(key, kJavaHolder).is_nil();
    if (held) {
      CommandRecorder attempts(key);
      attempts.start();
      waited = std::async(std::launch::async,
                          [this] { return waiter.try_lock_for(std::chrono::minutes(10), stop.get_token()); });
      attempts.wait_for_calls("EVALSHA", 2);  // each attempt is one, before any EVAL after NOSCRIPT
    }
  }
  // Ends the wait: whether it ended, without the lock.
  bool gives_up() {
    stop.request_stop();
    return waited.wait_for(seconds(10)) == std::future_status::ready && !waited.get();
  }

  Mutex waiter;
  std::stop_source stop;
  std::future<bool> waited;
  bool held = false;
};

TEST(RedissonFair, WaitersAreServedInQueueOrderAndWokenAcrossBothSides) {
  const std::string key = unique_key();
  ASSERT_TRUE(java_lock(key, kJavaHolder).is_nil()) << "the Java holder takes the free lock";
  Mutex first(test_client(), key, fair_options());
  auto first_waits = std::async(std::launch::async, [&] { first.lock(); });
  ASSERT_TRUE(eventually([&] { return queue_of(key).size() == 1; })) << "the first C++ waiter never queued";
  // A Java waiter: subscribed to its own channel, then queued by its attempt.
  PeerSubscriber java_waiter(test_dir() + "/redis.sock", "SUBSCRIBE", redisson_fair_channel(key, kJavaWaiter));
  ASSERT_TRUE(java_waiter.subscribed());
  ASSERT_FALSE(java_lock(key, kJavaWaiter).is_nil());
  Mutex third(test_client(), key, fair_options());
  auto third_waits = std::async(std::launch::async, [&] { third.lock(); });
  ASSERT_TRUE(eventually([&] { return queue_of(key).size() == 3; })) << "the second C++ waiter never queued";
  const std::vector<std::string> order = queue_of(key);
  EXPECT_EQ(order[1], kJavaWaiter);
  EXPECT_EQ(raw({"ZCARD", redisson_fair_deadlines(key)}).integer, 3);

  // The Java holder's unlock tells the first waiter, on its own channel.
  EXPECT_EQ(raw(redisson_fair_unlock_command(key, kJavaHolder)).integer, 1);
  ASSERT_TRUE(returns(first_waits)) << "the Java release did not wake the first waiter";
  EXPECT_EQ(first.value(), order[0]);
  EXPECT_EQ(third_waits.wait_for(milliseconds(0)), std::future_status::timeout) << "the last waiter went early";

  // lockbridge's release tells the Java waiter, which then takes the lock with its own script.
  first.unlock();
  EXPECT_EQ(java_waiter.next_message(), "0") << "the Java waiter was not told on its channel";
  ASSERT_TRUE(java_lock(key, kJavaWaiter).is_nil()) << "the Java waiter's turn";
  EXPECT_EQ(third_waits.wait_for(milliseconds(0)), std::future_status::timeout) << "the last waiter went early";

  EXPECT_EQ(raw(redisson_fair_unlock_command(key, kJavaWaiter)).integer, 1);
  ASSERT_TRUE(returns(third_waits)) << "the Java release did not wake the last waiter";
  EXPECT_EQ(third.value(), order[2]);
  third.unlock();
  EXPECT_TRUE(queue_of(key).empty());
  EXPECT_EQ(raw({"EXISTS", redisson_fair_deadlines(key), key}).integer, 0);
}

// Redisson's arithmetic: each waiter's deadline is the one ahead of it plus the wait; a waiter that
// gives up takes that wait off every deadline behind it.
TEST(RedissonFair, AWaiterThatGivesUpLeavesTheQueueAndTheOnesBehindMoveUp) {
  const std::string key = unique_key();
  QueuedBehindJava queued(key);
  ASSERT_TRUE(queued.held);
  ASSERT_TRUE(eventually([&] { return queue_of(key).size() == 1; }));
  const std::string field = queue_of(key).front();
  ASSERT_FALSE(java_lock(key, kJavaWaiter).is_nil());
  const double mine = std::stod(raw({"ZSCORE", redisson_fair_deadlines(key), field}).str);
  const double behind = std::stod(raw({"ZSCORE", redisson_fair_deadlines(key), kJavaWaiter}).str);
  EXPECT_EQ(behind - mine, 300'000) << "queued a wait behind the waiter ahead of it";

  ASSERT_TRUE(queued.gives_up());
  EXPECT_TRUE(eventually([&] { return queue_of(key) == std::vector<std::string>{kJavaWaiter}; }))
      << "the waiter that gave up is still queued";
  EXPECT_TRUE(raw({"ZSCORE", redisson_fair_deadlines(key), field}).is_nil());
  EXPECT_EQ(std::stod(raw({"ZSCORE", redisson_fair_deadlines(key), kJavaWaiter}).str), behind - 300'000);
}

// A queued waiter that stopped asking (a Java process that died) blocks the queue until its
// deadline, and the first attempt after it takes it out: the rest move on. A short wait on both
// sides keeps that deadline near: the lock's lease (300 ms) plus the wait (200 ms).
TEST(RedissonFair, AQueuedWaiterThatDiedIsPassedOverAtItsDeadline) {
  const std::string key = unique_key();
  ASSERT_TRUE(java_lock(key, kJavaHolder, "200", "300").is_nil()) << "a Java holder with a 300 ms lease";
  ASSERT_FALSE(java_lock(key, kJavaWaiter, "200").is_nil()) << "a Java waiter queues, and dies";
  MutexOptions options = fair_options(milliseconds(200));
  options.retry = RetryPolicy::backoff_with_jitter();  // nothing will announce it
  Mutex waiter(test_client(), key, options);
  auto waited = std::async(std::launch::async, [&] { waiter.lock(); });
  ASSERT_TRUE(returns(waited)) << "the dead waiter kept the queue";
  EXPECT_TRUE(waiter.owns_lock());
  EXPECT_TRUE(queue_of(key).empty()) << "the dead waiter is still queued";
  waiter.unlock();
}

TEST(RedissonFair, ASingleTryNeverQueues) {
  const std::string key = unique_key();
  ASSERT_TRUE(java_lock(key, kJavaHolder).is_nil());
  Mutex mutex(test_client(), key, fair_options());
  EXPECT_FALSE(mutex.try_lock());
  EXPECT_TRUE(queue_of(key).empty());
  EXPECT_EQ(raw({"EXISTS", redisson_fair_deadlines(key)}).integer, 0);
  EXPECT_EQ(raw(redisson_fair_unlock_command(key, kJavaHolder)).integer, 1);
  EXPECT_TRUE(mutex.try_lock()) << "free, with nobody queued";
  EXPECT_EQ(raw({"HGET", key, mutex.value()}).str, "1");
  mutex.unlock();
}

TEST(RedissonFair, KeysOfAnotherTypeAreAnErrorAndStayAsTheyWere) {
  struct Case {
    std::string (*name)(std::string_view key);
    std::string said;
  };
  const auto lock_name = [](std::string_view key) { return std::string(key); };
  for (const Case& bad : {Case{lock_name, "holds a string, not a hash"},
                          Case{redisson_fair_queue, "holds a string, not a list"},
                          Case{redisson_fair_deadlines, "holds a string, not a zset"}}) {
    SCOPED_TRACE(bad.said);
    const std::string key = unique_key();
    const std::string where = bad.name(key);
    raw({"SET", where, "not ours"});
    Mutex mutex(test_client(), key, fair_options());
    for (const bool single_try : {true, false}) {
      try {
        if (single_try) {
          (void)mutex.try_lock();
        } else {
          (void)mutex.try_lock_for(seconds(1));
        }
        ADD_FAILURE() << "no error";
      } catch (const Error& error) {
        EXPECT_EQ(error.code(), Errc::wrong_type) << error.what();
        EXPECT_THAT(error.what(), ::testing::HasSubstr(bad.said));
      }
    }
    EXPECT_EQ(raw({"GET", where}).str, "not ours");
    EXPECT_EQ(raw({"EXISTS", key, redisson_fair_queue(key), redisson_fair_deadlines(key)}).integer, 1)
        << "something was written";
  }
}

// A first waiter that gives up while the lock is free (its holder's lease ran out, which nobody
// announces) tells the next waiter, here a Java one: Redisson's acquireFailed tells nobody, and
// the next waiter would sleep out the PTTL it last learned.
TEST(RedissonFair, AFirstWaiterThatGivesUpOnAFreeLockTellsTheNext) {
  const std::string key = unique_key();
  QueuedBehindJava queued(key);
  ASSERT_TRUE(queued.held);
  ASSERT_TRUE(eventually([&] { return queue_of(key).size() == 1; }));
  PeerSubscriber java_waiter(test_dir() + "/redis.sock", "SUBSCRIBE", redisson_fair_channel(key, kJavaWaiter));
  ASSERT_TRUE(java_waiter.subscribed());
  ASSERT_FALSE(java_lock(key, kJavaWaiter).is_nil()) << "the Java waiter queues second";
  raw({"DEL", key});  // the holder's lease ran out
  ASSERT_TRUE(queued.gives_up());
  EXPECT_EQ(java_waiter.next_message(), "0") << "the next waiter was not told";
  EXPECT_EQ(queue_of(key), std::vector<std::string>{kJavaWaiter});
  EXPECT_TRUE(java_lock(key, kJavaWaiter).is_nil()) << "its turn";
}

// A Java peer's thread on the fair lock: asks with Redisson's script every millisecond (it stays
// queued meanwhile, its deadline pushed on), and when it holds the lock checks exclusion as
// lock_contender does, until `stop` exists; then it leaves the queue as Java's acquireFailed does.
// Returns its violations; `acquired` counts as it goes.
long java_fair_side(const std::string& key, const std::string& check, const std::string& stop,
                    const std::string& field, std::atomic<long>& acquired) {
  long violations = 0;
  while (raw({"EXISTS", stop}).integer == 0) {
    if (!java_lock(key, field).is_nil()) {  // the wait Redisson defaults to, as the processes use
      std::this_thread::sleep_for(milliseconds(1));
      continue;
    }
    if (raw({"INCR", check}).integer != 1) ++violations;
    raw({"DECR", check});
    ++acquired;
    raw(redisson_fair_unlock_command(key, field));
  }
  raw(redisson_fair_give_up_command(key, field, "300000"));
  return violations;
}

TEST(RedissonFair, AMixedFleetOfProcessesAndJavaPeersHoldsItOneAtATimeAndLeavesTheQueueEmpty) {
  const std::string key = unique_key();
  const std::string check = key + ":check";
  const std::string stop = check + ":stop";
  std::atomic<long> first_java{0};
  std::atomic<long> second_java{0};
  // In queue order everyone gets in: the Java threads too, however the processes press.
  const MixedFleetRun run = run_mixed_fleet(
      std::vector<std::string>(4, contender_command("redisson", "fair", key, check, 1'000'000, 30000, stop)), stop,
      {[&] { return java_fair_side(key, check, stop, kJavaHolder, first_java); },
       [&] { return java_fair_side(key, check, stop, kJavaWaiter, second_java); }},
      [&] { return first_java >= 20 && second_java >= 20; }, milliseconds(0));
  EXPECT_TRUE(run.joined) << "the Java threads did not get their turns: " << first_java << ", " << second_java;
  expect_no_violation(run);
  EXPECT_TRUE(eventually([&] { return queue_of(key).empty(); })) << "waiters were left in the queue";
  EXPECT_EQ(raw({"EXISTS", key}).integer, 0);
}

TEST(RedissonFairOnCluster, OneQueueInTheLocksSlotAndWakeUpsBySpublishBothWays) {
  ClusterTopology cluster(3);
  const std::string key = unique_key();
  ServerProcess& master = *cluster.nodes[cluster.owner_of_slot(cluster.slot_of(key))];
  ASSERT_EQ(master.command(redisson_fair_lock_command(key, kJavaHolder, "300000")), "(nil)");
  Mutex waiter(Client(cluster.url()), key, fair_options());
  auto waited = std::async(std::launch::async, [&] { waiter.lock(); });
  ASSERT_TRUE(eventually([&] { return master.command({"LLEN", redisson_fair_queue(key)}) == "1"; }));
  PeerSubscriber java_waiter(master.port(), "SSUBSCRIBE", redisson_fair_channel(key, kJavaWaiter));
  ASSERT_TRUE(java_waiter.subscribed());
  ASSERT_NE(master.command(redisson_fair_lock_command(key, kJavaWaiter, "300000")), "(nil)");

  EXPECT_EQ(master.command(redisson_fair_unlock_command(key, kJavaHolder, "spublish")), "1");
  ASSERT_TRUE(returns(waited)) << "the Java release did not wake the C++ waiter";
  EXPECT_TRUE(waiter.owns_lock());
  waiter.unlock();
  EXPECT_EQ(java_waiter.next_message(), "0") << "the Java waiter was not told on its channel";
  EXPECT_EQ(master.command(redisson_fair_lock_command(key, kJavaWaiter, "300000")), "(nil)");
}

TEST(RedissonFair, TheWaitMustBePositive) {
  MutexOptions options = fair_options(milliseconds(0));
  EXPECT_THROW(options.validate(), Error);
  options.redisson.fair_wait = milliseconds(1);
  EXPECT_NO_THROW(options.validate());
}

}  // namespace
}  // namespace lockbridge::testing
