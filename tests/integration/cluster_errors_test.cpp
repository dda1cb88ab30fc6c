// The errors a redis-cluster:// Client reports when the cluster cannot serve a lock, each made
// real with Redis's own servers: no seed answers, a seed that is not a cluster node, a node with no
// slots, a slot that keeps redirecting, and a multi-key script whose keys stay split by a
// migration. Each is a clear Error with its code, never a hang, and no key changes. A slot being
// migrated serves a new lock on the importing node (ASK). The migration cases run through both
// fronts: the redirects are followed by one loop (cluster/redirect_loop.hpp).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <system_error>

#include "lockbridge/asio.hpp"
#include "lockbridge/multi_mutex.hpp"
#include "loop_runner.hpp"
#include "redis_test_support.hpp"
#include "topology.hpp"

namespace lockbridge::testing {
namespace {

using ::testing::HasSubstr;

TEST(ClusterErrors, NoSeedAnsweringIsAnIoErrorNamingEachSeed) {
  std::string url;
  {
    const auto gone = ServerProcess::start_server();  // a port that was free a moment ago
    url = "redis-cluster://" + gone->address();
  }
  Mutex mutex(Client(url, quick_failing_client()), unique_key(), one_attempt_options());
  const Error error = expect_error([&] { (void)mutex.try_lock(); });
  EXPECT_EQ(error.errc(), Errc::io);
  EXPECT_THAT(error.what(), HasSubstr("answered CLUSTER NODES"));
  EXPECT_THAT(error.what(), HasSubstr(url.substr(std::string("redis-cluster://").size())));
}

TEST(ClusterErrors, ASeedThatIsNotAClusterNodeSaysSo) {
  const std::string key = unique_key();
  const std::string url = "redis-cluster://127.0.0.1:" + std::to_string(tcp_port());  // the fixture's plain server
  Mutex mutex(Client(url, quick_failing_client()), key, one_attempt_options());
  const Error error = expect_error([&] { (void)mutex.try_lock(); });
  EXPECT_EQ(error.errc(), Errc::io);
  EXPECT_THAT(error.what(), HasSubstr("cluster support disabled"));
  EXPECT_EQ(raw({"EXISTS", key}).integer, 0);
}

TEST(ClusterErrors, ANodeServingNoSlotsIsAnIoErrorNamingTheSlot) {
  // A cluster node before `redis-cli --cluster create` gave it slots.
  const auto lonely = ServerProcess::start_server({"--cluster-enabled", "yes"});
  const std::string key = unique_key();
  Mutex mutex(Client("redis-cluster://" + lonely->address(), quick_failing_client()), key, one_attempt_options());
  const Error error = expect_error([&] { (void)mutex.try_lock(); });
  EXPECT_EQ(error.errc(), Errc::io);
  EXPECT_THAT(error.what(), HasSubstr("serves hash slot " + lonely->command({"CLUSTER", "KEYSLOT", key})));
  EXPECT_THAT(error.what(), HasSubstr("not fully set up"));
}

class ClusterMigration : public ::testing::Test {
 protected:
  // The master of `key`'s slot, and another one.
  ServerProcess& owner() const { return *cluster_.nodes[owner_index_]; }
  ServerProcess& other() const { return *cluster_.nodes[other_index_]; }
  std::string slot() const { return std::to_string(cluster_.slot_of(key_)); }
  // Puts the slot back in its plain state on both nodes, whatever a test left.
  void TearDown() override {
    for (ServerProcess* node : {&owner(), &other()}) node->command({"CLUSTER", "SETSLOT", slot(), "STABLE"});
  }

  // Ends a migration begun with IMPORTING and MIGRATING: the slot is the other node's, on every master.
  void hand_slot_to_other() {
    for (const auto& node : cluster_.nodes)
      ASSERT_EQ(node->command({"CLUSTER", "SETSLOT", slot(), "NODE", cluster_.node_ids[other_index_]}), "OK");
  }
  // One attempt of `lock` (an AsyncLock of async_client()), run on the loop: its error.
  std::error_code async_attempt(AsyncLock& lock, std::chrono::milliseconds wait = std::chrono::milliseconds(0)) {
    std::optional<std::error_code> outcome;
    lock.async_try_lock_for(wait, [&](std::error_code error, bool) { outcome = error; });
    EXPECT_TRUE(runner_.run_until([&] { return outcome.has_value(); })) << "the attempt did not end";
    return outcome.value_or(make_error_code(Errc::timeout));
  }
  AsyncClient& async_client() {
    if (!async_client_) async_client_.emplace(runner_.io().get_executor(), Client(cluster_.url(), quick_failing_client()));
    return *async_client_;
  }

