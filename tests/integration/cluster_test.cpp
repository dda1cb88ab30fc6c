// A redis-cluster:// Client against a real 3-master Redis Cluster started here on loopback (and a
// 3+3 one for failover): locks live on the master of their key's slot with every companion key
// beside them, a slot resharded or a master failed over under running lockers costs no exclusion
// and reaches no caller as an error beyond the documented ones, sharded release notifications
// wake waiters, and audit, convert, bench and compare walk or use every master.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "lockbridge/multi_mutex.hpp"
#include "redis_test_support.hpp"
#include "strategies/companion_keys.hpp"
#include "topology.hpp"

namespace lockbridge::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::HasSubstr;

// Several threads, each with its own Client (as separate processes would have), lock and unlock
// one key until stopped, counting what each saw: acquisitions, overlaps (two holders at once,
// by an in-process count) and the errors that reached them, by code.
class Lockers {
 public:
  Lockers(const std::string& url, const std::string& key, const MutexOptions& options, int threads) {
    for (int i = 0; i < threads; ++i) {
      workers_.emplace_back([this, url, key, options] {
        Mutex mutex(Client(url, quick_failing_client()), key, options);
        mutex.on_release_error([this](const Error& error) { record(error.code(), error.what()); });
        while (!stop_.load()) {
          try {
            if (!mutex.try_lock_for(seconds(5))) continue;
            if (inside_.fetch_add(1) != 0) overlaps_.fetch_add(1);
            std::this_thread::yield();
            inside_.fetch_sub(1);
            mutex.unlock();
            acquisitions_.fetch_add(1);
          } catch (const Error& error) {
            record(error.code(), error.what());
            std::this_thread::sleep_for(milliseconds(20));
          }
        }
      });
    }
  }
  ~Lockers() { stop(); }
  void stop() {
    stop_ = true;
    for (std::thread& worker : workers_) {
      if (worker.joinable()) worker.join();
    }
  }
  // Blocks until `more` acquisitions beyond the current count happened (bounded by eventually()).
  bool make_progress(int more) const {
    const int wanted = acquisitions_.load() + more;
    return eventually([&] { return acquisitions_.load() >= wanted; });
  }
  int overlaps() const { return overlaps_.load(); }
  std::string last_error() const {
    std::lock_guard lock(mutex_);
    return last_error_;
  }
  std::map<std::string, int> errors() const {
    std::lock_guard lock(mutex_);
    return errors_;
  }

 private:
  void record(std::error_code code, const std::string& what) {
    std::lock_guard lock(mutex_);
    ++errors_[code.message()];
    last_error_ = what;
  }
  std::atomic<bool> stop_{false};
  std::atomic<int> inside_{0};
  std::atomic<int> overlaps_{0};
  std::atomic<int> acquisitions_{0};
  mutable std::mutex mutex_;
  std::map<std::string, int> errors_;
  std::string last_error_;
  std::vector<std::thread> workers_;
};

// For assertion messages: the errors seen, by code, and the last one's text.
std::ostream& operator<<(std::ostream& out, const Lockers& lockers) {
  return out << "errors " << ::testing::PrintToString(lockers.errors()) << ", last: " << lockers.last_error();
}

// A fresh key whose slot is served by a master other than nodes[master].
std::string key_on_another_master(const ClusterTopology& cluster, int master) {
  for (int i = 0;; ++i) {
    std::string candidate = unique_key(std::to_string(i));
    if (cluster.owner_of_slot(cluster.slot_of(candidate)) != master) return candidate;
  }
}

class Cluster : public ::testing::Test {
 protected:
  ClusterTopology cluster_{3};
  const Client client_{cluster_.url(), topology_client()};
};

