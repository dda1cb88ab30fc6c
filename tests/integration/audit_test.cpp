// lockbridge audit against the fixture's redis-server: a mixed keyspace with every class and flag,
// binary key names, wrong types and garbage values, counted exactly; the details file reads back
// every key; nothing in Redis changes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "key_text.hpp"
#include "mixed_keyspace.hpp"
#include "redis_test_support.hpp"
#include "terminal_check.hpp"

namespace lockbridge::testing {
namespace {

TEST(Audit, CountsEveryClassAndFlagOfAMixedKeyspaceExactly) {
  MixedKeyspace space;
  const CliRun run = run_cli("audit --json --batch 7 --match '*" + space.tag + "*'");
  ASSERT_EQ(run.exit_code, 0) << run;
  ASSERT_EQ(run.lines.size(), 1U) << run;
  const nlohmann::json& summary = run.lines[0];
  EXPECT_EQ(summary["total"], space.keys.size()) << summary.dump();
  const nlohmann::json expected_classes = {
      {"legacy_ms", 5},           {"legacy_seconds", 1},     {"legacy_uuid_ms", 2},      {"legacy_forever", 1},
      {"token", 2},               {"redisson", 1},           {"redisson_rwlock", 0},     {"redisson_fair_queue", 0},
      {"redisson_semaphore", 0},  {"redisson_latch", 0},     {"python_redis_lock", 2},   {"other", 2}};
  EXPECT_EQ(summary["by_class"], expected_classes) << summary.dump();
  const nlohmann::json expected_flags = {
      {"stale", 2}, {"no_ttl", 3}, {"far_future", 1}, {"bad_value", 1}, {"wrong_type", 0}};
  EXPECT_EQ(summary["by_flag"], expected_flags) << summary.dump();
  EXPECT_EQ(summary["oldest_stale"]["key"], "ms-stale:" + space.tag);
  EXPECT_EQ(summary["longest_lease"]["key"], "ms-far:" + space.tag);
}

TEST(Audit, ATypeHintReportsWrongTypesAndBadValues) {
  const std::string tag = unique_key("hint");
  const std::int64_t now = server_ms();
  const std::vector<std::string> keys{"good:" + tag, "garbage:" + tag, "hash:" + tag, "seconds:" + tag};
  raw({"SET", keys[0], std::to_string(now + 60000)});
  raw({"SET", keys[1], "not-a-stamp"});
  raw({"HSET", keys[2], "f", "v"});
  raw({"SET", keys[3], std::to_string(now / 1000 + 60)});  // seconds, where ms are expected
  const CliRun run = run_cli("audit --json --type-hint legacy-ms --match '*" + tag + "*' --fail-on bad-value");
  EXPECT_EQ(run.exit_code, 4) << run;
  ASSERT_EQ(run.lines.size(), 1U) << run;
  EXPECT_EQ(run.lines[0]["by_class"]["legacy_ms"], 4);
  EXPECT_EQ(run.lines[0]["by_flag"]["bad_value"], 2);
  EXPECT_EQ(run.lines[0]["by_flag"]["wrong_type"], 1);
  for (const std::string& key : keys) raw({"DEL", key});
}

TEST(Audit, DetailsHoldOneLinePerLockKeyAndEveryKeyReadsBackExactly) {
  MixedKeyspace space;
  const std::filesystem::path file = std::filesystem::path(test_dir()) / ("details-" + space.tag + ".jsonl");
  const CliRun run = run_cli("audit --match '*" + space.tag + "*' --details '" + file.string() + "'");
  ASSERT_EQ(run.exit_code, 0) << run;
  EXPECT_THAT(run.output, ::testing::HasSubstr("legacy_ms"));
  std::ifstream in(file);
  std::set<std::string> seen;
  std::map<std::string, std::string> class_of;
  for (std::string line; std::getline(in, line);) {
    const nlohmann::json entry = nlohmann::json::parse(line);
    const auto key = tools::read_key(entry);
    ASSERT_TRUE(key.has_value()) << line;
    seen.insert(*key);
    class_of[*key] = entry["class"];
    for (const char* field : {"class", "flags", "value", "pttl_ms", "expiry_ms"})
      EXPECT_TRUE(entry.contains(field)) << line;
  }
  // Every key but the two that are not locks, binary names included.
  EXPECT_EQ(seen.size(), space.keys.size() - 2);
  EXPECT_TRUE(seen.contains("bin\nary \xff\xfe:" + space.tag));
  EXPECT_EQ(class_of["bin\nary \xff\xfe:" + space.tag], "legacy_ms");
  EXPECT_FALSE(seen.contains("counter:" + space.tag));
  std::filesystem::remove(file);
}

TEST(Audit, ChangesNothingAndFailOnSaysWhatWasFound) {
  MixedKeyspace space;
  std::map<std::string, std::string> before;
  for (const std::string& key : space.keys) before[key] = raw({"DUMP", key}).str;
  const std::string match = " --match '*" + space.tag + "*'";
  EXPECT_EQ(run_cli("audit --json --fail-on stale" + match).exit_code, 4);
  EXPECT_EQ(run_cli("audit --json --fail-on wrong-type" + match).exit_code, 0);
  EXPECT_EQ(run_cli("audit --json --fail-on no-ttl,far-future" + match).exit_code, 4);
  for (const std::string& key : space.keys) EXPECT_EQ(raw({"DUMP", key}).str, before[key]) << key;
  EXPECT_EQ(run_cli("audit --fail-on stael" + match).exit_code, 2);
  EXPECT_EQ(run_cli("audit --type-hint jedis" + match).exit_code, 2);
  EXPECT_EQ(run_cli("audit --batch 0" + match).exit_code, 2);
}

TEST(Inspect, ShowsClassHolderAndRemainingLeaseByBothClocks) {
  const std::string key = unique_key() + "\n\xff";  // any bytes
  const std::int64_t expiry = server_ms() + 60000;
  raw({"SET", key, std::string(kUuid) + ":" + std::to_string(expiry)});
  const CliRun run = run_cli("inspect \"$(printf '" + key.substr(0, key.size() - 2) + "\\n\\377')\" --json");
  ASSERT_EQ(run.exit_code, 0) << run;
  ASSERT_EQ(run.lines.size(), 1U) << run;
  const nlohmann::json& out = run.lines[0];
  EXPECT_EQ(tools::read_key(out), key);
  EXPECT_EQ(out["class"], "legacy_uuid_ms");
  EXPECT_EQ(out["holder"], kUuid);
  EXPECT_EQ(out["expiry_ms"], expiry);
  EXPECT_GT(out["remaining_ms_by_redis_time"].get<std::int64_t>(), 0);
  EXPECT_LE(out["remaining_ms_by_redis_time"].get<std::int64_t>(), 60000);
  EXPECT_TRUE(out["remaining_ms_by_local_clock"].is_number());
  EXPECT_TRUE(out["local_clock_ahead_ms"].is_number());
  raw({"DEL", key});
}

TEST(Inspect, AHolderOfAnyBytesIsShownExactlyInJsonAndSafelyAsText) {
  const std::string key = unique_key();
  constexpr char kBytes[] = "tok\x1b[2J\xc2\x9b\xff\x00" "end";  // ESC, CSI (C1), not UTF-8, NUL
  const std::string value(kBytes, sizeof kBytes - 1);
  raw({"SET", key, value, "PX", "60000"});
  const CliRun json = run_cli("inspect '" + key + "' --type-hint token --json");
  ASSERT_EQ(json.exit_code, 0) << json;
  ASSERT_EQ(json.lines.size(), 1U) << json;
  EXPECT_EQ(json.lines[0]["class"], "token");
  EXPECT_EQ(tools::read_key(json.lines[0], "holder"), value);
  EXPECT_EQ(tools::read_key(json.lines[0], "value"), value);
  const CliRun text = run_cli("inspect '" + key + "' --type-hint token");
  ASSERT_EQ(text.exit_code, 0) << text;
  EXPECT_THAT(text.output, ::testing::HasSubstr("holder: \"tok\\u001b[2J\\u009b\\\\xff\\u0000end\""));
  EXPECT_TRUE(terminal_safe(text.output)) << text;
  EXPECT_EQ(raw({"GET", key}).str, value) << "inspect never writes";
  raw({"DEL", key});
}

TEST(Inspect, NamesRedissonHoldersAndSaysWhenTheKeyIsMissing) {
  const std::string key = unique_key();
  raw({"HSET", key, std::string(kUuid) + ":57", "2"});
  raw({"PEXPIRE", key, "30000"});
  const CliRun run = run_cli("inspect '" + key + "' --json");
  ASSERT_EQ(run.exit_code, 0) << run;
  EXPECT_EQ(run.lines.at(0)["class"], "redisson");
  EXPECT_EQ(run.lines.at(0)["holder"][0]["client_thread"], std::string(kUuid) + ":57");
  EXPECT_GT(run.lines.at(0)["remaining_ms_by_redis_time"].get<std::int64_t>(), 0);
  raw({"DEL", key});
  const CliRun missing = run_cli("inspect '" + key + "' --json");
  EXPECT_EQ(missing.exit_code, 1) << missing;
  EXPECT_EQ(missing.lines.at(0)["exists"], false);
}

}  // namespace
}  // namespace lockbridge::testing
