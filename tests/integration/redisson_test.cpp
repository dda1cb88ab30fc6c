// The redisson strategy against the fixture's redis-server, checked against a Redisson peer played
// here by raw commands written from Redisson's public source (RedissonLock.java; not from
// lockbridge's scripts): the same hash layout, mutual exclusion with the peer, re-entries it counts, and
// release messages that cross both ways on redisson_lock__channel:{name}.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <future>
#include <regex>
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

std::string channel_of(const std::string& key) { return redisson_channel(key); }

MutexOptions redisson_options() {
  MutexOptions options = token_options();
  options.strategy = StrategyKind::redisson;
  options.lease = seconds(30);
  return options;
}

// The Java side, as Redisson sends it on one server (redisson_peer.hpp).
Reply peer_lock(const std::string& key, const std::string& field = kJavaField, const std::string& lease_ms = "60000") {
  return raw(redisson_lock_command(key, field, lease_ms));
}
Reply peer_unlock(const std::string& key, const std::string& field = kJavaField) {
  return raw(redisson_unlock_command(key, field));
}

TEST(Redisson, WritesRedissonsHashLayout) {
  const std::string key = unique_key();
  Mutex mutex(test_client(), key, redisson_options());
  ASSERT_TRUE(mutex.try_lock());
  EXPECT_EQ(raw({"TYPE", key}).str, "hash");
  const Reply fields = raw({"HGETALL", key});
  ASSERT_EQ(fields.elements.size(), 2U);
  EXPECT_TRUE(std::regex_match(fields.elements[0].str, std::regex("[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}:[0-9]+")))
      << fields.elements[0].str;
  EXPECT_EQ(fields.elements[0].str, mutex.value());
  EXPECT_EQ(fields.elements[1].str, "1");
  const std::int64_t pttl = raw({"PTTL", key}).integer;
  EXPECT_GT(pttl, 0);
  EXPECT_LE(pttl, 30000);
  mutex.unlock();
  EXPECT_EQ(raw({"EXISTS", key}).integer, 0);
}

TEST(Redisson, TwoMutexObjectsAreTwoHolders) {
  const std::string key = unique_key();
  Client client = test_client();
  MutexOptions options = redisson_options();
  options.local_queue = false;
  Mutex first(client, key, options);
  Mutex second(client, key, options);
  ASSERT_TRUE(first.try_lock());
  EXPECT_FALSE(second.try_lock());
  EXPECT_NE(first.value(), second.value());
}

// A pre-fork server: the parent made a Mutex (and so drew its identity) before forking its
// workers. Each worker is another process, so another holder: two workers' first Mutexes must not
// share a field (each would pass for a re-entry of the other).
TEST(Redisson, ForkedWorkersAreDifferentHolders) {
  const std::string key = unique_key();
  const Mutex parent(test_client(), key, redisson_options());  // draws the parent's identity
  const auto worker_try = [&] {
    return in_forked_child([&] {
      Mutex worker(test_client(), key, redisson_options());
      const bool taken = worker.try_lock();
      std::string field = worker.value();
      worker.abandon();  // the worker exits holding it, as a crashed worker would
      return std::string(taken ? "taken " : "refused ") + field;
    });
  };
  const std::string first = worker_try();
  ASSERT_THAT(first, ::testing::StartsWith("taken ")) << first;
  const std::string second = worker_try();
  EXPECT_THAT(second, ::testing::StartsWith("refused ")) << second;
  const Reply fields = raw({"HGETALL", key});
  ASSERT_EQ(fields.elements.size(), 2U);  // the first worker's field alone, its count unchanged
  EXPECT_EQ("taken " + fields.elements[0].str, first);
  EXPECT_EQ(fields.elements[1].str, "1");
  raw({"DEL", key});
}