TEST_F(Cluster, EachLockLivesOnTheMasterOfItsSlot) {
  // Random keys until every master has had one: twelve fixed keys missed a master one run in
  // fifty ((2/3)^12 per master); sixty leave a chance of about 1e-10.
  std::set<int> owners;
  for (int i = 0; owners.size() < 3 && i < 60; ++i) {
    const std::string key = unique_key(std::to_string(i));
    Mutex mutex(client_, key, one_attempt_options());
    ASSERT_TRUE(mutex.try_lock()) << key;
    const int owner = cluster_.owner_of_slot(cluster_.slot_of(key));
    owners.insert(owner);
    EXPECT_EQ(cluster_.nodes[owner]->command({"GET", key}), mutex.value());
    for (int other = 0; other < 3; ++other) {
      if (other != owner) {
        EXPECT_THAT(cluster_.nodes[other]->command({"GET", key}), ::testing::StartsWith("MOVED"));
      }
    }
    EXPECT_TRUE(mutex.inspect().held_by_me);
    EXPECT_TRUE(mutex.extend(seconds(30)));
    mutex.unlock();
    EXPECT_FALSE(mutex.last_error());
    EXPECT_EQ(cluster_.nodes[owner]->command({"EXISTS", key}), "0");
  }
  EXPECT_EQ(owners.size(), 3U) << "sixty random keys should have reached every master";
  // Every master was reached on the port the topology gives clients: its TLS port in the TLS
  // copy (the slot map learnt over TLS names TLS ports), and never on its plain one there.
  EXPECT_EQ(client_.url().tls, topology_tls());
  for (const auto& node : cluster_.nodes) {
    EXPECT_GE(connections_on_port(*node, node->client_port()), 1) << node->address();
    if (node->client_port() != node->port()) {
      EXPECT_EQ(connections_on_port(*node, node->port()), 0) << node->address();
    }
  }
}

TEST_F(Cluster, CompanionKeysShareTheLocksSlotSoFencingAndFairModeWork) {
  const std::string key = unique_key();
  MutexOptions fenced = one_attempt_options();
  fenced.token.fencing = true;
  Mutex first(client_, key, fenced);
  ASSERT_TRUE(first.try_lock());
  const auto fence = first.fence();
  first.unlock();
  Mutex second(client_, key, fenced);
  ASSERT_TRUE(second.try_lock());
  EXPECT_GT(second.fence(), fence);
  second.unlock();

  MutexOptions fair = one_attempt_options();
  fair.wait_mode = WaitMode::fair;
  fair.acquire_timeout = seconds(10);
  Mutex holder(client_, key, fair);
  Mutex waiter(Client(cluster_.url(), topology_client()), key, fair);
  ASSERT_TRUE(holder.try_lock());
  auto waited = std::async(std::launch::async, [&] { waiter.lock(); });
  EXPECT_EQ(waited.wait_for(milliseconds(100)), std::future_status::timeout);
  holder.unlock();
  ASSERT_EQ(waited.wait_for(seconds(30)), std::future_status::ready);
  waited.get();
  EXPECT_TRUE(waiter.owns_lock());
}

TEST_F(Cluster, AMultiKeyLockNeedsOneSlotAndSaysWhichDiffer) {
  const std::string a = "lbtest:cluster:a";
  const std::string b = "lbtest:cluster:b";
  ASSERT_NE(cluster_.slot_of(a), cluster_.slot_of(b));
  const Error error = expect_error([&] { MultiMutex(client_, {a, b}, one_attempt_options()); });
  EXPECT_EQ(error.errc(), Errc::bad_option);
  EXPECT_THAT(error.what(), HasSubstr("hash slot " + std::to_string(cluster_.slot_of(a))));
  EXPECT_THAT(error.what(), HasSubstr("slot " + std::to_string(cluster_.slot_of(b))));
  EXPECT_THAT(error.what(), HasSubstr("hash tag"));
  const std::string tag = "{" + unique_key() + "}";
  MultiMutex both(client_, {tag + ":a", tag + ":b"}, one_attempt_options());
  ASSERT_TRUE(both.try_lock());
  both.unlock();
}

