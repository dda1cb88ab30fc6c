// LeasedSemaphore is Redisson's RPermitExpirableSemaphore, checked against the fixture's
// redis-server and a Java peer played by Redisson 4.7.0's own scripts (redisson_peer.hpp): one
// pool of permits and one set of leases for both sides, ids kept as the Java version keeps them,
// and a permit whose holder was killed back at its lease's end, with nobody announcing it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <future>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "contenders.hpp"
#include "lockbridge/leased_semaphore.hpp"
#include "redis_test_support.hpp"
#include "redisson_peer.hpp"
#include "topology.hpp"

namespace lockbridge::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr LeasedSemaphoreOptions kMessageOnly{.acquire_timeout = seconds(50), .recheck = std::chrono::minutes(1)};
const std::string kJavaPermit("\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\xff", 16);

// The id as Redisson >= 3.17.0 keeps it: 16 raw bytes.
std::string raw_bytes(const std::string& hex) {
  std::string bytes;
  for (std::size_t i = 0; i < hex.size(); i += 2) bytes.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return bytes;
}

// The id as Java hands it out: 32 hex digits.
std::string hex_of(const std::string& bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (const unsigned char byte : bytes) {
    hex += kHex[byte >> 4];
    hex += kHex[byte & 0xf];
  }
  return hex;
}

// A Java id of its own for each permit: kJavaPermit with its last byte replaced.
std::vector<std::string> java_permits(int count) {
  std::vector<std::string> ids;
  for (int i = 0; i < count; ++i) ids.push_back(kJavaPermit.substr(0, 15) + static_cast<char>(0x40 + i));
  return ids;
}

TEST(LeasedSemaphore, PermitsAndLeasesAreKeptAsJavaKeepsThem) {
  const std::string key = unique_key();
  LeasedSemaphore permits(test_client(), key);
  ASSERT_TRUE(permits.try_set_permits(2));
  const auto before = wall_ms();
  const std::optional<std::string> ours = permits.try_acquire(seconds(60));
  ASSERT_TRUE(ours);
  ASSERT_EQ(ours->size(), 32u);
  const Reply score = raw({"ZSCORE", redisson_permit_leases(key), raw_bytes(*ours)});
  ASSERT_FALSE(score.is_nil()) << "our permit is not in the leases under its raw id";
  EXPECT_GE(std::stoll(score.str), before + 60000);
  EXPECT_LE(std::stoll(score.str), wall_ms() + 60000);

  EXPECT_EQ(raw(redisson_expirable_acquire_command(key, kJavaPermit, 60000)).str, "OK");
  EXPECT_FALSE(permits.try_acquire(seconds(60))) << "two permits, two holders";
  EXPECT_EQ(permits.available(), 0);
  EXPECT_EQ(raw(redisson_expirable_release_command(key, kJavaPermit)).integer, 1);
  EXPECT_TRUE(permits.release(*ours));
  EXPECT_FALSE(permits.release(*ours)) << "a permit is given back once";
  EXPECT_EQ(permits.available(), 2);
  EXPECT_EQ(raw({"ZCARD", redisson_permit_leases(key)}).integer, 0);
}

TEST(LeasedSemaphore, EachSideReleasesTheOthersPermitByItsId) {
  const std::string key = unique_key();
  LeasedSemaphore permits(test_client(), key);
  ASSERT_TRUE(permits.try_set_permits(2));
  ASSERT_EQ(raw(redisson_expirable_acquire_command(key, kJavaPermit, 60000)).str, "OK");
  // Java hands its ids out as 32 hex digits: C++ releases a Java permit by that text.
  EXPECT_TRUE(permits.release(hex_of(kJavaPermit)));
  const std::optional<std::string> ours = permits.try_acquire(seconds(60));
  ASSERT_TRUE(ours);
  EXPECT_EQ(raw(redisson_expirable_release_command(key, raw_bytes(*ours))).integer, 1) << "Java could not release ours";
  EXPECT_EQ(permits.available(), 2);
}