TEST(Redisson, AJavaHolderExcludesUsAndItsReentriesCount) {
  const std::string key = unique_key();
  EXPECT_TRUE(peer_lock(key).is_nil());
  EXPECT_TRUE(peer_lock(key).is_nil());  // re-entry: count 2
  Mutex mutex(test_client(), key, redisson_options());
  EXPECT_FALSE(mutex.try_lock());
  EXPECT_EQ(peer_unlock(key).integer, 0);  // one re-entry left: still held
  EXPECT_FALSE(mutex.try_lock());
  EXPECT_EQ(raw({"HGET", key, kJavaField}).str, "1");
  EXPECT_EQ(peer_unlock(key).integer, 1);
  EXPECT_TRUE(mutex.try_lock());
  // And the peer is kept out while we hold it: its script answers with our PTTL.
  const Reply refused = peer_lock(key);
  EXPECT_EQ(refused.kind, Reply::Kind::integer);
  EXPECT_GT(refused.integer, 0);
  mutex.unlock();
}

TEST(Redisson, OurUnlockPublishesZeroWhereRedissonWaitersListen) {
  const std::string key = unique_key();
  PeerSubscriber peer(test_dir() + "/redis.sock", "SUBSCRIBE", channel_of(key));
  ASSERT_TRUE(peer.subscribed());
  Mutex mutex(test_client(), key, redisson_options());
  ASSERT_TRUE(mutex.try_lock());
  mutex.unlock();
  EXPECT_EQ(peer.next_message(), "0");
}

TEST(Redisson, AJavaUnlockWakesOurWaiterWithoutPolling) {
  const std::string key = unique_key();
  ASSERT_TRUE(peer_lock(key, kJavaField, "60000").is_nil());
  MutexOptions options = redisson_options();
  options.wait_mode = WaitMode::notify;
  options.retry = RetryPolicy::fixed_retries(5, seconds(60));  // polling alone would take a minute
  options.acquire_timeout = seconds(50);
  Client client = test_client();
  Mutex waiter(client, key, options);
  auto waited = std::async(std::launch::async, [&] { waiter.lock(); });
  // Subscribed: Redis counts our subscriber on the channel.
  ASSERT_TRUE(eventually([&] {
    const Reply numsub = raw({"PUBSUB", "NUMSUB", channel_of(key)});
    return numsub.elements.size() == 2 && numsub.elements[1].integer >= 1;
  }));
  EXPECT_EQ(waited.wait_for(milliseconds(100)), std::future_status::timeout);
  EXPECT_EQ(peer_unlock(key).integer, 1);
  ASSERT_EQ(waited.wait_for(seconds(30)), std::future_status::ready) << "Redisson's release did not wake the waiter";
  waited.get();
  EXPECT_TRUE(waiter.owns_lock());
}

TEST(Redisson, AStringAtTheNameIsAWrongTypeErrorAndIsLeftAlone) {
  const std::string key = unique_key();
  raw({"SET", key, "0123456789abcdef0123456789abcdef", "PX", "60000"});
  Mutex mutex(test_client(), key, redisson_options());
  EXPECT_EQ(expect_error([&] { (void)mutex.try_lock(); }).errc(), Errc::wrong_type);
  EXPECT_EQ(raw({"GET", key}).str, "0123456789abcdef0123456789abcdef");
}

TEST(Redisson, ReleaseAfterAForceUnlockIsLeaseLostAndDeletesNothing) {
  const std::string key = unique_key();
  Mutex mutex(test_client(), key, redisson_options());
  ASSERT_TRUE(mutex.try_lock());
  raw({"DEL", key});  // Redisson's forceUnlock
  ASSERT_TRUE(peer_lock(key).is_nil());
  mutex.unlock();
  EXPECT_EQ(mutex.last_error(), Errc::lease_lost);
  EXPECT_EQ(raw({"HGET", key, kJavaField}).str, "1");
}