TEST_F(Cluster, AKeyWithABraceButNoHashTagIsRefusedWhereItsCompanionsWouldLiveElsewhere) {
  const std::string odd = "lbtest:x}" + unique_key();
  const Error error = expect_error([&] { Mutex(client_, odd, one_attempt_options()); });
  EXPECT_EQ(error.errc(), Errc::bad_option);
  EXPECT_THAT(error.what(), HasSubstr("needs a hash tag"));
  Mutex tagged(client_, "{orders}" + odd, one_attempt_options());
  ASSERT_TRUE(tagged.try_lock());
  tagged.unlock();
  EXPECT_FALSE(tagged.last_error());
  // Redisson names its channel after a key containing '{' without adding braces, so "x{y" (no
  // hash tag) would announce in another slot; lockbridge's own channel wraps the key in braces,
  // which keeps "x{y" in its slot.
  const std::string open_brace = "lbtest:x{" + unique_key();
  EXPECT_EQ(expect_error([&] { Mutex(client_, open_brace, one_attempt_options(StrategyKind::redisson)); }).errc(),
            Errc::bad_option);
  Mutex token(client_, open_brace, one_attempt_options());
  ASSERT_TRUE(token.try_lock());
  token.unlock();
  EXPECT_FALSE(token.last_error());
  // The faithful preset announces nothing and has no companion keys: the key is fine as it is.
  Mutex faithful(client_, odd, MutexOptions::jedis_lock_1_0());
  ASSERT_TRUE(faithful.try_lock());
  faithful.unlock();
  EXPECT_FALSE(faithful.last_error());
}

class ClusterNotify : public ::testing::TestWithParam<StrategyKind> {};

TEST_P(ClusterNotify, AReleaseWakesAWaiterWithASixtySecondPollInterval) {
  ClusterTopology cluster(3);
  const std::string key = unique_key();
  const MutexOptions options = minute_poll_waiter(one_attempt_options(GetParam()));
  Mutex holder(Client(cluster.url(), topology_client()), key, options);
  const Client waiter_client(cluster.url(), topology_client());
  Mutex waiter(waiter_client, key, options);
  ASSERT_TRUE(holder.try_lock());
  const auto before = waiter_client.stats().round_trips;
  auto waited = std::async(std::launch::async, [&] { waiter.lock(); });
  EXPECT_TRUE(eventually([&] { return waiter_client.stats().round_trips - before >= 3; }));
  EXPECT_EQ(waited.wait_for(milliseconds(200)), std::future_status::timeout);
  holder.unlock();
  ASSERT_EQ(waited.wait_for(seconds(30)), std::future_status::ready) << "the release did not wake the waiter";
  waited.get();
  EXPECT_TRUE(waiter.owns_lock());
}

INSTANTIATE_TEST_SUITE_P(Strategies, ClusterNotify,
                         ::testing::Values(StrategyKind::token, StrategyKind::legacy, StrategyKind::redisson),
                         [](const auto& param_info) { return std::string(to_string(param_info.param)); });

// A waiter whose Client read the slot map before the lock's slot moved: its attempt is redirected
// (MOVED) and corrects the map, and its subscription must then go to the new master, where the
// release is announced, not to the former one, which would answer MOVED and announce nothing.
TEST(ClusterNotifyAfterAMove, AWaiterWithAStaleMapSubscribesOnTheSlotsNewMaster) {
  ClusterTopology cluster(3);
  const std::string key = unique_key();
  const int slot = cluster.slot_of(key);
  const MutexOptions options = minute_poll_waiter(one_attempt_options());
  const Client waiter_client(cluster.url(), topology_client());
  Mutex waiter(waiter_client, key, options);
  EXPECT_FALSE(waiter.inspect().exists);  // the waiter's Client has read the map
  cluster.move_slot(slot, (cluster.owner_of_slot(slot) + 1) % 3);
  Mutex holder(Client(cluster.url(), topology_client()), key, options);
  ASSERT_TRUE(holder.try_lock());
  auto waited = std::async(std::launch::async, [&] { waiter.lock(); });
  ServerProcess& owner = *cluster.nodes[cluster.owner_of_slot(slot)];
  const std::string channel = detail::release_channel(key);
  ASSERT_TRUE(eventually([&] { return has_one_shard_subscriber(owner, channel); }))
      << "the waiter did not subscribe on the slot's new master";
  holder.unlock();
  ASSERT_EQ(waited.wait_for(seconds(30)), std::future_status::ready) << "the release did not wake the waiter";
  waited.get();
  EXPECT_TRUE(waiter.owns_lock());
}

