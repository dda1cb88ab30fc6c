// SharedMutex is Redisson's RReadWriteLock, checked against the fixture's redis-server and a Java
// peer played by Redisson 4.7.0's own read/write scripts (redisson_peer.hpp, from its public
// source, not from lockbridge's): readers of both sides hold together, a writer of either side
// alone, a downgrade keeps reading, each side's releases wake the other's waiters, and a Java
// reader's unlock keeps a live C++ reader's hold (its timeout key lives, renewed by its own
// watchdog). The C++ waiters retry only once a minute, so a wake-up that did not come fails the test.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "lockbridge/shared_mutex.hpp"
#include "redis_test_support.hpp"
#include "contenders.hpp"
#include "redisson_peer.hpp"
#include "topology.hpp"

namespace lockbridge::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr char kJavaReader[] = "8b0c2a1e-0000-4000-8000-000000000000:11";
constexpr char kJavaWriter[] = "8b0c2a1e-0000-4000-8000-000000000000:12";

// Redisson's defaults, waiting only for a release message (a minute between attempts).
MutexOptions rw_options() { return minute_poll_waiter(MutexOptions::redisson_lock()); }

std::string field_value(const std::string& key, const std::string& field) {
  return raw({"HGET", key, field}).str;
}

// How many subscribe to the lock's channel (plain SUBSCRIBE on one server, as Redisson there).
std::int64_t rw_subscribers(const std::string& key) {
  const Reply counted = raw({"PUBSUB", "NUMSUB", redisson_rwlock_channel(key)});
  return counted.elements.size() == 2 ? counted.elements[1].integer : 0;
}

// Whether `waited` (a wait running elsewhere) ends within a bound with the lock.
bool acquires(std::future<bool>& waited) {
  return waited.wait_for(seconds(30)) == std::future_status::ready && waited.get();
}

TEST(RedissonRwLock, ReadersOfBothSidesHoldTogetherAndKeepWritersOut) {
  const std::string key = unique_key();
  SharedMutex first(test_client(), key, rw_options());
  SharedMutex second(test_client(), key, rw_options());
  {
    std::shared_lock reading(first);
    ASSERT_TRUE(second.try_lock_shared());
    EXPECT_TRUE(raw(redisson_read_lock_command(key, kJavaReader)).is_nil()) << "a Java reader was kept out";
    EXPECT_EQ(field_value(key, "mode"), "read");
    const LockInfo info = first.inspect();
    EXPECT_TRUE(info.exists);
    EXPECT_TRUE(info.held_by_me);
    EXPECT_EQ(raw({"HLEN", key}).integer, 4) << "mode and three readers";
    EXPECT_EQ(raw({"EXISTS", redisson_reader_timeout(key, kJavaReader)}).integer, 1);
    EXPECT_EQ(expect_error([&] { (void)second.try_lock(); }).errc(), Errc::bad_option) << "a reader cannot upgrade";
    EXPECT_FALSE(raw(redisson_write_lock_command(key, kJavaWriter)).is_nil()) << "a Java writer got in";
    SharedMutex writer(test_client(), key, rw_options());
    EXPECT_FALSE(writer.try_lock());
    second.unlock_shared();
  }
  EXPECT_EQ(raw(redisson_read_unlock_command(key, kJavaReader)).integer, 1) << "the last reader deletes the lock";
  EXPECT_EQ(raw({"EXISTS", key}).integer, 0);
}

TEST(RedissonRwLock, AWriterHoldsAloneAgainstBothSides) {
  const std::string key = unique_key();
  SharedMutex writer(test_client(), key, rw_options());
  SharedMutex reader(test_client(), key, rw_options());
  {
    std::unique_lock writing(writer);
    EXPECT_EQ(field_value(key, "mode"), "write");
    EXPECT_EQ(raw({"HLEN", key}).integer, 2);
    EXPECT_FALSE(reader.try_lock_shared());
    EXPECT_FALSE(reader.try_lock());
    EXPECT_FALSE(raw(redisson_read_lock_command(key, kJavaReader)).is_nil());
    EXPECT_FALSE(raw(redisson_write_lock_command(key, kJavaWriter)).is_nil());
  }
  EXPECT_EQ(raw({"EXISTS", key}).integer, 0);
  // And the other way round: a Java writer keeps C++ readers and writers out.
  ASSERT_TRUE(raw(redisson_write_lock_command(key, kJavaWriter)).is_nil());
  EXPECT_FALSE(reader.try_lock_shared());
  EXPECT_FALSE(writer.try_lock());
  EXPECT_EQ(raw(redisson_write_unlock_command(key, kJavaWriter)).integer, 1);
  EXPECT_TRUE(reader.try_lock_shared());
}