TEST(Redisson, TheWatchdogKeepsTheLeaseWithPexpire) {
  const std::string key = unique_key();
  MutexOptions options = MutexOptions::redisson_lock();
  // Renewed every third of the lease; a second leaves a loaded machine (sanitizers, parallel
  // tests) room to run the watchdog late without the lease running out.
  options.lease = milliseconds(1500);
  Mutex mutex(test_client(), key, options);
  ASSERT_TRUE(mutex.try_lock());
  std::this_thread::sleep_for(milliseconds(4500));  // three leases
  EXPECT_TRUE(mutex.owns_lock());
  EXPECT_EQ(raw({"HGET", key, mutex.value()}).str, "1");
  mutex.unlock();
  EXPECT_EQ(raw({"EXISTS", key}).integer, 0);
}

// With fencing the redisson strategy is Redisson's RFencedLock: every acquisition, on either side
// and Java's re-entries too, draws the next token from redisson_lock_token:{name}.
TEST(RedissonFenced, EveryAcquisitionOnEitherSideDrawsTheNextToken) {
  const std::string key = unique_key();
  MutexOptions options = redisson_options();
  options.token.fencing = true;
  Mutex mutex(test_client(), key, options);
  ASSERT_TRUE(mutex.try_lock());
  ASSERT_TRUE(mutex.fence().has_value());
  const std::uint64_t first = *mutex.fence();
  EXPECT_EQ(raw({"GET", redisson_token_counter(key)}).str, std::to_string(first));
  EXPECT_EQ(raw({"HGET", key, mutex.value()}).str, "1") << "RLock's hash";
  const Reply refused = raw(redisson_fenced_lock_command(key));
  ASSERT_EQ(refused.elements.size(), 2U);
  EXPECT_GT(refused.elements[0].integer, 0) << "the Java side is told the holder's ms left";
  EXPECT_EQ(refused.elements[1].integer, -1);
  mutex.unlock();

  const Reply java = raw(redisson_fenced_lock_command(key));
  ASSERT_EQ(java.elements.size(), 2U);
  EXPECT_EQ(java.elements[0].integer, -1);
  EXPECT_EQ(java.elements[1].integer, static_cast<long long>(first + 1));
  const Reply reentry = raw(redisson_fenced_lock_command(key));
  EXPECT_EQ(reentry.elements[1].integer, static_cast<long long>(first + 2)) << "a Java re-entry draws one too";
  EXPECT_FALSE(mutex.try_lock());
  EXPECT_EQ(raw(redisson_unlock_command(key)).integer, 0);
  EXPECT_EQ(raw(redisson_unlock_command(key)).integer, 1);
  ASSERT_TRUE(mutex.try_lock());
  EXPECT_EQ(mutex.fence(), first + 3);
  mutex.unlock();
}

// A fleet of processes and two Java peer threads on one RFencedLock: one holder at a time, and
// every holder's token larger than the one before it, whichever side held it (the check key's
// ":fence" keeps the last, as lock_contender does).
TEST(RedissonFenced, AMixedFleetSeesOneHolderAtATimeAndEveryTokenLargerThanTheLast) {
  const std::string key = unique_key();
  const std::string check = key + ":check";
  const std::string stop = check + ":stop";
  const auto java = [&](const std::string& field, std::atomic<long>& acquired) {
    long violations = 0;
    while (raw({"EXISTS", stop}).integer == 0) {
      const Reply taken = raw(redisson_fenced_lock_command(key, field));
      if (taken.elements.size() != 2 || taken.elements[0].integer != -1) {
        std::this_thread::sleep_for(milliseconds(1));
        continue;
      }
      if (raw({"INCR", check}).integer != 1) ++violations;
      const Reply last = raw({"GET", check + ":fence"});
      if (!last.is_nil() && taken.elements[1].integer <= std::stoll(last.str)) ++violations;
      raw({"SET", check + ":fence", std::to_string(taken.elements[1].integer)});
      raw({"DECR", check});
      ++acquired;
      raw(redisson_unlock_command(key, field));
    }
    return violations;
  };
  std::atomic<long> first_java{0};
  std::atomic<long> second_java{0};
  const MixedFleetRun run = run_mixed_fleet(
      std::vector<std::string>(4, contender_command("redisson", "fenced", key, check, 1'000'000, 30000, stop)), stop,
      {[&] { return java("8b0c2a1e-0000-4000-8000-00000000f001:1", first_java); },
       [&] { return java("8b0c2a1e-0000-4000-8000-00000000f002:1", second_java); }},
      [&] { return first_java >= 10 && second_java >= 10; });
  EXPECT_TRUE(run.joined) << "the Java threads did not take part: " << first_java << ", " << second_java;
  expect_no_violation(run);
}