// A waiter subscribed and waiting when its lock's slot moves (the lock moves with it): Redis drops
// the subscription on the former master, and the waiter subscribes on the new one, where the
// release is announced.
TEST(ClusterNotifyAfterAMove, AWaiterWhoseSlotMovesWhileItWaitsSubscribesOnTheNewMaster) {
  ClusterTopology cluster(3);
  const std::string key = unique_key();
  const int slot = cluster.slot_of(key);
  const int home = cluster.owner_of_slot(slot);
  MutexOptions options = minute_poll_waiter(one_attempt_options());
  options.lease = seconds(30);
  Mutex holder(Client(cluster.url(), topology_client()), key, options);
  ASSERT_TRUE(holder.try_lock());
  Mutex waiter(Client(cluster.url(), topology_client()), key, options);
  auto waited = std::async(std::launch::async, [&] { waiter.lock(); });
  const std::string channel = detail::release_channel(key);
  ASSERT_TRUE(eventually([&] { return has_one_shard_subscriber(*cluster.nodes[home], channel); }));
  const int next = (home + 1) % 3;
  cluster.move_slot(slot, next);
  ASSERT_TRUE(eventually([&] { return has_one_shard_subscriber(*cluster.nodes[next], channel); }))
      << "the waiter did not follow the slot";
  holder.unlock();
  EXPECT_FALSE(holder.last_error());
  ASSERT_EQ(waited.wait_for(seconds(30)), std::future_status::ready) << "the release did not wake the waiter";
  waited.get();
  EXPECT_TRUE(waiter.owns_lock());
}

// The reshard test of issue 7: a slot moves to another master and back while four lockers of a key
// in it keep locking; ASK and MOVED are followed, and nothing reaches them.
class ClusterReshard : public ::testing::TestWithParam<const char*> {};

TEST_P(ClusterReshard, LockersOfAKeyInAMovingSlotSeeNoOverlapAndNoError) {
  lock_through_a_reshard(GetParam(), [](const std::string& url, const std::string& key, const MutexOptions& options) {
    return std::make_unique<Lockers>(url, key, options, 4);
  });
}

INSTANTIATE_TEST_SUITE_P(Strategies, ClusterReshard,
                         ::testing::Values("token", "legacy_hardened", "legacy_faithful", "redisson"), kVariantName);

// A master dies; its replica is promoted by the cluster. Lockers of a key it served see io or
// timeout errors (the documented ones: the server is unreachable) until the promotion, then lock
// on the new master, with no overlap. A lock whose release the crash swallowed was replicated:
// it stays on the new master until its (short, here) lease ends. A lock the replica acknowledged
// (replica_ack) before the crash is still held there, by its holder only.
class ClusterFailover : public ::testing::TestWithParam<const char*> {};

TEST_P(ClusterFailover, LockingResumesOnThePromotedReplica) {
  ClusterTopology cluster(3, 1);
  const std::string key = unique_key();
  const int owner = cluster.owner_of_slot(cluster.slot_of(key));
  const bool faithful = std::string_view(GetParam()) == "legacy_faithful";
  MutexOptions acknowledged = variant_options(GetParam());
  acknowledged.replica_ack.replicas = 1;
  acknowledged.replica_ack.timeout = milliseconds(2000);
  const std::string held_key = "{" + key + "}:held";  // in the same slot
  std::optional<Mutex> holder;
  if (!faithful) {  // the faithful preset refuses replica_ack (its release could not be undone safely)
    holder.emplace(Client(cluster.url(), quick_failing_client()), held_key, acknowledged);
    ASSERT_TRUE(holder->try_lock());
    ASSERT_EQ(holder->replicas_acknowledged(), 1);
  }
  MutexOptions options = variant_options(GetParam());
  options.lease = milliseconds(1500);
  Lockers lockers(cluster.url(), key, options, 3);
  // A key on a master that stays up: while the cluster is down (a slot has no master until the
  // promotion) its lockers see the same io errors, and nothing else.
  const std::string elsewhere = key_on_another_master(cluster, owner);
  Lockers bystanders(cluster.url(), elsewhere, options, 2);
  ASSERT_TRUE(lockers.make_progress(30));
  ASSERT_TRUE(bystanders.make_progress(30));
  cluster.nodes[owner]->kill();
  cluster.wait_for_new_owner(cluster.slot_of(key), owner);
  ASSERT_TRUE(lockers.make_progress(30)) << lockers;
  ASSERT_TRUE(bystanders.make_progress(30)) << bystanders;
  lockers.stop();
  bystanders.stop();
  for (const Lockers* group : {&lockers, &bystanders}) {
    EXPECT_EQ(group->overlaps(), 0);
    for (const auto& [error, count] : group->errors()) {
      EXPECT_THAT(error,
                  ::testing::AnyOf(make_error_code(Errc::io).message(), make_error_code(Errc::timeout).message()))
          << count << " times; last: " << group->last_error();
    }
  }
  if (faithful) return;
  // The other nodes learn of the promotion by gossip: until the one a new Client asks first has,
  // it sends that Client to the dead master (seen on a loaded machine). Wait for it.
  const auto routed = [&] {
    try {
      (void)Client(cluster.url(), topology_client()).command({"EXISTS", held_key});
      return true;
    } catch (const Error&) {
      return false;
    }
  };
  for (int i = 0; i < 300 && !routed(); ++i) std::this_thread::sleep_for(milliseconds(100));
  Mutex rival(Client(cluster.url(), topology_client()), held_key, variant_options(GetParam()));
  expect_held_only_by(*holder, rival);  // the acknowledged lock survived the failover
}

