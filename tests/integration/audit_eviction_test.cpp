// lockbridge audit says whether each server may evict lock keys (its maxmemory-policy, by INFO),
// and --fail-on eviction makes that exit 4; a server whose INFO an ACL denies is "unknown" (which
// --fail-on eviction fails too), and the audit of its keys goes on.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "redis_test_support.hpp"
#include "topology.hpp"

namespace lockbridge::testing {
namespace {

using ::testing::HasSubstr;

TEST(AuditEviction, AServerThatEvictedLockKeysIsNamedAndFailsTheAudit) {
  const auto server = ServerProcess::start_server({"--maxmemory", "2mb", "--maxmemory-policy", "allkeys-lru"});
  const std::string url = "redis://" + server->address();
  // Token locks (with their TTL) until Redis evicts some: a lock evicted is a lock lost.
  const Client client(url);
  const std::string padding(4096, 'x');
  for (int i = 0; i < 2000; ++i) {
    client.command({"SET", "lock:" + std::to_string(i) + ":" + padding, "0123456789abcdef0123456789abcdef", "PX",
                    "600000"});
  }
  const CliRun run = run_cli("audit --json --fail-on eviction --url " + url, false);
  EXPECT_EQ(run.exit_code, 4) << run;
  ASSERT_EQ(run.lines.size(), 1U) << run;
  const nlohmann::json& eviction = run.lines[0]["eviction"].at(0);
  EXPECT_EQ(eviction["server"], url);
  EXPECT_EQ(eviction["maxmemory_policy"], "allkeys-lru");
  EXPECT_EQ(eviction["maxmemory"], 2 * 1024 * 1024);
  EXPECT_EQ(eviction["may_evict"], "any_key");
  EXPECT_GT(eviction["evicted_keys"].get<std::int64_t>(), 0);
  EXPECT_LT(run.lines[0]["total"].get<std::int64_t>(), 2000) << "keys were evicted";

  const CliRun text = run_cli("audit --url " + url, false);
  EXPECT_EQ(text.exit_code, 0) << text;  // no --fail-on: a finding, not a failure
  EXPECT_THAT(text.output, HasSubstr("eviction on " + url + ": allkeys-lru, maxmemory 2097152: may evict any lock key"));
}

TEST(AuditEviction, AVolatilePolicyReachesLocksWithATtl) {
  const auto server = ServerProcess::start_server({"--maxmemory", "100mb", "--maxmemory-policy", "volatile-lfu"});
  const CliRun run = run_cli("audit --json --fail-on eviction --url redis://" + server->address(), false);
  EXPECT_EQ(run.exit_code, 4) << run;
  ASSERT_EQ(run.lines.size(), 1U) << run;
  EXPECT_EQ(run.lines[0]["eviction"].at(0)["may_evict"], "keys_with_ttl");
  EXPECT_EQ(run.lines[0]["eviction"].at(0)["evicted_keys"], 0);
}

TEST(AuditEviction, ANoevictionServerPassesAndADeniedInfoIsUnknown) {
  const CliRun safe = run_cli("audit --json --fail-on eviction --match '" + unique_key() + "*'");
  EXPECT_EQ(safe.exit_code, 0) << safe;
  ASSERT_EQ(safe.lines.size(), 1U) << safe;
  EXPECT_EQ(safe.lines[0]["eviction"].at(0)["may_evict"], "none");  // the fixture's server: noeviction

  const std::string key = unique_key();
  raw({"SET", key, "0123456789abcdef0123456789abcdef", "PX", "60000"});
  const AclUser user({"+@all", "-info"});
  const CliRun denied = run_cli("audit --json --fail-on eviction --match '" + key + "' --url " + user.url(), false);
  EXPECT_EQ(denied.exit_code, 4) << denied;  // fails closed: nothing says it keeps its keys
  ASSERT_EQ(denied.lines.size(), 1U) << denied;
  EXPECT_EQ(denied.lines[0]["total"], 1) << "the keys are audited all the same";
  const nlohmann::json& eviction = denied.lines[0]["eviction"].at(0);
  EXPECT_EQ(eviction["may_evict"], "unknown");
  EXPECT_THAT(eviction["error"].get<std::string>(), HasSubstr("NOPERM"));
  raw({"DEL", key});
}

}  // namespace
}  // namespace lockbridge::testing
