// audit, inspect and convert on Redisson's objects other than RLock, as lockbridge's own types and
// a Java peer (Redisson 4.7.0's scripts, redisson_peer.hpp) leave them in Redis: a read/write lock
// with its readers and their timeout keys, a fair lock's queue with its waiters, a permit-expirable
// semaphore's leases, and (with a type hint, since they are plain integers) a semaphore's permits
// and a latch's count. convert refuses every one and changes nothing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

#include "lockbridge/latch.hpp"
#include "lockbridge/leased_semaphore.hpp"
#include "lockbridge/semaphore.hpp"
#include "lockbridge/shared_mutex.hpp"
#include "redis_test_support.hpp"
#include "redisson_peer.hpp"

namespace lockbridge::testing {
namespace {

constexpr char kFamilyHolder[] = "8b0c2a1e-0000-4000-8000-000000000000:31";
constexpr char kFamilyWaiter[] = "8b0c2a1e-0000-4000-8000-000000000000:32";

// One of each object, under keys that all contain `tag`.
struct RedissonFamily {
  RedissonFamily()
      : tag(unique_key("family")),
        rwlock("rw:" + tag),
        fair("fair:" + tag),
        leased("leased:" + tag),
        permits("permits:" + tag),
        latch("latch:" + tag),
        reader(test_client(), rwlock) {
    EXPECT_TRUE(reader.try_lock_shared());
    EXPECT_TRUE(raw(redisson_fair_lock_command(fair, kFamilyHolder, "300000")).is_nil());
    EXPECT_FALSE(raw(redisson_fair_lock_command(fair, kFamilyWaiter, "300000")).is_nil());  // queued
    LeasedSemaphore leases(test_client(), leased);
    EXPECT_TRUE(leases.try_set_permits(3));
    EXPECT_TRUE(leases.try_acquire(std::chrono::minutes(5)));
    EXPECT_TRUE(Semaphore(test_client(), permits).try_set_permits(4));
    EXPECT_TRUE(Latch(test_client(), latch).try_set_count(2));
  }

  std::string tag, rwlock, fair, leased, permits, latch;
  SharedMutex reader;
};

nlohmann::json inspected(const std::string& key, const std::string& hint = "none") {
  const CliRun run = run_cli("inspect '" + key + "' --json --type-hint " + hint);
  EXPECT_EQ(run.exit_code, 0) << run;
  return run.lines.empty() ? nlohmann::json() : run.lines.front();
}

TEST(AuditRedissonFamily, ClassifiesEachObjectAndItsCompanionKeys) {
  RedissonFamily family;
  const CliRun run = run_cli("audit --json --match '*" + family.tag + "*'");
  ASSERT_EQ(run.exit_code, 0) << run;
  const nlohmann::json& classes = run.lines.at(0)["by_class"];
  EXPECT_EQ(classes["redisson_rwlock"], 2) << "the hash and its reader's timeout key";
  EXPECT_EQ(classes["redisson_fair_queue"], 2) << "the queue and the deadlines";
  EXPECT_EQ(classes["redisson"], 1) << "the fair lock's own hash is RLock's";
  EXPECT_EQ(classes["redisson_semaphore"], 1) << "the permit-expirable semaphore's leases";
  EXPECT_EQ(classes["other"], 3) << "three plain integers: permits, permits, a count";
  EXPECT_EQ(run.lines.at(0)["by_flag"]["bad_value"], 0);
  EXPECT_EQ(run.lines.at(0)["by_flag"]["wrong_type"], 0);
}

TEST(AuditRedissonFamily, InspectShowsReadersWaitersPermitsAndCounts) {
  RedissonFamily family;
  const nlohmann::json rw = inspected(family.rwlock);
  EXPECT_EQ(rw["class"], "redisson_rwlock");
  EXPECT_EQ(rw["mode"], "read");
  ASSERT_EQ(rw["holder"].size(), 1U);
  EXPECT_EQ(rw["holder"][0]["count"], 1);
  const nlohmann::json queue = inspected(redisson_fair_queue(family.fair));
  EXPECT_EQ(queue["class"], "redisson_fair_queue");
  EXPECT_EQ(queue["waiters"], 1);
  const nlohmann::json leases = inspected(LeasedSemaphore::leases_name(family.leased));
  EXPECT_EQ(leases["class"], "redisson_semaphore");
  EXPECT_EQ(leases["permits_held"], 1);
  const nlohmann::json permits = inspected(family.permits, "semaphore");
  EXPECT_EQ(permits["class"], "redisson_semaphore");
  EXPECT_EQ(permits["permits"], 4);
  const nlohmann::json latch = inspected(family.latch, "latch");
  EXPECT_EQ(latch["class"], "redisson_latch");
  EXPECT_EQ(latch["count"], 2);
  // A hint over a key that holds no integer: bad_value.
  raw({"SET", family.latch, "two"});
  EXPECT_THAT(inspected(family.latch, "latch")["flags"].dump(), ::testing::HasSubstr("bad_value"));
}

TEST(AuditRedissonFamily, WatchShowsTheReadWriteLockAndTheFairQueue) {
  RedissonFamily family;
  const CliRun run = run_cli("watch '*" + family.tag + "*' --once --json");
  ASSERT_EQ(run.exit_code, 0) << run;
  std::map<std::string, nlohmann::json> by_key;
  for (const nlohmann::json& line : run.lines) by_key[line.value("key", "")] = line;
  ASSERT_TRUE(by_key.contains(family.rwlock)) << run;
  EXPECT_EQ(by_key[family.rwlock]["class"], "redisson_rwlock");
  EXPECT_EQ(by_key[family.rwlock]["mode"], "read");
  ASSERT_TRUE(by_key.contains(redisson_fair_queue(family.fair))) << run;
  EXPECT_EQ(by_key[redisson_fair_queue(family.fair)]["waiters"], 1);
}

TEST(AuditRedissonFamily, ConvertRefusesEveryOneAndChangesNothing) {
  RedissonFamily family;
  const std::string match = " --match '*" + family.tag + "*'";
  const std::string before = raw({"HGET", family.rwlock, "mode"}).str + raw({"GET", family.leased}).str +
                             std::to_string(raw({"LLEN", redisson_fair_queue(family.fair)}).integer);
  const CliRun to_token = run_cli("convert --to token --json --dry-run" + match);
  ASSERT_FALSE(to_token.lines.empty()) << to_token;
  const nlohmann::json summary = to_token.lines.back();
  EXPECT_EQ(summary["converted"], 0) << to_token;
  EXPECT_EQ(summary["skipped"]["foreign"], 6) << to_token;
  const std::string journal = test_dir() + "/family-" + family.tag + ".journal";
  const CliRun for_real = run_cli("convert --to token --json --journal '" + journal + "'" + match);
  ASSERT_FALSE(for_real.lines.empty()) << for_real;
  EXPECT_EQ(for_real.lines.back()["converted"], 0) << for_real;
  EXPECT_EQ(for_real.lines.back()["skipped"]["foreign"], 6) << for_real;
  std::filesystem::remove(journal);
  const std::string after = raw({"HGET", family.rwlock, "mode"}).str + raw({"GET", family.leased}).str +
                            std::to_string(raw({"LLEN", redisson_fair_queue(family.fair)}).integer);
  EXPECT_EQ(after, before);
  EXPECT_TRUE(family.reader.owns_shared());
}

}  // namespace
}  // namespace lockbridge::testing
