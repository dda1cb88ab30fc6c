// lockbridge watch: the holder and the waiting processes of a held key, each lock format with its
// class, a stale legacy key, an empty frame for a pattern nothing matches, and no write.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sstream>
#include <string>
#include <vector>

#include "lockbridge/lock_keys.hpp"
#include "redis_test_support.hpp"
#include "topology.hpp"

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

// Peak resident memory (KiB) of the CLI run with `args`, its output thrown away.
long peak_rss_kib(const std::vector<std::string>& args) {
  const pid_t pid = fork();
  if (pid == 0) {
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, STDOUT_FILENO);
    std::vector<char*> argv{const_cast<char*>(LOCKBRIDGE_CLI)};
    for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    execv(LOCKBRIDGE_CLI, argv.data());
    _exit(127);
  }
  int status = 0;
  rusage usage{};
  if (pid < 0 || wait4(pid, &status, 0, &usage) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
  return usage.ru_maxrss;
}

TEST(CliWatch, AFrameOfManyKeysHoldsOneBatchNotTheKeyspace) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "a sanitizer's own memory would be measured";
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
  GTEST_SKIP() << "a sanitizer's own memory would be measured";
#endif
#endif
  const auto server = ServerProcess::start_server();
  // 200,000 held token locks (about 4.5 KiB each in a frame, 900 MB, before frames were streamed),
  // written 10,000 per script: one script for all of them can outlast the command timeout on a
  // loaded machine.
  for (int first = 1; first <= 200000; first += 10000) {
    server->command({"EVAL",
                     "local first = tonumber(ARGV[1]) for i = first, first + 9999 do redis.call('SET', 'lbwatch:' .. "
                     "i, string.format('t%031x', i), "
                     "'PX', 600000) end return 1",
                     "0", std::to_string(first)});
  }
  const std::string url = "redis://" + server->address();
  const long idle = peak_rss_kib({"watch", "lbwatch:nothing*", "--once", "--url", url});
  const long table = peak_rss_kib({"watch", "lbwatch:*", "--once", "--url", url});
  const long json = peak_rss_kib({"watch", "lbwatch:*", "--once", "--json", "--url", url});
  ASSERT_GT(idle, 0);
  ASSERT_GT(table, 0);
  ASSERT_GT(json, 0);
  // A batch (1,000 keys) and the table's 100 rows, on top of what the command needs with no key.
  EXPECT_LT(table - idle, 32 * 1024) << "KiB";
  EXPECT_LT(json - idle, 32 * 1024) << "KiB";
}

TEST(CliWatch, TheTableShowsTheKeysWithTheMostWaitersAndSaysHowManyThereAre) {
  const std::string prefix = unique_key();
  for (int i = 0; i < 5; ++i)
    raw({"SET", prefix + ":" + std::to_string(i), "t0123456789abcdef0123456789abcde", "PX", "60000"});
  Mutex held(test_client(), prefix + ":busy", token_options());
  ASSERT_TRUE(held.try_lock());
  BackgroundCli waiter("hold '" + prefix + ":busy' --wait 20000 --for 0");
  ASSERT_TRUE(eventually([&] {
    const nlohmann::json line = watched_line(prefix + ":busy", prefix + ":busy");
    return !line.is_null() && line["waiters"] == 1;
  }));
  const CliRun run = run_cli("watch '" + prefix + ":*' --once --top 2");
  EXPECT_EQ(run.exit_code, 0) << run;
  EXPECT_THAT(run.output, HasSubstr(": 6 lock keys (the 2 with the most waiters shown: --top N)")) << run;
  std::vector<std::string> lines;
  std::istringstream text(run.output);
  for (std::string line; std::getline(text, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 4U) << "a header, the column names and two rows: " << run;
  EXPECT_THAT(lines[2], HasSubstr(held.value().substr(0, 12))) << "the key with a waiter comes first: " << run;
  EXPECT_THAT(lines[3], HasSubstr("t0123456789a")) << run;
  held.unlock();
  EXPECT_EQ(waiter.finish().exit_code, 0);
  for (int i = 0; i < 5; ++i) raw({"DEL", prefix + ":" + std::to_string(i)});

  EXPECT_EQ(run_cli("watch '" + prefix + ":*' --once --json --top 2").exit_code, 2) << "--top is the table's";
  EXPECT_EQ(run_cli("watch '" + prefix + ":*' --once --top 0").exit_code, 2);
  EXPECT_EQ(run_cli("watch '" + prefix + ":*' --once --interval 50").exit_code, 2) << "--once has no interval";
}

TEST(CliWatch, StarvingWaitersNeverOutnumberTheQueuedOnesAndCountsAreNumbers) {
  const std::string key = unique_key();
  const LockKeyNames names = lock_key_names(key);
  raw({"SET", key, "t0123456789abcdef0123456789abcde", "PX", "60000"});
  // Times left by waiters that died (the scripts clear them lazily): starving long ago, not queued.
  raw({"HSET", names.waiter_times, "gone-1", "1 1", "gone-2", "1 1"});
  raw({"RPUSH", names.waiter_queue, "alive"});
  const nlohmann::json line = watched_line(key, key);
  ASSERT_FALSE(line.is_null());
  EXPECT_EQ(line["queued"], 1);
  EXPECT_EQ(line["starving"], 1) << line.dump();
  raw({"DEL", key, names.waiter_times, names.waiter_queue});

  const std::string redisson = unique_key();
  raw({"HSET", redisson, "8c1a5c1e-2f3b-4d5e-9f60-1a2b3c4d5e6f:1", "2"});
  raw({"PEXPIRE", redisson, "60000"});
  const nlohmann::json held = watched_line(redisson, redisson);
  ASSERT_FALSE(held.is_null());
  ASSERT_TRUE(held["holder"].is_array()) << held.dump();
  EXPECT_EQ(held["holder"][0]["count"], 2) << "a number, not \"2\": " << held.dump();
  raw({"DEL", redisson});
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