TEST(RedissonRwLock, AJavaReadersUnlockKeepsALiveCppReader) {
  const std::string key = unique_key();
  SharedMutex reader(test_client(), key, rw_options());
  ASSERT_TRUE(raw(redisson_read_lock_command(key, kJavaReader)).is_nil());
  ASSERT_TRUE(reader.try_lock_shared());
  // The Java reader leaves first: its unlock scans the readers' timeout keys, finds ours alive,
  // and keeps the lock (0), its TTL that of our lease.
  EXPECT_EQ(raw(redisson_read_unlock_command(key, kJavaReader)).integer, 0);
  EXPECT_EQ(raw({"EXISTS", key}).integer, 1);
  EXPECT_TRUE(reader.owns_shared());
  EXPECT_EQ(reader.inspect().held_by_me, true);
  EXPECT_FALSE(raw(redisson_write_lock_command(key, kJavaWriter)).is_nil());
  // Ours is the last: deleted, and "0" tells a Java writer waiting on the channel.
  PeerSubscriber java_writer(test_dir() + "/redis.sock", "SUBSCRIBE", redisson_rwlock_channel(key));
  ASSERT_TRUE(java_writer.subscribed());
  reader.unlock_shared();
  EXPECT_FALSE(reader.last_error());
  EXPECT_EQ(java_writer.next_message(), "0");
  EXPECT_TRUE(raw(redisson_write_lock_command(key, kJavaWriter)).is_nil());
}

TEST(RedissonRwLock, ACppWriterWakesOnTheLastJavaReadersUnlock) {
  const std::string key = unique_key();
  ASSERT_TRUE(raw(redisson_read_lock_command(key, kJavaReader)).is_nil());
  SharedMutex writer(test_client(), key, rw_options());
  auto waited = std::async(std::launch::async, [&] { return writer.try_lock_for(seconds(50)); });
  ASSERT_TRUE(eventually([&] { return rw_subscribers(key) > 0; }));
  EXPECT_EQ(raw(redisson_read_unlock_command(key, kJavaReader)).integer, 1);
  ASSERT_TRUE(acquires(waited)) << "the Java reader's release did not wake the C++ writer";
  EXPECT_EQ(field_value(key, "mode"), "write");
}

TEST(RedissonRwLock, CppReadersWakeOnAJavaWritersUnlockAndAJavaWaiterOnOurs) {
  const std::string key = unique_key();
  ASSERT_TRUE(raw(redisson_write_lock_command(key, kJavaWriter)).is_nil());
  SharedMutex first(test_client(), key, rw_options());
  SharedMutex second(test_client(), key, rw_options());
  auto first_waits = std::async(std::launch::async, [&] { return first.try_lock_shared_for(seconds(50)); });
  auto second_waits = std::async(std::launch::async, [&] { return second.try_lock_shared_for(seconds(50)); });
  ASSERT_TRUE(eventually([&] { return rw_subscribers(key) > 0; }));
  // Java's write unlock sends "1": every waiter wakes, and both readers get in.
  EXPECT_EQ(raw(redisson_write_unlock_command(key, kJavaWriter)).integer, 1);
  ASSERT_TRUE(acquires(first_waits));
  ASSERT_TRUE(acquires(second_waits));

  // Now a C++ writer's unlock wakes a Java waiter: "1" on the same channel.
  first.unlock_shared();
  second.unlock_shared();
  SharedMutex writer(test_client(), key, rw_options());
  writer.lock();
  PeerSubscriber java_waiter(test_dir() + "/redis.sock", "SUBSCRIBE", redisson_rwlock_channel(key));
  ASSERT_TRUE(java_waiter.subscribed());
  writer.unlock();
  EXPECT_EQ(java_waiter.next_message(), "1");
  EXPECT_TRUE(raw(redisson_read_lock_command(key, kJavaReader)).is_nil());
}