// acquire(n, lease) and release(ids), as Redisson >= 3.23.4 (taking) and 3.41.0 (giving back,
// all or none) do: n ids under one lease, or none.
TEST(LeasedSemaphore, ManyPermitsAreTakenAndGivenBackAllOrNone) {
  const std::string key = unique_key();
  LeasedSemaphore permits(test_client(), key);
  ASSERT_TRUE(permits.try_set_permits(5));
  const std::vector<std::string> three = permits.try_acquire(3, seconds(60));
  ASSERT_EQ(three.size(), 3u);
  EXPECT_EQ(std::set<std::string>(three.begin(), three.end()).size(), 3u) << "an id given twice";
  for (const std::string& id : three) {
    EXPECT_FALSE(raw({"ZSCORE", redisson_permit_leases(key), raw_bytes(id)}).is_nil()) << id;
  }
  EXPECT_EQ(permits.available(), 2);
  EXPECT_TRUE(permits.try_acquire(3, seconds(60)).empty()) << "three taken of two";
  EXPECT_EQ(permits.available(), 2) << "a refused attempt took some";
  EXPECT_EQ(raw({"ZCARD", redisson_permit_leases(key)}).integer, 3);

  // One id that holds nothing: nothing given back, the others still held.
  std::vector<std::string> with_a_stranger = three;
  with_a_stranger.push_back(std::string(32, 'a'));
  EXPECT_EQ(permits.release(with_a_stranger), 0);
  EXPECT_EQ(permits.available(), 2);
  EXPECT_EQ(raw({"ZCARD", redisson_permit_leases(key)}).integer, 3);
  EXPECT_EQ(permits.release(three), 3);
  EXPECT_EQ(permits.available(), 5);
  EXPECT_EQ(permits.release(three), 0) << "given back twice";
  EXPECT_EQ(permits.available(), 5);
}

TEST(LeasedSemaphore, EachSideGivesBackTheOthersPermitsTakenTogether) {
  const std::string key = unique_key();
  LeasedSemaphore permits(test_client(), key);
  ASSERT_TRUE(permits.try_set_permits(3));
  const std::vector<std::string> java = java_permits(3);
  ASSERT_EQ(raw(redisson_expirable_acquire_command(key, java, 60000)).str, "OK");
  EXPECT_TRUE(permits.try_acquire(1, seconds(60)).empty());
  std::vector<std::string> java_hex;
  for (const std::string& id : java) java_hex.push_back(hex_of(id));
  EXPECT_EQ(permits.release(java_hex), 3);

  const std::vector<std::string> ours = permits.try_acquire(3, seconds(60));
  ASSERT_EQ(ours.size(), 3u);
  // Java is told when the first of our leases ends (":<its end>"), not given a permit.
  EXPECT_THAT(raw(redisson_expirable_acquire_command(key, java_permits(1), 60000)).str, ::testing::StartsWith(":"));
  std::vector<std::string> ours_raw;
  for (const std::string& id : ours) ours_raw.push_back(raw_bytes(id));
  EXPECT_EQ(raw(redisson_expirable_release_command(key, ours_raw)).integer, 3) << "Java could not give ours back";
  EXPECT_EQ(permits.available(), 3);
}

// The rule where a list differs from one id: one ended lease in it, and nothing is given back.
TEST(LeasedSemaphore, AListWithAnEndedLeaseGivesNothingBack) {
  const std::string key = unique_key();
  LeasedSemaphore permits(test_client(), key);
  ASSERT_TRUE(permits.try_set_permits(3));
  const std::vector<std::string> held = permits.try_acquire(2, seconds(60));
  ASSERT_EQ(held.size(), 2u);
  const std::int64_t ends = wall_ms() + 50;
  const std::optional<std::string> ending = permits.try_acquire(milliseconds(50));
  ASSERT_TRUE(ending);
  ASSERT_TRUE(eventually([&] { return wall_ms() > ends + 1; }));
  EXPECT_EQ(permits.release(std::vector<std::string>{held[0], *ending, held[1]}), 0);
  EXPECT_EQ(raw({"ZCARD", redisson_permit_leases(key)}).integer, 3) << "the refused list wrote something";
  EXPECT_EQ(raw({"GET", key}).str, "0");
  EXPECT_EQ(permits.available(), 1) << "the ended lease comes back with the next look";
  EXPECT_EQ(permits.release(held), 2);
}

