// lockbridge watch: the holder and the waiting processes of a held key, each lock format with its
// class, a stale legacy key, an empty frame for a pattern nothing matches, and no write.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "redis_test_support.hpp"

namespace lockbridge::testing {
namespace {

using ::testing::HasSubstr;

// The JSON line of `key` in one `watch PATTERN --once --json` frame, or null.
nlohmann::json watched_line(const std::string& pattern, const std::string& key) {
  const CliRun run = run_cli("watch '" + pattern + "' --once --json");
  EXPECT_EQ(run.exit_code, 0) << run;
  for (const nlohmann::json& line : run.lines) {
    if (line.value("key", "") == key) return line;
  }
  return nullptr;
}

TEST(CliWatch, ShowsTheHolderAndTwoWaitingProcesses) {
  const std::string key = unique_key();
  Mutex holder(test_client(), key, token_options());
  ASSERT_TRUE(holder.try_lock());
  BackgroundCli first("hold '" + key + "' --wait 20000 --for 0");
  BackgroundCli second("hold '" + key + "' --wait 20000 --for 0");
  nlohmann::json line;
  // A waiter subscribes before it queues: both counts are awaited, not just the larger one.
  ASSERT_TRUE(eventually([&] {
    line = watched_line(key, key);
    return !line.is_null() && line["waiters"] == 2 && line["subscribers"] == 2 && line["queued"] == 2;
  })) << line.dump();
  EXPECT_EQ(line["class"], "token");
  EXPECT_EQ(line["holder"], holder.value());
  EXPECT_EQ(line["subscribers"], 2);
  EXPECT_EQ(line["queued"], 2);
  EXPECT_GT(line["lease_ms"].get<long long>(), 0);
  EXPECT_EQ(raw({"GET", key}).str, holder.value()) << "watch never writes";
  holder.unlock();
  EXPECT_EQ(first.finish().exit_code, 0);
  EXPECT_EQ(second.finish().exit_code, 0);
}

TEST(CliWatch, NamesEachFormatsClassAndAStaleKey) {
  const std::string prefix = unique_key();
  const std::string redisson = prefix + ":redisson";
  const std::string faithful = prefix + ":faithful";
  const std::string stale = prefix + ":stale";
  raw({"HSET", redisson, "6f1c2d3e-0000-4000-8000-000000000001:42", "1"});
  raw({"PEXPIRE", redisson, "30000"});
  raw({"SET", faithful, std::to_string(server_ms() + 60000)});
  raw({"SET", stale, std::to_string(server_ms() - 60000)});

  const nlohmann::json hash = watched_line(prefix + ":*", redisson);
  ASSERT_FALSE(hash.is_null());
  EXPECT_EQ(hash["class"], "redisson");
  EXPECT_EQ(hash["holder"][0]["client_thread"], "6f1c2d3e-0000-4000-8000-000000000001:42");
  const nlohmann::json legacy = watched_line(prefix + ":*", faithful);
  ASSERT_FALSE(legacy.is_null());
  EXPECT_EQ(legacy["class"], "legacy_ms");
  EXPECT_EQ(legacy["preset"], "faithful");  // no TTL: jedis-lock never sets one
  EXPECT_EQ(legacy["stale"], false);
  const nlohmann::json old = watched_line(prefix + ":*", stale);
  ASSERT_FALSE(old.is_null());
  EXPECT_EQ(old["stale"], true);
  EXPECT_LT(old["lease_ms"].get<long long>(), 0);
  for (const std::string& key : {redisson, faithful, stale}) raw({"DEL", key});
}

TEST(CliWatch, AKeyNamedWithTerminalControlsIsShownEscaped) {
  const std::string tag = unique_key();
  const std::string key = "\x1b[2J\xc2\x9b\x7f:" + tag;  // ESC, CSI (C1), DEL; first, as the column is cut
  raw({"SET", key, std::to_string(server_ms() + 60000)});
  const CliRun run = run_cli("watch '*" + tag + "' --once");
  ASSERT_EQ(run.exit_code, 0) << run;
  EXPECT_THAT(run.output, HasSubstr("\"\\u001b[2J\\u009b\\u007f:lbtest:"));
  EXPECT_EQ(run.output.find('\x1b'), std::string::npos) << run;
  EXPECT_EQ(run.output.find("\xc2\x9b"), std::string::npos) << run;
  EXPECT_EQ(run.output.find('\x7f'), std::string::npos) << run;
  raw({"DEL", key});
}

TEST(CliWatch, APatternNothingMatchesIsAnEmptyFrameNotAnError) {
  const CliRun text = run_cli("watch '" + unique_key() + ":nothing:*' --once");
  EXPECT_EQ(text.exit_code, 0) << text;
  EXPECT_THAT(text.output, HasSubstr(": 0 lock keys"));
  const CliRun json = run_cli("watch '" + unique_key() + ":nothing:*' --once --json");
  EXPECT_EQ(json.exit_code, 0) << json;
  EXPECT_TRUE(json.lines.empty()) << json;
}

TEST(CliWatch, RefreshesUntilInterrupted) {
  const std::string key = unique_key();
  raw({"SET", key, std::to_string(server_ms() + 60000)});
  BackgroundCli watch("watch '" + key + "' --interval 50 --json");
  int frames = 0;
  for (int i = 0; i < 3; ++i) {
    const auto line = watch.next_line();
    ASSERT_TRUE(line.has_value()) << watch.errors();
    EXPECT_THAT(*line, HasSubstr("\"frame\":" + std::to_string(i + 1)));
    ++frames;
  }
  EXPECT_EQ(frames, 3);
  ::kill(watch.pid(), SIGINT);
  EXPECT_EQ(watch.finish().exit_code, 130);
  raw({"DEL", key});
}

}  // namespace
}  // namespace lockbridge::testing
