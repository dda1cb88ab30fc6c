// `lockbridge hold`: its JSON lines and exit codes are an interface other clients script against.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "key_text.hpp"
#include "lockbridge/lock_keys.hpp"
#include "redis_test_support.hpp"

namespace lockbridge::testing {
namespace {

TEST(CliHold, TokenAcquiresHoldsAndReleases) {
  const std::string key = unique_key();
  const CliRun run = run_cli("hold '" + key + "' --json --for 10");
  EXPECT_EQ(run.exit_code, 0) << run;
  ASSERT_EQ(run.lines.size(), 2U) << run;
  EXPECT_EQ(run.lines[0]["acquired"], true);
  EXPECT_EQ(run.lines[0]["key"], key);
  EXPECT_EQ(run.lines[0]["strategy"], "token");
  EXPECT_TRUE(std::regex_match(run.lines[0]["value"].get<std::string>(), std::regex("^[0-9a-f]{32}$")));
  EXPECT_EQ(run.lines[1]["released"], true);
  EXPECT_EQ(raw({"EXISTS", key}).integer, 0);
}

TEST(CliHold, RedissonHoldsAHashFieldAndReleases) {
  const std::string key = unique_key();
  const CliRun run = run_cli("hold '" + key + "' --strategy redisson --json --for 10");
  EXPECT_EQ(run.exit_code, 0) << run;
  ASSERT_EQ(run.lines.size(), 2U) << run;
  EXPECT_EQ(run.lines[0]["strategy"], "redisson");
  EXPECT_TRUE(std::regex_match(run.lines[0]["value"].get<std::string>(), std::regex("^[0-9a-f-]{36}:[0-9]+$")));
  EXPECT_EQ(run.lines[1]["released"], true);
  EXPECT_EQ(raw({"EXISTS", key}).integer, 0);
}

TEST(CliHold, LegacyWritesEachFormatInBothPresets) {
  for (const std::string preset : {"faithful", "hardened"}) {
    for (const LegacyFormat format : {LegacyFormat::epoch_ms, LegacyFormat::epoch_seconds, LegacyFormat::uuid_ms}) {
      const std::string name(to_string(format));
      SCOPED_TRACE(preset + " " + name);
      const std::string key = unique_key();
      const CliRun run =
          run_cli("hold '" + key + "' --json --strategy legacy --preset " + preset + " --format " + name);
      EXPECT_EQ(run.exit_code, 0) << run;
      ASSERT_EQ(run.lines.size(), 2U) << run;
      EXPECT_EQ(run.lines[0]["acquired"], true);
      EXPECT_EQ(run.lines[0]["strategy"], "legacy");
      EXPECT_EQ(run.lines[0]["preset"], preset);
      EXPECT_EQ(run.lines[0]["format"], name);
      EXPECT_TRUE(parse_legacy_value(run.lines[0]["value"].get<std::string>(), format).has_value());
      EXPECT_EQ(run.lines[1]["released"], true);
      EXPECT_EQ(raw({"EXISTS", key}).integer, 0);
    }
  }
}

TEST(CliHold, HeldKeyExitsOneAndChangesNothing) {
  const std::string key = unique_key();
  Mutex holder(test_client(), key, token_options());
  ASSERT_TRUE(holder.try_lock());
  const CliRun run = run_cli("hold '" + key + "' --json --wait 30 --retry 5");
  EXPECT_EQ(run.exit_code, 1);
  ASSERT_EQ(run.lines.size(), 1U) << run;
  EXPECT_EQ(run.lines[0]["acquired"], false);
  EXPECT_TRUE(run.lines[0]["value"].is_null());
  EXPECT_EQ(raw({"GET", key}).str, holder.value());
  holder.unlock();
}

TEST(CliHold, PrintsTheFenceAndAWatchdogKeepsTheLockPastItsLease) {
  const std::string key = unique_key();
  const CliRun first = run_cli("hold '" + key + "' --json --fencing");
  ASSERT_EQ(first.exit_code, 0) << first;
  ASSERT_TRUE(first.lines.at(0).contains("fence")) << first;
  // Held three leases long: without the watchdog the release would find the key gone (exit 1).
  // A lease of a second leaves each renewal (every third of it) room for a slow sanitizer build
  // under load: with 200 ms, one renewal late by 130 ms lost the lock under ASan.
  const CliRun second = run_cli("hold '" + key + "' --json --fencing --watchdog --lease 1500 --for 4500");
  ASSERT_EQ(second.exit_code, 0) << second;
  EXPECT_GT(second.lines.at(0)["fence"].get<std::uint64_t>(), first.lines.at(0)["fence"].get<std::uint64_t>());
  EXPECT_EQ(second.lines.at(1)["released"], true) << second;
  EXPECT_FALSE(run_cli("hold '" + key + "' --json").lines.at(0).contains("fence")) << "no fencing, no fence";
  EXPECT_EQ(run_cli("hold '" + key + "' --fencing --strategy legacy").exit_code, 2);
  EXPECT_EQ(run_cli("hold '" + key + "' --watchdog --strategy legacy --preset faithful").exit_code, 2);
  EXPECT_EQ(run_cli("hold '" + key + "' --wait-mode fair --strategy legacy").exit_code, 2);
}

TEST(CliHold, ABinaryKeyComesOutEscapedAndReadsBackExactly) {
  const std::string plain = unique_key();
  // The shell (popen's /bin/sh) writes the two invalid bytes with printf's octal escapes.
  const CliRun run = run_cli("hold \"$(printf '" + plain + "\\377\\376')\" --json");
  ASSERT_EQ(run.exit_code, 0) << run;
  ASSERT_FALSE(run.lines.empty()) << run;
  EXPECT_EQ(tools::read_key(run.lines[0]), plain + "\xff\xfe") << run;
  EXPECT_EQ(run.lines[0]["key"], plain + "\\xff\\xfe") << run;
}

TEST(CliHold, BadInputExitsTwo) {
  const std::string key = unique_key();
  EXPECT_EQ(run_cli("hold", true).exit_code, 2);                           // no key
  EXPECT_EQ(run_cli("hold k --url redis://host:0", false).exit_code, 2);   // bad URL
  EXPECT_EQ(run_cli("hold '" + key + "' --strategy paxos").exit_code, 2);  // bad option
  EXPECT_EQ(run_cli("hold '" + key + "' --lease 0").exit_code, 2);         // bad lease
  EXPECT_EQ(run_cli("hold '' --json").exit_code, 2);                       // empty key
  raw({"HSET", key, "f", "1"});
  EXPECT_EQ(run_cli("hold '" + key + "'").exit_code, 2);  // wrong type
  const std::string legacy_key = unique_key("legacy");
  raw({"SET", legacy_key, "garbage"});
  EXPECT_EQ(run_cli("hold '" + legacy_key + "' --strategy legacy").exit_code, 2);  // unparsable value
  EXPECT_EQ(raw({"GET", legacy_key}).str, "garbage");
}

TEST(CliHold, HangupReleasesTheLockLikeTermAndInterrupt) {
  for (const int signal : {SIGHUP, SIGTERM, SIGINT}) {
    SCOPED_TRACE(strsignal(signal));
    const std::string key = unique_key();
    BackgroundCli hold("hold '" + key + "' --json --for 60000");
    const auto acquired = hold.next_line();
    ASSERT_TRUE(acquired.has_value());
    EXPECT_EQ(nlohmann::json::parse(*acquired)["acquired"], true);
    ::kill(hold.pid(), signal);
    const CliRun run = hold.finish();
    EXPECT_EQ(run.exit_code, 130) << run;
    ASSERT_EQ(run.lines.size(), 2U) << run;  // acquired, released
    EXPECT_EQ(run.lines[1]["released"], true) << run;
    EXPECT_EQ(raw({"EXISTS", key}).integer, 0);
    raw({"DEL", key});
  }
}

// An interrupt while hold waits for a held key ends the wait at once: exit 130, nothing acquired.
TEST(CliHold, AnInterruptDuringAWaitEndsItAtOnce) {
  const std::string key = unique_key();
  Mutex holder(test_client(), key, token_options());
  ASSERT_TRUE(holder.try_lock());
  BackgroundCli hold("hold '" + key + "' --json --wait 60000 --for 0");
  ASSERT_TRUE(eventually([&] { return raw({"LLEN", lock_key_names(key).waiter_queue}).integer == 1; }))
      << "the CLI is queued";
  ::kill(hold.pid(), SIGINT);
  const CliRun run = hold.finish(std::chrono::seconds(5));  // not the 60 s of --wait
  EXPECT_EQ(run.exit_code, 130) << run;
  ASSERT_EQ(run.lines.size(), 1U) << run;
  EXPECT_EQ(run.lines[0]["acquired"], false) << run;
  EXPECT_EQ(raw({"GET", key}).str, holder.value());
  holder.unlock();
}

TEST(CliHold, UnreachableServerExitsThree) {
  EXPECT_EQ(run_cli("hold k --url redis://127.0.0.1:1", false).exit_code, 3);
}

TEST(CliHold, HelpAndVersionWorkOnTheToolAndTheSubcommand) {
  const CliRun help = run_cli("hold --help", false);
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_THAT(help.output, ::testing::HasSubstr("--strategy"));
  EXPECT_THAT(run_cli("hold --version", false).output, ::testing::HasSubstr("lockbridge 0."));
  EXPECT_THAT(run_cli("--version", false).output, ::testing::HasSubstr("lockbridge 0."));
  EXPECT_THAT(run_cli("--help", false).output, ::testing::HasSubstr("hold"));
  EXPECT_EQ(run_cli("no-such-command", false).exit_code, 2);
}

TEST(CliHold, WithoutAUrlItStartsAndStopsItsOwnServer) {
  const CliRun run = run_cli("hold embedded-key --json --for 10", false);
  EXPECT_EQ(run.exit_code, 0) << run;
  ASSERT_EQ(run.lines.size(), 2U) << run;
  EXPECT_EQ(run.lines[0]["acquired"], true);
  EXPECT_EQ(run.lines[1]["released"], true);
  EXPECT_EQ(raw({"EXISTS", "embedded-key"}).integer, 0);  // it was not the fixture's server
}

}  // namespace
}  // namespace lockbridge::testing
