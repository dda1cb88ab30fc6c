// lockbridge against an independent peer: tests/interop/peer.py, a Python client (Debian's
// python3-redis) that speaks Redisson's RLock protocol or jedis-lock 1.0.0's, written from their
// public source (RedissonLock.java; JedisLock.java at tag 1.0.0). lockbridge processes and peer processes contend on one key;
// each checks exclusion with INCR on a shared counter. Redisson's release messages must cross both
// ways: a peer that waited out a long lease without hearing a release counts it as timed_out.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "contenders.hpp"
#include "redis_test_support.hpp"

namespace lockbridge::testing {
namespace {

std::string peer(const std::string& kind, const std::string& key, const std::string& check, int acquisitions,
                 const std::string& lease_and_hold_ms = "") {
  return "/usr/bin/python3 '" LOCKBRIDGE_SOURCE_DIR "/tests/interop/peer.py' " + kind + " '" + test_dir() +
         "/redis.sock' '" + key + "' '" + check + "' " + std::to_string(acquisitions) + " " + lease_and_hold_ms;
}

// Debian's python3 with Debian's python3-redis (scripts/bootstrap.sh), whatever python3 is on PATH.
bool python_peer_available() { return std::system("/usr/bin/python3 -c 'import redis' >/dev/null 2>&1") == 0; }

constexpr int kEach = 40;

TEST(Interop, RedissonPeersAndLockbridgeExcludeEachOtherAndHearEachOthersReleases) {
  ASSERT_TRUE(python_peer_available()) << "python3-redis is not installed (scripts/bootstrap.sh installs it)";
  const std::string key = unique_key("lock");
  const std::string check = unique_key("check");
  std::vector<std::string> commands;
  for (int i = 0; i < 3; ++i) {
    commands.push_back(peer("redisson", key, check, kEach));
    commands.push_back(contender_command("redisson", "none", key, check, kEach));
  }
  const ContenderTotals totals = run_contenders(commands);
  EXPECT_EQ(totals.failed_processes, 0);
  EXPECT_EQ(totals.acquisitions, 6 * kEach);
  EXPECT_EQ(totals.violations, 0);
  EXPECT_EQ(totals.errors, 0);
  // The peers' lease is 60 s: a wait that ran it out heard no release, from either side.
  EXPECT_EQ(totals.timed_out, 0);
  EXPECT_EQ(raw({"EXISTS", key}).integer, 0);
}

TEST(Interop, OurReleaseWakesAWaitingRedissonPeer) {
  ASSERT_TRUE(python_peer_available()) << "python3-redis is not installed (scripts/bootstrap.sh installs it)";
  const std::string key = unique_key("lock");
  const std::string check = unique_key("check");
  MutexOptions options = token_options();
  options.strategy = StrategyKind::redisson;
  options.lease = std::chrono::seconds(60);  // the peer would wait a minute without the message
  Mutex holder(test_client(), key, options);
  ASSERT_TRUE(holder.try_lock());
  // The peer subscribes after a failed attempt and then tries once more before it waits (as
  // Redisson does); a release before that second attempt would let it in without a message. It
  // says on the file system when that attempt has failed, so the release below must wake it.
  const std::string waiting_file = test_dir() + "/" + unique_key("peer-waiting");
  std::remove(waiting_file.c_str());
  FILE* process = start_process("PEER_WAITING_FILE='" + waiting_file + "' " + peer("redisson", key, check, 1));
  EXPECT_TRUE(eventually([&] { return std::ifstream(waiting_file).good(); })) << "the peer never waited";
  holder.unlock();
  const ProcessOutput finished = finish_process(process);
  EXPECT_EQ(finished.status, 0) << finished.output;
  EXPECT_THAT(finished.output, ::testing::HasSubstr("acquisitions=1 violations=0 errors=0 woken=1 timed_out=0"));
  std::remove(waiting_file.c_str());
}

TEST(Interop, ARedissonPeersReleaseWakesOurWaiter) {
  ASSERT_TRUE(python_peer_available()) << "python3-redis is not installed (scripts/bootstrap.sh installs it)";
  const std::string key = unique_key("lock");
  const std::string check = unique_key("check");
  // The peer holds for 1 s with a 60 s lease; our waiter polls once a minute at most, so only the
  // peer's release message can bring it in within the 30 s bound.
  FILE* process = start_process(peer("redisson", key, check, 1, "60000 1000"));
  ASSERT_TRUE(eventually([&] { return raw({"EXISTS", key}).integer == 1; }));
  MutexOptions options = token_options();
  options.strategy = StrategyKind::redisson;
  options.wait_mode = WaitMode::notify;
  options.retry = RetryPolicy::fixed_retries(5, std::chrono::seconds(60));
  Mutex waiter(test_client(), key, options);
  EXPECT_TRUE(waiter.try_lock_for(std::chrono::seconds(30))) << "the peer's release did not wake the waiter";
  const ProcessOutput finished = finish_process(process);
  EXPECT_EQ(finished.status, 0) << finished.output;
  EXPECT_THAT(finished.output, ::testing::HasSubstr("acquisitions=1 violations=0 errors=0"));
}

TEST(Interop, JedisLockPeersAndTheFaithfulPresetExcludeEachOther) {
  ASSERT_TRUE(python_peer_available()) << "python3-redis is not installed (scripts/bootstrap.sh installs it)";
  const std::string key = unique_key("lock");
  const std::string check = unique_key("check");
  std::vector<std::string> commands;
  for (int i = 0; i < 3; ++i) {
    commands.push_back(peer("jedis", key, check, kEach));
    commands.push_back(contender_command("legacy", "faithful", key, check, kEach));
  }
  const ContenderTotals totals = run_contenders(commands);
  EXPECT_EQ(totals.failed_processes, 0);
  EXPECT_EQ(totals.acquisitions, 6 * kEach);
  EXPECT_EQ(totals.violations, 0);
  EXPECT_EQ(totals.errors, 0);
}

}  // namespace
}  // namespace lockbridge::testing