// The most at once, both ways; and more leases ended unseen than Lua's unpack takes in one call.
TEST(LeasedSemaphore, ThousandsOfEndedLeasesComeBackTogether) {
  const std::string key = unique_key();
  LeasedSemaphore permits(test_client(), key);
  ASSERT_TRUE(permits.try_set_permits(LeasedSemaphore::kMostPermitsAtOnce));
  const std::vector<std::string> all = permits.try_acquire(LeasedSemaphore::kMostPermitsAtOnce, seconds(60));
  ASSERT_EQ(all.size(), static_cast<std::size_t>(LeasedSemaphore::kMostPermitsAtOnce));
  EXPECT_EQ(permits.release(all), LeasedSemaphore::kMostPermitsAtOnce);

  // 9,000 leases that ended long ago (score 1), as Java leaves them: all come back in one call.
  std::vector<std::string> add{"ZADD", redisson_permit_leases(key)};
  for (int i = 0; i < 9000; ++i) {
    add.push_back("1");
    add.push_back("ended-" + std::to_string(i));
  }
  raw(add);
  raw({"DECRBY", key, "9000"});
  EXPECT_EQ(permits.available(), LeasedSemaphore::kMostPermitsAtOnce);
  EXPECT_EQ(raw({"ZCARD", redisson_permit_leases(key)}).integer, 0);
}

// A waiter for two is not served by one permit coming back, and is by the second.
TEST(LeasedSemaphore, AWaiterForManyTakesThemWhenEnoughAreBack) {
  const std::string key = unique_key();
  LeasedSemaphore permits(test_client(), key, kMessageOnly);
  ASSERT_TRUE(permits.try_set_permits(2));
  const std::vector<std::string> held = permits.try_acquire(2, LeasedSemaphore::kNoLease);
  ASSERT_EQ(held.size(), 2u);
  auto waited = std::async(std::launch::async, [&] { return permits.acquire(2, seconds(60)); });
  ASSERT_TRUE(eventually([&] {
    const Reply counted = raw({"PUBSUB", "NUMSUB", redisson_semaphore_channel(key)});
    return counted.elements.size() == 2 && counted.elements[1].integer == 1;
  }));
  EXPECT_TRUE(permits.release(held[0]));
  EXPECT_EQ(permits.available(), 1) << "the waiter for two took one";
  EXPECT_EQ(raw({"ZCARD", redisson_permit_leases(key)}).integer, 1) << "the waiter for two took one";
  EXPECT_EQ(waited.wait_for(seconds(0)), std::future_status::timeout) << "served with one permit free";
  EXPECT_TRUE(permits.release(held[1]));
  ASSERT_EQ(waited.wait_for(seconds(30)), std::future_status::ready);
  const std::vector<std::string> taken = waited.get();
  EXPECT_EQ(taken.size(), 2u);
  EXPECT_EQ(permits.available(), 0);
  EXPECT_EQ(permits.release(taken), 2);
}

TEST(LeasedSemaphore, PermitsStayWithinAJavaIntAndKeysOfOtherTypesAreRefusedBySetToo) {
  const std::string key = unique_key();
  LeasedSemaphore permits(test_client(), key);
  EXPECT_EQ(expect_error([&] { (void)permits.try_set_permits(2147483648LL); }).errc(), Errc::bad_option);
  ASSERT_TRUE(permits.try_set_permits(2147483647LL));
  EXPECT_EQ(expect_error([&] { (void)permits.add_permits(1); }).errc(), Errc::bad_value);
  EXPECT_EQ(raw({"GET", key}).str, "2147483647");
  const std::string other = unique_key("other");
  raw({"SET", LeasedSemaphore::leases_name(other), "not-a-zset"});
  EXPECT_EQ(expect_error([&] { (void)LeasedSemaphore(test_client(), other).try_set_permits(1); }).errc(),
            Errc::wrong_type);
  EXPECT_EQ(raw({"EXISTS", other}).integer, 0) << "the permits were written beside a broken leases key";
  raw({"DEL", LeasedSemaphore::leases_name(other)});
}

TEST(LeasedSemaphore, OlderJavaVersionsIdsAreKeptAsHex) {
  const std::string key = unique_key();
  LeasedSemaphoreOptions options;
  options.ids = PermitIds::hex;
  LeasedSemaphore permits(test_client(), key, options);
  ASSERT_TRUE(permits.try_set_permits(1));
  const std::optional<std::string> ours = permits.try_acquire(seconds(60));
  ASSERT_TRUE(ours);
  EXPECT_FALSE(raw({"ZSCORE", redisson_permit_leases(key), *ours}).is_nil());
  EXPECT_TRUE(permits.release(*ours));
}

