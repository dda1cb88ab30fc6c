// lockbridge against an independent peer: tests/interop/peer.py, a Python client (Debian's
// python3-redis) that speaks Redisson's RLock protocol or jedis-lock 1.0.0's, written from
// shared/reference/wire-formats.md. lockbridge processes and peer processes contend on one key;
// each checks exclusion with INCR on a shared counter. Redisson's release messages must cross both
// ways: a peer that waited out a long lease without hearing a release counts it as timed_out.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

#include "redis_test_support.hpp"

namespace lockbridge::testing {
namespace {

struct Totals {
  long acquisitions = 0;
  long violations = 0;
  long errors = 0;
  long timed_out = 0;
  int failed_processes = 0;
};

// Starts every command, then reads each one's summary line.
Totals run_all(const std::vector<std::string>& commands) {
  std::vector<FILE*> processes;
  for (const std::string& command : commands) {
    FILE* process = popen(command.c_str(), "r");
    if (process == nullptr) throw std::runtime_error("cannot start " + command);
    processes.push_back(process);
  }
  Totals totals;
  const std::regex line("acquisitions=([0-9]+) violations=([0-9]+) errors=([0-9]+)( woken=[0-9]+ timed_out=([0-9]+))?");
  for (FILE* process : processes) {
    std::string output;
    char buffer[256];
    while (fgets(buffer, sizeof buffer, process) != nullptr) output += buffer;
    const int status = pclose(process);
    std::smatch match;
    if (status != 0 || !std::regex_search(output, match, line)) {
      ++totals.failed_processes;
      continue;
    }
    totals.acquisitions += std::stol(match[1]);
    totals.violations += std::stol(match[2]);
    totals.errors += std::stol(match[3]);
    if (match[5].matched) totals.timed_out += std::stol(match[5]);
  }
  return totals;
}

std::string peer(const std::string& kind, const std::string& key, const std::string& check, int acquisitions,
                 const std::string& lease_and_hold_ms = "") {
  return "/usr/bin/python3 '" LOCKBRIDGE_SOURCE_DIR "/tests/interop/peer.py' " + kind + " '" + test_dir() + "/redis.sock' '" + key +
         "' '" + check + "' " + std::to_string(acquisitions) + " " + lease_and_hold_ms;
}

std::string contender(const std::string& strategy, const std::string& preset, const std::string& key,
                      const std::string& check, int acquisitions) {
  return std::string(LOCKBRIDGE_CONTENDER) + " '" + unix_url() + "' '" + key + "' '" + check + "' " + strategy + " " +
         preset + " " + std::to_string(acquisitions);
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
    commands.push_back(contender("redisson", "none", key, check, kEach));
  }
  const Totals totals = run_all(commands);
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
  FILE* process = popen(peer("redisson", key, check, 1).c_str(), "r");
  ASSERT_NE(process, nullptr);
  // The peer failed once and subscribed to Redisson's channel: Redis counts it.
  const std::string channel = "redisson_lock__channel:{" + key + "}";
  EXPECT_TRUE(eventually([&] {
    const Reply numsub = raw({"PUBSUB", "NUMSUB", channel});
    return numsub.elements.size() == 2 && numsub.elements[1].integer >= 1;
  }));
  holder.unlock();
  std::string output;
  char buffer[256];
  while (fgets(buffer, sizeof buffer, process) != nullptr) output += buffer;
  EXPECT_EQ(pclose(process), 0) << output;
  EXPECT_THAT(output, ::testing::HasSubstr("acquisitions=1 violations=0 errors=0 woken=1 timed_out=0"));
}

TEST(Interop, ARedissonPeersReleaseWakesOurWaiter) {
  ASSERT_TRUE(python_peer_available()) << "python3-redis is not installed (scripts/bootstrap.sh installs it)";
  const std::string key = unique_key("lock");
  const std::string check = unique_key("check");
  // The peer holds for 1 s with a 60 s lease; our waiter polls once a minute at most, so only the
  // peer's release message can bring it in within the 30 s bound.
  FILE* process = popen(peer("redisson", key, check, 1, "60000 1000").c_str(), "r");
  ASSERT_NE(process, nullptr);
  ASSERT_TRUE(eventually([&] { return raw({"EXISTS", key}).integer == 1; }));
  MutexOptions options = token_options();
  options.strategy = StrategyKind::redisson;
  options.wait_mode = WaitMode::notify;
  options.retry = RetryPolicy::fixed_retries(5, std::chrono::seconds(60));
  Mutex waiter(test_client(), key, options);
  EXPECT_TRUE(waiter.try_lock_for(std::chrono::seconds(30))) << "the peer's release did not wake the waiter";
  std::string output;
  char buffer[256];
  while (fgets(buffer, sizeof buffer, process) != nullptr) output += buffer;
  EXPECT_EQ(pclose(process), 0) << output;
  EXPECT_THAT(output, ::testing::HasSubstr("acquisitions=1 violations=0 errors=0"));
}

TEST(Interop, JedisLockPeersAndTheFaithfulPresetExcludeEachOther) {
  ASSERT_TRUE(python_peer_available()) << "python3-redis is not installed (scripts/bootstrap.sh installs it)";
  const std::string key = unique_key("lock");
  const std::string check = unique_key("check");
  std::vector<std::string> commands;
  for (int i = 0; i < 3; ++i) {
    commands.push_back(peer("jedis", key, check, kEach));
    commands.push_back(contender("legacy", "faithful", key, check, kEach));
  }
  const Totals totals = run_all(commands);
  EXPECT_EQ(totals.failed_processes, 0);
  EXPECT_EQ(totals.acquisitions, 6 * kEach);
  EXPECT_EQ(totals.violations, 0);
  EXPECT_EQ(totals.errors, 0);
}

}  // namespace
}  // namespace lockbridge::testing