  ClusterTopology cluster_{3};
  const std::string key_ = unique_key();
  const int owner_index_ = cluster_.owner_of_slot(cluster_.slot_of(key_));
  const int other_index_ = (owner_index_ + 1) % 3;
  LoopRunner runner_;
  std::optional<AsyncClient> async_client_;  // after the runner: destroyed first
};

// The owner migrates the slot to a node importing it, and a key not on the owner (a new lock)
// is answered ASK: the lock is taken on the importing node, asked after ASKING (without it, that
// node would answer MOVED back to the owner). The migration then ends, and the release follows the
// slot there (MOVED). (Released halfway, the script's companion keys, absent on both nodes, would
// be answered TRYAGAIN until the migration ends: Redis's rule for multi-key commands on a slot
// being imported.)
TEST_F(ClusterMigration, ANewLockInAMigratingSlotIsTakenOnTheImportingNode) {
  ASSERT_EQ(other().command({"CLUSTER", "SETSLOT", slot(), "IMPORTING", cluster_.node_ids[owner_index_]}), "OK");
  ASSERT_EQ(owner().command({"CLUSTER", "SETSLOT", slot(), "MIGRATING", cluster_.node_ids[other_index_]}), "OK");
  Mutex mutex(Client(cluster_.url(), quick_failing_client()), key_, one_attempt_options());
  ASSERT_TRUE(mutex.try_lock());
  EXPECT_EQ(owner().command({"CLUSTER", "COUNTKEYSINSLOT", slot()}), "0");
  EXPECT_EQ(other().command({"CLUSTER", "COUNTKEYSINSLOT", slot()}), "1");
  hand_slot_to_other();
  mutex.unlock();
  EXPECT_FALSE(mutex.last_error());
  EXPECT_EQ(other().command({"CLUSTER", "COUNTKEYSINSLOT", slot()}), "0");
}

TEST_F(ClusterMigration, ANewAsyncLockInAMigratingSlotIsTakenOnTheImportingNode) {
  ASSERT_EQ(other().command({"CLUSTER", "SETSLOT", slot(), "IMPORTING", cluster_.node_ids[owner_index_]}), "OK");
  ASSERT_EQ(owner().command({"CLUSTER", "SETSLOT", slot(), "MIGRATING", cluster_.node_ids[other_index_]}), "OK");
  AsyncMutex mutex(async_client(), key_, one_attempt_options());
  EXPECT_FALSE(async_attempt(mutex));
  ASSERT_TRUE(mutex.owns_lock());
  EXPECT_EQ(owner().command({"CLUSTER", "COUNTKEYSINSLOT", slot()}), "0");
  EXPECT_EQ(other().command({"CLUSTER", "COUNTKEYSINSLOT", slot()}), "1");
  hand_slot_to_other();
  std::optional<std::error_code> released;
  mutex.async_unlock([&](std::error_code error) { released = error; });
  ASSERT_TRUE(runner_.run_until([&] { return released.has_value(); }));
  EXPECT_FALSE(*released) << released->message();
  EXPECT_EQ(other().command({"CLUSTER", "COUNTKEYSINSLOT", slot()}), "0");
}

// The owner says the slot is migrating to a node that does not import it: the owner answers ASK
// (the key is not there), the other node answers MOVED back, and so on. After five redirects the
// caller gets `protocol`, not an endless loop.
TEST_F(ClusterMigration, ASlotThatKeepsRedirectingIsAProtocolErrorAfterFiveRedirects) {
  ASSERT_EQ(owner().command({"CLUSTER", "SETSLOT", slot(), "MIGRATING", cluster_.node_ids[other_index_]}), "OK");
  Mutex mutex(Client(cluster_.url(), quick_failing_client()), key_, one_attempt_options());
  const Error error = expect_error([&] { (void)mutex.try_lock(); });
  EXPECT_EQ(error.errc(), Errc::protocol);
  EXPECT_THAT(error.what(), HasSubstr("still redirected after 5 redirects"));
  for (ServerProcess* node : {&owner(), &other()})
    EXPECT_EQ(node->command({"CLUSTER", "COUNTKEYSINSLOT", slot()}), "0");
}

TEST_F(ClusterMigration, AnAsyncLockOnASlotThatKeepsRedirectingIsAProtocolErrorAfterFiveRedirects) {
  ASSERT_EQ(owner().command({"CLUSTER", "SETSLOT", slot(), "MIGRATING", cluster_.node_ids[other_index_]}), "OK");
  AsyncMutex mutex(async_client(), key_, one_attempt_options());
  EXPECT_EQ(async_attempt(mutex), make_error_code(Errc::protocol));
  EXPECT_FALSE(mutex.owns_lock());
  for (ServerProcess* node : {&owner(), &other()})
    EXPECT_EQ(node->command({"CLUSTER", "COUNTKEYSINSLOT", slot()}), "0");
}

// Two keys of one slot, split by a migration that stopped halfway: one still on the owner, one
// moved. A script on both is answered TRYAGAIN for as long as that lasts (the owner counts each
// as a rejected call). The router waits it out five times (10 to 160 ms), but never past the
// caller's deadline: try_lock() asks once, try_lock_for(5 ms) at most twice. Then the caller gets
// the reply as `server_reply`, and neither key changed.
class ClusterSplitKeys : public ClusterMigration {
 protected:
  void SetUp() override {
    ASSERT_EQ(owner().command({"SET", stays_, "someone-else"}), "OK");
    ASSERT_EQ(owner().command({"SET", moves_, "someone-else"}), "OK");
    ASSERT_EQ(other().command({"CLUSTER", "SETSLOT", slot(), "IMPORTING", cluster_.node_ids[owner_index_]}), "OK");
    ASSERT_EQ(owner().command({"CLUSTER", "SETSLOT", slot(), "MIGRATING", cluster_.node_ids[other_index_]}), "OK");
    ASSERT_EQ(owner().command({"MIGRATE", "127.0.0.1", std::to_string(other().port()), moves_, "0", "5000"}), "OK");
  }
  // Runs `attempt` on a MultiMutex of both keys; returns how many acquire scripts the owner
  // rejected with TRYAGAIN meanwhile.
  template <class Attempt>
  int rejected_attempts(Attempt&& attempt) {
    owner().command({"CONFIG", "RESETSTAT"});
    MultiMutex both(Client(cluster_.url(), quick_failing_client()), {stays_, moves_}, one_attempt_options());
    const Error error = expect_error([&] { (void)attempt(both); });
    EXPECT_EQ(error.errc(), Errc::server_reply);
    EXPECT_THAT(error.what(), HasSubstr("TRYAGAIN"));
    EXPECT_EQ(owner().command({"GET", stays_}), "someone-else");
    EXPECT_EQ(other().command({"CLUSTER", "COUNTKEYSINSLOT", slot()}), "1");  // the moved key, and nothing new
    return rejected_scripts();
  }
  // How many acquire scripts the owner rejected (TRYAGAIN) since its stats were reset.
  int rejected_scripts() const {
    const std::string stats = owner().command({"INFO", "commandstats"});
    const auto at = stats.find("cmdstat_evalsha:");
    if (at == std::string::npos) return 0;
    const auto count = stats.find("rejected_calls=", at);
    return count == std::string::npos ? 0 : std::stoi(stats.substr(count + std::string("rejected_calls=").size()));
  }
  const std::string stays_ = "{" + key_ + "}:stays";
  const std::string moves_ = "{" + key_ + "}:moves";
};

TEST_F(ClusterSplitKeys, AreTryagainAfterFiveWaitsForALongWait) {
  EXPECT_EQ(rejected_attempts([](MultiMutex& both) { return both.try_lock_for(std::chrono::seconds(30)); }), 6);
}

// The same through the async front: the waits are the loop's timers.
TEST_F(ClusterSplitKeys, AreTryagainAfterFiveWaitsForALongAsyncWait) {
  owner().command({"CONFIG", "RESETSTAT"});
  AsyncMultiMutex both(async_client(), {stays_, moves_}, one_attempt_options());
  EXPECT_EQ(async_attempt(both, std::chrono::seconds(30)), make_error_code(Errc::server_reply));
  EXPECT_EQ(owner().command({"GET", stays_}), "someone-else");
  EXPECT_EQ(other().command({"CLUSTER", "COUNTKEYSINSLOT", slot()}), "1");
  EXPECT_EQ(rejected_scripts(), 6);
}

TEST_F(ClusterSplitKeys, TheWaitsStopAtTheCallersDeadline) {
  EXPECT_EQ(rejected_attempts([](MultiMutex& both) { return both.try_lock(); }), 1);
  EXPECT_LE(rejected_attempts([](MultiMutex& both) { return both.try_lock_for(std::chrono::milliseconds(5)); }), 2);
}

}  // namespace
}  // namespace lockbridge::testing