TEST(LeasedSemaphore, AHolderKilledWithSigkillGivesItsPermitBackAtItsLease) {
  const std::string key = unique_key();
  LeasedSemaphore waiter(test_client(), key, kMessageOnly);
  ASSERT_TRUE(waiter.try_set_permits(1));
  BackgroundCli doomed("'" + unix_url() + "' '" + key + "' unused leased 1500 1", false, LOCKBRIDGE_CONTENDER);
  const std::optional<std::string> its_permit = doomed.next_line();
  ASSERT_TRUE(its_permit) << doomed.errors();
  EXPECT_EQ(raw({"ZCARD", redisson_permit_leases(key)}).integer, 1) << "the holder has the only permit";
  ASSERT_EQ(::kill(doomed.pid(), SIGKILL), 0);
  (void)doomed.finish();
  // Nobody announces the lease's end: the waiter (re-reading once a minute) comes back at it.
  const std::optional<std::string> ours = waiter.try_acquire_for(seconds(30), seconds(60));
  ASSERT_TRUE(ours) << "the dead holder's permit did not come back at its lease";
  EXPECT_EQ(raw({"ZSCORE", redisson_permit_leases(key), raw_bytes(*its_permit)}).kind, Reply::Kind::nil);
  EXPECT_TRUE(waiter.release(*ours));
}

TEST(LeasedSemaphore, ReleasesWakeWaitersBothWaysAndLeasesCanBeUpdated) {
  const std::string key = unique_key();
  LeasedSemaphore waiter(test_client(), key, kMessageOnly);
  ASSERT_TRUE(waiter.try_set_permits(1));
  ASSERT_EQ(raw(redisson_expirable_acquire_command(key, kJavaPermit, 600000)).str, "OK");
  auto waited = std::async(std::launch::async, [&] { return waiter.try_acquire_for(seconds(50), seconds(60)); });
  ASSERT_TRUE(eventually([&] {
    const Reply counted = raw({"PUBSUB", "NUMSUB", redisson_semaphore_channel(key)});
    return counted.elements.size() == 2 && counted.elements[1].integer == 1;
  }));
  EXPECT_EQ(raw(redisson_expirable_release_command(key, kJavaPermit)).integer, 1);
  ASSERT_EQ(waited.wait_for(seconds(30)), std::future_status::ready);
  const std::optional<std::string> ours = waited.get();
  ASSERT_TRUE(ours) << "Java's release did not wake the C++ waiter";

  EXPECT_TRUE(waiter.update_lease(*ours, std::chrono::minutes(10)));
  EXPECT_GT(std::stoll(raw({"ZSCORE", redisson_permit_leases(key), raw_bytes(*ours)}).str), wall_ms() + 300000);
  PeerSubscriber java_waiter(test_dir() + "/redis.sock", "SUBSCRIBE", redisson_semaphore_channel(key));
  ASSERT_TRUE(java_waiter.subscribed());
  EXPECT_TRUE(waiter.release(*ours));
  EXPECT_EQ(java_waiter.next_message(), "1");
  EXPECT_FALSE(waiter.update_lease(*ours, seconds(1))) << "a released permit has no lease";
}

TEST(LeasedSemaphore, AReleaseAfterTheLeaseEndedSaysSoAndThePermitIsBack) {
  const std::string key = unique_key();
  LeasedSemaphore permits(test_client(), key);
  ASSERT_TRUE(permits.try_set_permits(1));
  const std::optional<std::string> ours = permits.try_acquire(milliseconds(1));
  ASSERT_TRUE(ours);
  const auto ends = std::stoll(raw({"ZSCORE", redisson_permit_leases(key), raw_bytes(*ours)}).str);
  ASSERT_TRUE(eventually([&] { return wall_ms() > ends; }));
  EXPECT_FALSE(permits.release(*ours));
  EXPECT_EQ(permits.available(), 1);
}