TEST(RedissonFenced, ACounterThatIsNoNumberFailsTheAcquireWithNothingWritten) {
  const std::string key = unique_key();
  raw({"SET", redisson_token_counter(key), "not a number"});
  MutexOptions options = redisson_options();
  options.token.fencing = true;
  Mutex mutex(test_client(), key, options);
  EXPECT_THROW((void)mutex.try_lock(), Error);
  EXPECT_EQ(raw({"EXISTS", key}).integer, 0);
  EXPECT_EQ(raw({"GET", redisson_token_counter(key)}).str, "not a number");
}

// RSpinLock (docs/compat.md §5g): RLock's hash, with scripts to the same effect, but its Java
// holders announce no release and its waiters poll with backoff. MutexOptions::redisson_spin_lock()
// waits as they do: a lock a Java spin lock frees is taken without any message.
TEST(RedissonSpin, DefaultsAreRSpinLocks) {
  const MutexOptions options = MutexOptions::redisson_spin_lock();
  EXPECT_EQ(options.strategy, StrategyKind::redisson);
  EXPECT_EQ(options.lease, seconds(30));
  EXPECT_TRUE(options.watchdog.enabled);  // RSpinLock renews as RLock does
  EXPECT_EQ(options.wait_mode, WaitMode::poll);
  EXPECT_EQ(options.retry.kind, RetryPolicy::Kind::backoff);
  EXPECT_EQ(options.retry.initial, milliseconds(1));
  EXPECT_EQ(options.retry.cap, milliseconds(128));
  EXPECT_NO_THROW(options.validate());
}

TEST(RedissonSpin, AJavaSpinLockAndOursExcludeEachOtherAndItsReentriesCount) {
  const std::string key = unique_key();
  EXPECT_TRUE(raw(redisson_spin_lock_command(key)).is_nil());
  EXPECT_TRUE(raw(redisson_spin_lock_command(key)).is_nil());  // re-entry: count 2
  Mutex mutex(test_client(), key, MutexOptions::redisson_spin_lock());
  EXPECT_FALSE(mutex.try_lock());
  EXPECT_EQ(raw(redisson_spin_unlock_command(key)).integer, 0);  // one re-entry left: still held
  EXPECT_FALSE(mutex.try_lock());
  EXPECT_EQ(raw(redisson_spin_unlock_command(key)).integer, 1);
  ASSERT_TRUE(mutex.try_lock());
  const Reply refused = raw(redisson_spin_lock_command(key));  // our PTTL
  EXPECT_EQ(refused.kind, Reply::Kind::integer);
  EXPECT_GT(refused.integer, 0);
  EXPECT_TRUE(raw(redisson_spin_unlock_command(key)).is_nil()) << "a Java unlock of a lock it does not hold";
  EXPECT_EQ(raw({"HGET", key, mutex.value()}).str, "1");
  mutex.unlock();
  EXPECT_EQ(raw({"EXISTS", key}).integer, 0);
  EXPECT_TRUE(raw(redisson_spin_lock_command(key)).is_nil());
}