TEST(RedissonRwLock, AWriterThatReadsKeepsReadingAfterItsUnlock) {
  const std::string key = unique_key();
  SharedMutex holder(test_client(), key, rw_options());
  holder.lock();
  ASSERT_TRUE(holder.try_lock_shared()) << "a writer may read (Redisson's downgrade)";
  EXPECT_FALSE(raw(redisson_read_lock_command(key, kJavaReader)).is_nil()) << "others may not, while it writes";
  holder.unlock();
  EXPECT_FALSE(holder.owns_lock());
  EXPECT_TRUE(holder.owns_shared());
  EXPECT_EQ(field_value(key, "mode"), "read");
  EXPECT_TRUE(raw(redisson_read_lock_command(key, kJavaReader)).is_nil()) << "now a reader like any other";
  EXPECT_FALSE(raw(redisson_write_lock_command(key, kJavaWriter)).is_nil());
  EXPECT_EQ(raw(redisson_read_unlock_command(key, kJavaReader)).integer, 0);
  holder.unlock_shared();
  EXPECT_EQ(raw({"EXISTS", key}).integer, 0);
}

TEST(RedissonRwLock, TheWatchdogRenewsItsOwnReaderKeysAndNoOneElses) {
  const std::string key = unique_key();
  MutexOptions options = rw_options();
  options.lease = milliseconds(1500);  // renewed every 500 ms
  const Client client = test_client();
  SharedMutex reader(client, key, options);
  ASSERT_TRUE(reader.try_lock_shared());
  // A Java reader with a ten-minute lease: a renewal of every reader's keys would cut its key
  // down to our 1.5 s.
  ASSERT_TRUE(raw(redisson_read_lock_command(key, kJavaReader, "600000")).is_nil());
  std::string our_field;
  for (const Reply& field : raw({"HKEYS", key}).elements) {
    if (field.str != "mode" && field.str != kJavaReader) our_field = field.str;
  }
  const std::string ours = redisson_reader_timeout(key, our_field);
  ASSERT_EQ(raw({"EXISTS", ours}).integer, 1);
  // Our key evicted (as maxmemory may): the renewal writes it again, while our field stands.
  raw({"DEL", ours});
  const auto renewed = client.stats().renewals;
  ASSERT_TRUE(eventually([&] { return client.stats().renewals >= renewed + 2; }));
  EXPECT_TRUE(reader.owns_shared());
  EXPECT_GT(raw({"PTTL", ours}).integer, 0) << "our timeout key was not renewed";
  EXPECT_LE(raw({"PTTL", ours}).integer, 1500);
  EXPECT_GT(raw({"PTTL", redisson_reader_timeout(key, kJavaReader)}).integer, 300000)
      << "the Java reader's timeout key was renewed by us";
  EXPECT_GT(raw({"PTTL", key}).integer, 300000) << "our renewal cut the lock's TTL below the Java reader's";
  // The Java reader leaves; ours is the last: the lock goes.
  EXPECT_EQ(raw(redisson_read_unlock_command(key, kJavaReader)).integer, 0);
  reader.unlock_shared();
  EXPECT_FALSE(reader.last_error());
  EXPECT_EQ(raw({"EXISTS", key}).integer, 0);
}

TEST(RedissonRwLock, ADeadReadersFieldStaysUntilAnUnlockFindsNoLiveReader) {
  const std::string key = unique_key();
  SharedMutex reader(test_client(), key, rw_options());
  ASSERT_TRUE(reader.try_lock_shared());
  // A Java reader whose JVM died: its timeout key gone, its field left behind.
  ASSERT_TRUE(raw(redisson_read_lock_command(key, kJavaReader)).is_nil());
  raw({"DEL", redisson_reader_timeout(key, kJavaReader)});
  reader.unlock_shared();
  EXPECT_FALSE(reader.last_error());
  EXPECT_EQ(raw({"EXISTS", key}).integer, 0) << "a dead reader kept the lock";
}