INSTANTIATE_TEST_SUITE_P(Strategies, ClusterFailover,
                         ::testing::Values("token", "legacy_hardened", "legacy_faithful", "redisson"), kVariantName);

// The limit of asynchronous replication, as with Sentinel: a lock its master acknowledged but never
// passed on is gone once the replica is promoted, and a second client takes it while the first
// still holds it. The replica is cut off before the lock is written, so it misses it for certain;
// the fence counter (in the lock's slot) missed that INCR too, so the next fence is drawn again.
TEST(ClusterFailoverLoss, ALockThePromotedReplicaNeverReceivedIsLostAndItsFenceIsDrawnAgain) {
  ClusterTopology cluster(3, 1);
  const std::string key = unique_key();
  const int owner = cluster.owner_of_slot(cluster.slot_of(key));
  const int replica = cluster.replica_of(owner);
  MutexOptions fenced = one_attempt_options();
  fenced.token.fencing = true;  // the default 60 s lease outlives the failover
  Mutex first(Client(cluster.url(), quick_failing_client()), key, fenced);
  Mutex second(Client(cluster.url(), quick_failing_client()), key, fenced);
  // The first Client reads the slot map now: during the cut, the paused replica would be a seed
  // that accepts the connection and never answers, and the pause must stay short.
  EXPECT_FALSE(first.inspect().exists);

  cut_off_replica(*cluster.nodes[owner], *cluster.nodes[replica]);
  ASSERT_TRUE(first.try_lock());
  ASSERT_TRUE(first.fence().has_value());
  cluster.nodes[owner]->kill();
  cluster.nodes[replica]->resume();  // only now: it finds its master gone, not the lock to resync
  ASSERT_EQ(cluster.wait_for_new_owner(cluster.slot_of(key), owner), replica);
  EXPECT_EQ(cluster.nodes[replica]->command({"EXISTS", key}), "0");

  // Until every node has heard of the promotion, a call may still be routed to the dead master.
  expect_lost_to_a_second_holder(first, second, [&] { return cluster.nodes[replica]->command({"GET", key}); });
}

class ClusterWatchdog : public Cluster, public ::testing::WithParamInterface<const char*> {};

TEST_P(ClusterWatchdog, RenewsLocksOnEveryMaster) {
  MutexOptions options = variant_options(GetParam());
  // A lease a loaded machine cannot starve the watchdog past (sanitizers, parallel tests).
  options.lease = milliseconds(1500);
  options.watchdog.enabled = true;
  std::vector<std::unique_ptr<Mutex>> held;
  std::set<int> owners;
  for (int i = 0; i < 9 || (owners.size() < 3 && i < 60); ++i) {  // nine or more, on every master
    const std::string key = unique_key(std::to_string(i));
    owners.insert(cluster_.owner_of_slot(cluster_.slot_of(key)));
    held.push_back(std::make_unique<Mutex>(client_, key, options));
    ASSERT_TRUE(held.back()->try_lock());
  }
  ASSERT_EQ(owners.size(), 3U);
  const auto renewals = client_.stats().renewals;
  ASSERT_TRUE(
      eventually([&] { return client_.stats().renewals >= renewals + held.size() * 4; }));  // past several leases
  for (const auto& mutex : held) {
    EXPECT_TRUE(mutex->owns_lock());
    EXPECT_TRUE(mutex->inspect().held_by_me);
    mutex->unlock();
    EXPECT_FALSE(mutex->last_error());
  }
}