TEST(RedissonSpin, OurWaiterTakesALockAJavaSpinLockFreedWithoutAMessage) {
  const std::string key = unique_key();
  PeerSubscriber rlock_waiter(test_dir() + "/redis.sock", "SUBSCRIBE", channel_of(key));
  ASSERT_TRUE(rlock_waiter.subscribed());
  const auto subscribers = [&] {
    const Reply numsub = raw({"PUBSUB", "NUMSUB", channel_of(key)});
    return numsub.elements.size() == 2 ? numsub.elements[1].integer : -1;
  };
  ASSERT_TRUE(raw(redisson_spin_lock_command(key)).is_nil());
  MutexOptions options = MutexOptions::redisson_spin_lock();
  options.acquire_timeout = seconds(30);
  Mutex waiter(test_client(), key, options);
  auto waited = std::async(std::launch::async, [&] { waiter.lock(); });
  EXPECT_EQ(waited.wait_for(milliseconds(100)), std::future_status::timeout) << "acquired a held lock";
  EXPECT_EQ(subscribers(), 1) << "the waiter subscribed to a channel its Java peers never announce on";
  EXPECT_EQ(raw(redisson_spin_unlock_command(key)).integer, 1);  // announces nothing
  ASSERT_EQ(waited.wait_for(seconds(20)), std::future_status::ready) << "the waiter did not poll its way to the lock";
  waited.get();
  EXPECT_TRUE(waiter.owns_lock());
  EXPECT_EQ(subscribers(), 1) << "the waiter subscribed to a channel its Java peers never announce on";
  waiter.unlock();
  // Our release is RLock's: RLock waiters on the same name hear it.
  EXPECT_EQ(rlock_waiter.next_message(), "0");
}

// Processes with the preset and two Java spin-lock threads (polling with RSpinLock's backoff)
// on one name: one holder at a time, and every side takes its turns.
TEST(RedissonSpin, AMixedFleetSeesOneHolderAtATime) {
  const std::string key = unique_key();
  const std::string check = key + ":check";
  const std::string stop = check + ":stop";
  const auto java = [&](const std::string& field, std::atomic<long>& acquired) {
    long violations = 0;
    milliseconds backoff(1);
    while (raw({"EXISTS", stop}).integer == 0) {
      if (!raw(redisson_spin_lock_command(key, field, "30000")).is_nil()) {
        std::this_thread::sleep_for(backoff);
        backoff = std::min(backoff * 2, milliseconds(128));
        continue;
      }
      backoff = milliseconds(1);
      if (raw({"INCR", check}).integer != 1) ++violations;
      raw({"DECR", check});
      ++acquired;
      if (raw(redisson_spin_unlock_command(key, field)).integer != 1) ++violations;
    }
    return violations;
  };
  std::atomic<long> first_java{0};
  std::atomic<long> second_java{0};
  const MixedFleetRun run = run_mixed_fleet(
      std::vector<std::string>(4, contender_command("redisson", "spin", key, check, 1'000'000, 30000, stop)), stop,
      {[&] { return java("8b0c2a1e-0000-4000-8000-00000000a001:1", first_java); },
       [&] { return java("8b0c2a1e-0000-4000-8000-00000000a002:1", second_java); }},
      [&] { return first_java >= 10 && second_java >= 10; });
  EXPECT_TRUE(run.joined) << "the Java threads did not take part: " << first_java << ", " << second_java;
  expect_no_violation(run);
}

TEST(Redisson, DefaultsAreRedissons) {
  const MutexOptions options = MutexOptions::redisson_lock();
  EXPECT_EQ(options.strategy, StrategyKind::redisson);
  EXPECT_EQ(options.lease, seconds(30));
  EXPECT_TRUE(options.watchdog.enabled);  // every 10 s
  MutexOptions fenced = options;
  fenced.token.fencing = true;  // RFencedLock (RedissonFenced.*)
  EXPECT_NO_THROW(fenced.validate());
  fenced.wait_mode = WaitMode::fair;  // Redisson has no fenced fair lock
  EXPECT_THROW(fenced.validate(), Error);
  MutexOptions fair = options;
  fair.wait_mode = WaitMode::fair;  // RFairLock (redisson_fair_test.cpp)
  EXPECT_NO_THROW(fair.validate());
}