TEST(LeasedSemaphore, BadInputIsRefusedAndKeysOfOtherTypesLeftAlone) {
  const std::string key = unique_key();
  LeasedSemaphore permits(test_client(), key, {.acquire_timeout = milliseconds(0), .recheck = seconds(5)});
  EXPECT_EQ(expect_error([&] { (void)permits.release("not-an-id"); }).errc(), Errc::bad_option);
  EXPECT_EQ(expect_error([&] { (void)permits.try_acquire(milliseconds(0)); }).errc(), Errc::bad_option);
  EXPECT_EQ(expect_error([&] { (void)permits.acquire(seconds(1)); }).errc(), Errc::timeout);
  // Many at once: none, more than kMostPermitsAtOnce, an id twice or malformed; no key written.
  const std::string id(32, 'b');
  EXPECT_EQ(expect_error([&] { (void)permits.try_acquire(0, seconds(1)); }).errc(), Errc::bad_option);
  EXPECT_EQ(expect_error([&] {
              (void)permits.try_acquire(LeasedSemaphore::kMostPermitsAtOnce + 1, seconds(1));
            }).errc(),
            Errc::bad_option);
  EXPECT_EQ(expect_error([&] { (void)permits.acquire(2, seconds(1)); }).errc(), Errc::timeout);
  EXPECT_EQ(expect_error([&] { (void)permits.release(std::vector<std::string>{}); }).errc(), Errc::bad_option);
  EXPECT_EQ(expect_error([&] { (void)permits.release(std::vector<std::string>{id, id}); }).errc(), Errc::bad_option);
  EXPECT_EQ(expect_error([&] { (void)permits.release(std::vector<std::string>{id, "x"}); }).errc(), Errc::bad_option);
  EXPECT_EQ(raw({"EXISTS", key, redisson_permit_leases(key)}).integer, 0);
  raw({"SET", key, "1"});
  raw({"SET", redisson_permit_leases(key), "not-a-zset"});
  EXPECT_EQ(expect_error([&] { (void)permits.try_acquire(seconds(1)); }).errc(), Errc::wrong_type);
  EXPECT_EQ(raw({"GET", key}).str, "1");
  EXPECT_EQ(raw({"GET", redisson_permit_leases(key)}).str, "not-a-zset");
  raw({"DEL", redisson_permit_leases(key)});
  raw({"SET", key, "one"});
  EXPECT_EQ(expect_error([&] { (void)permits.available(); }).errc(), Errc::bad_value);
  EXPECT_EQ(raw({"GET", key}).str, "one");
}

// Three permits, four C++ processes and two Java threads drawing from them, each permit with a
// lease: never more than three holders at once, no lease ends while held, every permit comes back.
TEST(LeasedSemaphore, AMixedFleetNeverHasMoreHoldersThanPermits) {
  const std::string key = unique_key();
  const std::string check = key + ":check";
  const std::string stop = key + ":stop";
  const auto java = [&](char thread) {
    long violations = 0;
    std::string id(16, thread);
    for (long n = 0; raw({"EXISTS", stop}).integer == 0; ++n) {
      id.replace(8, 8, std::string(reinterpret_cast<const char*>(&n), 8));  // a new id for each permit, as Java's
      if (raw(redisson_expirable_acquire_command(key, id, 60000)).str != "OK") {
        std::this_thread::sleep_for(milliseconds(1));
        continue;
      }
      if (raw({"INCR", check}).integer > 3) ++violations;
      raw({"DECR", check});
      if (raw(redisson_expirable_release_command(key, id)).integer != 1) ++violations;
    }
    return violations;
  };
  ASSERT_TRUE(LeasedSemaphore(test_client(), key).try_set_permits(3));
  auto first_java = std::async(std::launch::async, java, 'a');
  auto second_java = std::async(std::launch::async, java, 'b');
  std::vector<std::string> commands(4, contender_command("leased_pool", "3", key, check, 100, 60000));
  const ContenderTotals totals = run_contenders(commands);
  raw({"SET", stop, "1"});
  EXPECT_EQ(totals.failed_processes, 0);
  EXPECT_EQ(totals.acquisitions, 400);
  EXPECT_EQ(totals.violations, 0);
  EXPECT_EQ(totals.errors, 0) << "a lease ended while its permit was held";
  EXPECT_EQ(first_java.get(), 0);
  EXPECT_EQ(second_java.get(), 0);
  EXPECT_EQ(raw({"GET", key}).str, "3") << "every permit came back";
  EXPECT_EQ(raw({"ZCARD", redisson_permit_leases(key)}).integer, 0) << "no lease was left behind";
}

TEST(LeasedSemaphoreOnCluster, PermitsLeasesAndTheirChannelShareTheKeysSlot) {
  ClusterTopology cluster(3);
  const std::string key = unique_key();
  ServerProcess& master = *cluster.nodes[cluster.owner_of_slot(cluster.slot_of(key))];
  LeasedSemaphore permits(Client(cluster.url()), key);
  ASSERT_TRUE(permits.try_set_permits(1));
  PeerSubscriber java_waiter(master.port(), "SSUBSCRIBE", redisson_semaphore_channel(key));
  ASSERT_TRUE(java_waiter.subscribed());
  const std::optional<std::string> ours = permits.try_acquire(seconds(60));
  ASSERT_TRUE(ours);
  EXPECT_EQ(master.command({"ZCARD", redisson_permit_leases(key)}), "1");
  EXPECT_TRUE(permits.release(*ours));
  EXPECT_EQ(java_waiter.next_message(), "1");
}

}  // namespace
}  // namespace lockbridge::testing