INSTANTIATE_TEST_SUITE_P(Strategies, ClusterWatchdog, ::testing::Values("token", "legacy_hardened", "redisson"),
                         kVariantName);

// The watchdog while one lock's master fails over: that lock's renewals fail until the replica is
// promoted and then reach it (the replica acknowledged the lock, so it is there), while the
// renewals of a lock on a healthy master go on meanwhile. Both are held throughout.
TEST(ClusterWatchdogFailover, RenewsOnThePromotedReplicaAndKeepsRenewingTheOthers) {
  ClusterTopology cluster(3, 1);
  const Client client(cluster.url(), quick_failing_client());
  MutexOptions options = one_attempt_options();
  options.lease = milliseconds(6000);  // renewed every 2 s; a failover here takes one or two
  options.watchdog.enabled = true;
  options.replica_ack.replicas = 1;
  options.replica_ack.timeout = milliseconds(2000);
  const std::string failing_key = unique_key("failing");
  const int failing = cluster.owner_of_slot(cluster.slot_of(failing_key));
  const std::string healthy_key = key_on_another_master(cluster, failing);
  Mutex on_failing(client, failing_key, options);
  Mutex on_healthy(client, healthy_key, options);
  std::atomic<int> losses{0};
  for (Mutex* mutex : {&on_failing, &on_healthy}) mutex->on_lease_lost([&losses](const Error&) { ++losses; });
  ASSERT_TRUE(on_failing.try_lock());
  ASSERT_TRUE(on_healthy.try_lock());

  cluster.nodes[failing]->kill();
  cluster.wait_for_new_owner(cluster.slot_of(failing_key), failing);
  // Past two more renewal periods: each lock has been renewed on its (new) master since.
  const auto renewals = client.stats().renewals;
  ASSERT_TRUE(eventually([&] { return client.stats().renewals >= renewals + 4; }));
  EXPECT_EQ(losses.load(), 0);
  for (Mutex* mutex : {&on_failing, &on_healthy}) {
    EXPECT_TRUE(mutex->owns_lock());
    EXPECT_TRUE(mutex->inspect().held_by_me);
    mutex->unlock();
    EXPECT_FALSE(mutex->last_error());
  }
}

// Many watched locks over every master: the watchdog renews them with one pipeline per master
// per round, not one request per lock.
TEST_F(Cluster, TheWatchdogRenewsManyLocksWithAPipelinePerMaster) {
  constexpr int kLocks = 300;
  MutexOptions options = one_attempt_options();
  options.lease = milliseconds(1500);
  options.watchdog.enabled = true;
  std::vector<Mutex> locks;
  locks.reserve(kLocks);
  for (int i = 0; i < kLocks; ++i) {
    locks.emplace_back(client_, unique_key(std::to_string(i)), options);
    ASSERT_TRUE(locks.back().try_lock());
  }
  const auto before = client_.stats();
  // Four renewals per lock, whatever the machine's speed.
  ASSERT_TRUE(eventually([&] { return client_.stats().renewals >= before.renewals + 4 * kLocks; }));
  const auto round_trips = client_.stats().round_trips - before.round_trips;
  // One request per renewal would be 1,200 round trips or more.
  EXPECT_LT(round_trips, static_cast<std::uint64_t>(kLocks)) << round_trips;
  for (Mutex& mutex : locks) EXPECT_TRUE(mutex.owns_lock()) << mutex.key();
}