TEST(RedissonRwLock, AReaderCannotUpgradeAndUnlockingTheSideNotHeldIsRefused) {
  const std::string key = unique_key();
  SharedMutex holder(test_client(), key, rw_options());
  ASSERT_TRUE(holder.try_lock_shared());
  EXPECT_EQ(expect_error([&] { holder.lock(); }).errc(), Errc::bad_option);
  EXPECT_EQ(expect_error([&] { (void)holder.try_lock_for(seconds(30)); }).errc(), Errc::bad_option);
  holder.unlock();  // the write side is not held
  EXPECT_EQ(holder.last_error(), make_error_code(Errc::bad_option));
  EXPECT_TRUE(holder.owns_shared()) << "unlock() released the read side";
  holder.unlock_shared();
  EXPECT_FALSE(holder.last_error());
  EXPECT_EQ(raw({"EXISTS", key}).integer, 0);
}

TEST(RedissonRwLock, AWriterThatReadsAndReachesMaxHoldKeepsTheLockWhileItReads) {
  const std::string key = unique_key();
  MutexOptions options = rw_options();
  options.lease = milliseconds(900);
  options.watchdog.max_hold = milliseconds(1000);
  const Client client = test_client();
  SharedMutex holder(client, key, options);
  holder.lock();
  // The read side taken a renewal later: its own max_hold ends a good while after the write side's.
  ASSERT_TRUE(eventually([&] { return client.stats().renewals >= 1; }));
  ASSERT_TRUE(holder.try_lock_shared());
  // Watched closely from the write side's last renewal on: while the read side says it reads
  // (its own max_hold has not come), the lock must be there.
  int looks = 0;
  int missing = 0;
  const auto give_up = std::chrono::steady_clock::now() + seconds(10);
  while (holder.owns_shared() && std::chrono::steady_clock::now() < give_up && looks < 2000) {
    if (!holder.owns_lock()) ++looks;
    if (raw({"EXISTS", key}).integer == 0 && holder.owns_shared()) ++missing;
    std::this_thread::sleep_for(milliseconds(1));
  }
  EXPECT_FALSE(holder.owns_lock()) << "the write side outlived its max_hold";
  EXPECT_GT(looks, 0);
  EXPECT_EQ(missing, 0) << "the write side's last renewal cut the read hold short";
}

TEST(RedissonRwLock, RefusesKeysOfOtherTypesAndOtherLocksHashesUnchanged) {
  const std::string key = unique_key();
  SharedMutex lock(test_client(), key, rw_options());
  raw({"SET", key, "not-a-lock"});
  EXPECT_EQ(expect_error([&] { (void)lock.try_lock_shared(); }).errc(), Errc::wrong_type);
  EXPECT_EQ(expect_error([&] { (void)lock.try_lock(); }).errc(), Errc::wrong_type);
  EXPECT_EQ(raw({"GET", key}).str, "not-a-lock");
  // An RLock held at the same name (a hash without 'mode') is not written into.
  raw({"DEL", key});
  ASSERT_TRUE(raw(redisson_lock_command(key)).is_nil());
  EXPECT_EQ(expect_error([&] { (void)lock.try_lock_shared(); }).errc(), Errc::wrong_type);
  EXPECT_EQ(expect_error([&] { (void)lock.try_lock(); }).errc(), Errc::wrong_type);
  EXPECT_EQ(raw({"HLEN", key}).integer, 1);
  EXPECT_EQ(raw({"HGET", key, kJavaField}).str, "1");
}

TEST(RedissonRwLock, OptionsItsLayoutCannotMeanAreRefused) {
  MutexOptions token = rw_options();
  token.strategy = StrategyKind::token;
  EXPECT_EQ(expect_error([&] { SharedMutex(test_client(), "k", token); }).errc(), Errc::bad_option);
  MutexOptions fair = rw_options();
  fair.wait_mode = WaitMode::fair;
  EXPECT_EQ(expect_error([&] { SharedMutex(test_client(), "k", fair); }).errc(), Errc::bad_option);
  MutexOptions fenced = rw_options();
  fenced.token.fencing = true;
  EXPECT_EQ(expect_error([&] { SharedMutex(test_client(), "k", fenced); }).errc(), Errc::bad_option);
  EXPECT_EQ(expect_error([&] { SharedMutex(test_client(), "", rw_options()); }).errc(), Errc::bad_option);
}

