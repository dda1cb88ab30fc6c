// Numbers on the command line and the time they stand for: every numeric option of every
// subcommand is range-checked (exit 2, naming the option and its range) before anything runs, no
// time sum overflows, and a long sleep of the CLI ends promptly on SIGINT, SIGTERM or SIGHUP.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <string>
#include <vector>

#include "redis_test_support.hpp"

namespace lockbridge::testing {
namespace {

using ::testing::HasSubstr;

struct OutOfRange {
  std::string command;  // the subcommand and what it needs besides the option
  std::string option;
  std::string value;
};

TEST(CliLimits, EveryNumericOptionOutOfItsRangeExitsTwoNamingTheOptionAndTheRange) {
  const std::string huge = "99999999999999999999";  // beyond any 64-bit integer
  const std::vector<OutOfRange> cases{
      {"hold k", "lease", "0"},
      {"hold k", "lease", "31536000001"},
      {"hold k", "lease", huge},
      {"hold k", "lease", "ten"},
      {"hold k", "retry", "-1"},
      {"hold k", "retry", "31536000001"},
      {"hold k", "wait", "-1"},
      {"hold k", "wait", "31536000001"},
      {"hold k", "for", "-1"},
      {"hold k", "for", "31536000001"},
      {"hold k", "for", "9223372036854775807"},
      {"hold k", "for", huge},
      {"hold k", "connect-timeout", "0"},
      {"watch 'x*' --once", "connect-timeout", "31536000001"},
      {"audit", "batch", "0"},
      {"audit", "batch", "100001"},
      {"audit", "far-future", "0"},
      {"audit", "far-future", "9223372036854775807"},
      {"convert --to token --dry-run", "batch", "0"},
      {"convert --to token --dry-run", "far-future", "9223372036854775807"},
      {"bench", "clients", "0"},
      {"bench", "clients", "257"},
      {"bench", "clients", huge},
      {"bench", "duration", "0"},
      {"bench", "duration", "86401"},
      {"bench", "duration", "nan"},
      {"bench", "duration", "1e400"},
      {"bench", "ops", "0"},
      {"bench", "ops", huge},
      {"bench", "hold", "-1"},
      {"bench", "hold", "9223372036854775807"},
      {"bench", "think", "31536000001"},
      {"bench", "timeout", "31536000001"},
      {"bench", "skew-ms", "0"},
      {"bench", "skew-ms", "31536000001"},
      {"bench", "renewals", "0"},
      {"bench", "renewals", "1000001"},
      {"bench --strategy legacy", "lease", "0"},
      {"compare", "duration", "0"},
      {"compare", "duration", "3601"},
  };
  for (const OutOfRange& bad : cases) {
    const std::string args = bad.command + " --" + bad.option + "=" + bad.value;
    SCOPED_TRACE(args);
    // Bounded: before this rule, some of these ran for ever.
    const CliRun run = run_cli(args, true, "timeout -s KILL 30");
    EXPECT_EQ(run.exit_code, 2) << run;
    EXPECT_THAT(run.errors, HasSubstr("--" + bad.option + " must be between")) << run;
  }
}

TEST(CliLimits, AFarFutureAtItsLimitFlagsNoLiveStamp) {
  const std::string key = unique_key();
  raw({"SET", key, std::to_string(server_ms() + 60000)});
  const CliRun run = run_cli("audit --json --far-future 3153600000000 --match '" + key + "'");  // 100 years
  ASSERT_EQ(run.exit_code, 0) << run;
  ASSERT_EQ(run.lines.size(), 1U) << run;
  EXPECT_EQ(run.lines[0]["by_flag"]["far_future"], 0) << run;
  raw({"DEL", key});
}

TEST(CliLimits, ASignalCutsALongBenchHoldOrThinkShort) {
  for (const int signal : {SIGTERM, SIGINT, SIGHUP}) {
    for (const std::string sleep : {"--hold", "--think"}) {
      SCOPED_TRACE(std::string(strsignal(signal)) + " " + sleep);
      const std::string key = unique_key();
      BackgroundCli bench("bench --json --ops 2 --lock-key '" + key + "' " + sleep + " 3600000");
      // The check key exists once the first cycle has entered: the client is holding or thinking.
      ASSERT_TRUE(eventually([&] { return raw({"EXISTS", key + ":check"}).integer == 1; }));
      ::kill(bench.pid(), signal);
      const CliRun run = bench.finish();
      EXPECT_EQ(run.exit_code, 130) << run;
      EXPECT_EQ(raw({"EXISTS", key}).integer, 0) << "the lock was released";
      raw({"DEL", key + ":check"});
    }
  }
}

}  // namespace
}  // namespace lockbridge::testing