TEST_F(Cluster, AuditAndConvertWalkEveryMaster) {
  std::set<int> owners;
  const std::int64_t expiry = server_ms() + 600000;
  for (int i = 0; i < 30; ++i) {
    const std::string key = "lbtest:cluster:legacy:" + std::to_string(i);
    owners.insert(cluster_.owner_of_slot(cluster_.slot_of(key)));
    client_.command({"SET", key, std::to_string(expiry), "PX", "600000"});
  }
  ASSERT_EQ(owners.size(), 3U);
  const std::string url = cli_topology_args(cluster_.url());
  CliRun audit = run_cli("audit --json --match 'lbtest:cluster:*'" + url, false);
  ASSERT_EQ(audit.lines.size(), 1U) << audit;
  EXPECT_EQ(audit.lines[0]["by_class"]["legacy_ms"], 30) << audit;
  const std::string journal = test_dir() + "/cluster-journal-" + unique_key();
  const CliRun convert =
      run_cli("convert --to token --json --journal '" + journal + "' --match 'lbtest:cluster:*'" + url, false);
  ASSERT_EQ(convert.exit_code, 0) << convert;
  EXPECT_EQ(convert.lines[0]["converted"], 30) << convert;
  audit = run_cli("audit --json --match 'lbtest:cluster:*'" + url, false);
  EXPECT_EQ(audit.lines[0]["by_class"]["token"], 30) << audit;
  const CliRun rollback = run_cli("convert --json --rollback '" + journal + "'" + url, false);
  ASSERT_EQ(rollback.exit_code, 0) << rollback;
  EXPECT_EQ(rollback.lines[0]["restored"], 30) << rollback;
  std::remove(journal.c_str());
}

// lockbridge watch on a cluster: the locks of every master in one frame, and a waiter heard on
// the master serving its key's slot (SHARDNUMSUB there, the queue beside the key).
TEST_F(Cluster, WatchShowsTheLocksOfEveryMasterAndTheirWaiters) {
  const std::string prefix = unique_key("watch");
  std::vector<std::unique_ptr<Mutex>> holders;
  std::set<int> owners;
  for (int i = 0; i < 64 && owners.size() < 3; ++i) {
    const std::string key = prefix + ":" + std::to_string(i);
    if (!owners.insert(cluster_.owner_of_slot(cluster_.slot_of(key))).second) continue;
    holders.push_back(std::make_unique<Mutex>(client_, key, token_options()));
    ASSERT_TRUE(holders.back()->try_lock());
  }
  ASSERT_EQ(owners.size(), 3U);
  MutexOptions waiting = token_options();
  waiting.wait_mode = WaitMode::notify;
  waiting.acquire_timeout = std::chrono::seconds(30);
  waiting.local_queue = false;  // it stands for another process
  const Client waiter_client{cluster_.url(), topology_client()};
  Mutex waiter(waiter_client, holders.front()->key(), waiting);
  auto waited = std::async(std::launch::async, [&] { waiter.lock(); });

  const std::string command = "watch '" + prefix + ":*' --once --json" + cli_topology_args(cluster_.url());
  std::map<std::string, nlohmann::json> lines;
  ASSERT_TRUE(eventually([&] {
    const CliRun run = run_cli(command, false);
    lines.clear();
    for (const nlohmann::json& line : run.lines) lines[line.value("key", "")] = line;
    // The waiter subscribes and queues in two steps: a frame taken between them already shows
    // one waiter (the larger of the two counts), so wait for both counts.
    const nlohmann::json& waited_on = lines[holders.front()->key()];
    return run.exit_code == 0 && lines.size() == 3 && waited_on["waiters"] == 1 && waited_on["subscribers"] == 1 &&
           waited_on["queued"] == 1;
  })) << ::testing::PrintToString(lines);
  for (const auto& holder : holders) {
    const nlohmann::json& line = lines.at(holder->key());
    EXPECT_EQ(line["class"], "token");
    EXPECT_EQ(line["holder"], holder->value());
  }
  holders.front()->unlock();
  ASSERT_EQ(waited.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  waited.get();
  waiter.unlock();
}

TEST_F(Cluster, BenchAndCompareAcceptTheUrl) {
  const CliRun bench = run_cli("bench" + cli_topology_args(cluster_.url()) + " --clients 4 --ops 200 --json", false);
  ASSERT_EQ(bench.exit_code, 0) << bench;
  EXPECT_EQ(bench.lines.at(0)["violations"], 0) << bench;
  EXPECT_EQ(bench.lines.at(0)["errors"], 0) << bench;
  const std::string json = test_dir() + "/cluster-compare-" + unique_key() + ".json";
  const CliRun compare =
      run_cli("compare" + cli_topology_args(cluster_.url()) + " --duration 0.1 --no-plot --json '" + json + "'", false);
  EXPECT_EQ(compare.exit_code, 0) << compare;
  EXPECT_THAT(compare.output, HasSubstr("redisson"));
  std::remove(json.c_str());
}

}  // namespace
}  // namespace lockbridge::testing