// A Java peer's thread: locks one side with Redisson's scripts, polling every millisecond, and
// checks exclusion as lock_contender does, until `stop` exists; `acquired` counts as it goes.
// Returns its violations.
long java_side(const std::string& key, const std::string& check_key, bool reader, const std::string& field,
               std::atomic<long>& acquired) {
  const std::string stop = check_key + ":stop";
  const std::string mine = reader ? check_key + ":readers" : check_key;
  const std::string others = reader ? check_key : check_key + ":readers";
  long violations = 0;
  while (raw({"EXISTS", stop}).integer == 0) {
    const Reply locked = raw(reader ? redisson_read_lock_command(key, field) : redisson_write_lock_command(key, field));
    if (!locked.is_nil()) {
      std::this_thread::sleep_for(milliseconds(1));
      continue;
    }
    const std::int64_t held = raw({"INCR", mine}).integer;
    const std::string beside = raw({"GET", others}).str;
    if ((!reader && held != 1) || (!beside.empty() && beside != "0")) ++violations;
    ++acquired;
    raw({"DECR", mine});
    raw(reader ? redisson_read_unlock_command(key, field) : redisson_write_unlock_command(key, field));
  }
  return violations;
}

TEST(RedissonRwLock, AMixedFleetOfProcessesAndJavaPeersNeverPutsAWriterBesideAnyone) {
  const std::string key = unique_key();
  const std::string check = key + ":check";
  const std::string stop = check + ":stop";
  std::atomic<long> reader_acquisitions{0};
  std::atomic<long> writer_acquisitions{0};
  // The processes run until the Java threads have each been in several times (a polling Java
  // writer may wait long among readers: Redisson has no writer preference), and a while more.
  std::vector<std::string> commands;
  for (const char* side : {"read", "read", "write", "write"}) {
    commands.push_back(contender_command("rwlock", side, key, check, 1'000'000, 30000, stop));
  }
  const MixedFleetRun run = run_mixed_fleet(
      commands, stop,
      {[&] { return java_side(key, check, true, kJavaReader, reader_acquisitions); },
       [&] { return java_side(key, check, false, kJavaWriter, writer_acquisitions); }},
      [&] { return reader_acquisitions >= 20 && writer_acquisitions >= 5 && raw({"EXISTS", check}).integer == 1; });
  EXPECT_TRUE(run.joined) << "the Java threads did not take part: reader " << reader_acquisitions << ", writer "
                          << writer_acquisitions;
  expect_no_violation(run);
}

TEST(RedissonRwLockOnCluster, AllKeysInTheLocksSlotAndWakeUpsBySpublish) {
  ClusterTopology cluster(3);
  const std::string key = unique_key();
  ServerProcess& master = *cluster.nodes[cluster.owner_of_slot(cluster.slot_of(key))];
  const Client client(cluster.url());
  SharedMutex first(client, key, rw_options());
  SharedMutex second(client, key, rw_options());
  ASSERT_TRUE(first.try_lock_shared());
  ASSERT_TRUE(second.try_lock_shared());
  EXPECT_EQ(master.command({"HGET", key, "mode"}), "read");
  ASSERT_EQ(master.command(redisson_write_lock_command(key, kJavaWriter)) == "(nil)", false);
  {
    PeerSubscriber java_writer(master.port(), "SSUBSCRIBE", redisson_rwlock_channel(key));
    ASSERT_TRUE(java_writer.subscribed());
    first.unlock_shared();
    second.unlock_shared();
    EXPECT_EQ(java_writer.next_message(), "0");
  }  // the Java writer stops listening: the waiter below is then the channel's one subscriber
  ASSERT_EQ(master.command(redisson_write_lock_command(key, kJavaWriter)), "(nil)");
  auto waited = std::async(std::launch::async, [&] { return first.try_lock_shared_for(seconds(50)); });
  ASSERT_TRUE(eventually([&] { return has_one_shard_subscriber(master, redisson_rwlock_channel(key)); }));
  EXPECT_EQ(master.command(redisson_write_unlock_command(key, kJavaWriter, "spublish")), "1");
  ASSERT_TRUE(acquires(waited)) << "the Java writer's SPUBLISH did not wake the C++ reader";
}

}  // namespace
}  // namespace lockbridge::testing