// On a Redis Cluster, Redisson >= 3.22 announces releases with SPUBLISH and waits with SSUBSCRIBE
// on the slot's master (docs/wire-formats.md §4.1): lockbridge does the same there, so the releases
// cross both ways between it and such Java peers.
TEST(RedissonOnCluster, ReleasesCrossBothWaysBySpublishAsRedisson322Does) {
  ClusterTopology cluster(3);
  const std::string key = unique_key();
  const std::string channel = channel_of(key);
  ServerProcess& master = *cluster.nodes[cluster.owner_of_slot(cluster.slot_of(key))];

  // Our release wakes a Java waiter: it hears "0" on its sharded subscription.
  PeerSubscriber java_waiter(master.port(), "SSUBSCRIBE", channel);
  ASSERT_TRUE(java_waiter.subscribed());
  Mutex holder(Client(cluster.url()), key, redisson_options());
  ASSERT_TRUE(holder.try_lock());
  holder.unlock();
  EXPECT_EQ(java_waiter.next_message(), "0");

  // A Java release wakes our waiter, whose poll interval is a minute.
  ASSERT_EQ(master.command(redisson_lock_command(key)), "(nil)");
  MutexOptions options = redisson_options();
  options.wait_mode = WaitMode::notify;
  options.retry = RetryPolicy::fixed_retries(5, seconds(60));
  options.acquire_timeout = seconds(50);
  const Client waiter_client(cluster.url());
  Mutex waiter(waiter_client, key, options);
  const auto before = waiter_client.stats().round_trips;
  auto waited = std::async(std::launch::async, [&] { waiter.lock(); });
  // Subscribed on the slot's master, and past its attempt after subscribing: now waiting.
  ASSERT_TRUE(eventually([&] { return has_one_shard_subscriber(master, channel); }));
  ASSERT_TRUE(eventually([&] { return waiter_client.stats().round_trips - before >= 3; }));
  EXPECT_EQ(waited.wait_for(milliseconds(100)), std::future_status::timeout);
  EXPECT_EQ(master.command(redisson_unlock_command(key, kJavaField, "spublish")), "1");
  ASSERT_EQ(waited.wait_for(seconds(30)), std::future_status::ready) << "the Java release did not wake the waiter";
  waited.get();
  EXPECT_TRUE(waiter.owns_lock());
}

// A Java fleet that turned sharding off (shardedSubscriptionMode OFF, or Redisson before 3.22)
// announces with PUBLISH and waits with SUBSCRIBE even on a Redis Cluster: with the same setting
// lockbridge does too, and the releases cross both ways.
TEST(RedissonOnCluster, WithShardingOffReleasesCrossByPublishAsOlderRedissonDoes) {
  ClusterTopology cluster(3);
  const std::string key = unique_key();
  const std::string channel = channel_of(key);
  ServerProcess& master = *cluster.nodes[cluster.owner_of_slot(cluster.slot_of(key))];
  MutexOptions options = redisson_options();
  options.redisson.sharded_subscription = ShardedSubscription::off;

  PeerSubscriber java_waiter(master.port(), "SUBSCRIBE", channel);
  ASSERT_TRUE(java_waiter.subscribed());
  Mutex holder(Client(cluster.url()), key, options);
  ASSERT_TRUE(holder.try_lock());
  holder.unlock();
  EXPECT_EQ(java_waiter.next_message(), "0") << "our release was not PUBLISHed";

  ASSERT_EQ(master.command(redisson_lock_command(key)), "(nil)");
  options.wait_mode = WaitMode::notify;
  options.retry = RetryPolicy::fixed_retries(5, seconds(60));
  options.acquire_timeout = seconds(50);
  const Client waiter_client(cluster.url());
  Mutex waiter(waiter_client, key, options);
  auto waited = std::async(std::launch::async, [&] { waiter.lock(); });
  ASSERT_TRUE(eventually([&] {
    return master.command({"PUBSUB", "NUMSUB", channel}) == channel + " 1";
  })) << master.command({"PUBSUB", "NUMSUB", channel});
  EXPECT_EQ(master.command(redisson_unlock_command(key, kJavaField, "publish")), "1");
  ASSERT_EQ(waited.wait_for(seconds(30)), std::future_status::ready) << "the Java PUBLISH did not wake the waiter";
  waited.get();
  EXPECT_TRUE(waiter.owns_lock());
}

}  // namespace
}  // namespace lockbridge::testing
