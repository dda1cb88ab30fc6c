// What the command line asks for, taken as asked or refused: an option that does not apply to the
// mode chosen (or an empty value) is bad usage, exit 2, before anything runs, never silently
// dropped; numbers are named in their own unit; and a command leaves no key of its own behind.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "lockbridge/lock_keys.hpp"
#include "redis_test_support.hpp"

namespace lockbridge::testing {
namespace {

using ::testing::HasSubstr;

struct Refused {
  std::string args;
  std::string says;
};

TEST(CliModes, AnOptionThatDoesNotApplyToTheModeIsRefusedNotDropped) {
  const std::vector<Refused> cases{
      {"bench --soak 0.1 --clients 3", "--clients does not apply to --soak"},
      {"bench --soak 0.1 --fault kill", "--fault does not apply to --soak"},
      {"bench --soak 0.1 --renewals 3", "--renewals does not apply to --soak"},
      {"bench --renewals 3 --clients 4", "--clients does not apply to --renewals"},
      {"bench --renewals 3 --hold 5", "--hold does not apply to --renewals"},
      {"bench --seed 4 --duration 0.1", "--seed is --soak's"},
      {"bench --skew-ms 10 --duration 0.1", "--skew-ms is --fault skew's"},
      {"bench --ops 10 --duration 1", "--duration and --ops each say when the run ends"},
      {"hold k --strategy token --preset faithful", "--preset is the legacy strategy's"},
      {"hold k --strategy redisson --format seconds", "--format is the legacy strategy's"},
      {"hold k --wait-mode poll --starvation-after 5", "--starvation-after is notify mode's"},
      {"hold k --strategy legacy --preset faithful --starvation-after 5", "--starvation-after is notify mode's"},
      {"compare --plot chart.svg --no-plot", "--plot names the chart that --no-plot leaves out"},
      {"convert --to token --dry-run --journal j.jsonl", "--journal is never written by --dry-run"},
      {"convert --rollback j.jsonl --match 'x*'", "--match is a conversion's"},
      {"audit --match ''", "--match must not be empty"},
      {"convert --to token --dry-run --match ''", "--match must not be empty"},
      {"watch '' --once", "PATTERN must not be empty"},
      {"watch 'x*' --once --interval 50", "--once prints one"},
      {"watch 'x*' --once --json --top 3", "--top is the table's"},
  };
  for (const Refused& refused : cases) {
    SCOPED_TRACE(refused.args);
    const CliRun run = run_cli(refused.args, true, "timeout -s KILL 30");
    EXPECT_EQ(run.exit_code, 2) << run;
    EXPECT_THAT(run.errors, HasSubstr(refused.says)) << run;
    EXPECT_TRUE(run.output.empty()) << "nothing ran: " << run;
  }
}

TEST(CliModes, MinutesAreNamedAsMinutesAndNoValueRoundsPastItsMinimum) {
  const CliRun soak = run_cli("bench --soak 0.001");
  EXPECT_EQ(soak.exit_code, 2) << soak;
  EXPECT_THAT(soak.errors, HasSubstr("--soak must be between 0.1 and 10080 minutes")) << soak;
  const CliRun duration = run_cli("bench --duration 0.0004");  // 0.4 ms rounds to 0
  EXPECT_EQ(duration.exit_code, 2) << duration;
  EXPECT_THAT(duration.errors, HasSubstr("--duration must be between 0.001 and 86400 seconds")) << duration;
}

TEST(CliModes, AUnixSocketPathTooLongForTheKernelIsABadUrl) {
  const CliRun run = run_cli("hold k --url unix:///tmp/" + std::string(120, 'a') + ".sock", false);
  EXPECT_EQ(run.exit_code, 2) << run;
  EXPECT_THAT(run.errors, HasSubstr("a unix socket address holds at most 107")) << run;
  EXPECT_EQ(expect_error([] { Client("unix:///" + std::string(107, 'b')); }).errc(), Errc::bad_option);
  EXPECT_NO_THROW(Client("unix:///" + std::string(106, 'b')));
}

TEST(CliModes, KeyAloneIsToldItIsTheTlsKeyAndTheLockKeyIsLockKey) {
  for (const std::string command : {"bench --key mylock --ops 1", "hold k --key mylock", "audit --key mylock"}) {
    const CliRun run = run_cli(command, false);
    EXPECT_EQ(run.exit_code, 2) << run;
    EXPECT_THAT(run.errors, HasSubstr("--key is the private key of a TLS client certificate and goes with --cert; "
                                      "the key to lock is --lock-key"))
        << run;
  }
}

TEST(CliModes, ASoakOfAnUnreachableServerFailsAtOnce) {
  // Before, its first episode failed and the soak waited 30 s for the server to answer.
  const CliRun run = run_cli("bench --soak 0.1 --url redis://127.0.0.1:1", false, "timeout -s KILL 20");
  EXPECT_EQ(run.exit_code, 3) << run;
  EXPECT_THAT(run.errors, HasSubstr("Connection refused")) << run;
}

TEST(CliModes, BenchRemovesTheKeysItKeptBesideItsOwnLockKey) {
  // Fencing draws from a counter beside the lock key and writes a fenced resource beside the check
  // key; notify and fair mode queue waiters beside it. A key of bench's own (random) goes with all of
  // them; one the user named keeps its fence counter, which must never go back.
  for (const std::string& mode : {std::string("--fencing"), std::string("--fencing --wait-mode fair")}) {
    const CliRun run = run_cli("bench --clients 3 --ops 60 --hold 1 --json " + mode);
    ASSERT_EQ(run.exit_code, 0) << run;
    ASSERT_EQ(run.lines.size(), 1U) << run;
    const std::string key = run.lines.front()["key"];
    const LockKeyNames names = lock_key_names(key);
    for (const std::string& left :
         {key, run.lines.front()["check_key"].get<std::string>(),
          run.lines.front()["check_key"].get<std::string>() + ":fenced-resource", names.fence_counter,
          names.waiter_queue, names.waiter_times, names.fair_queue, names.fair_deadlines}) {
      EXPECT_EQ(raw({"EXISTS", left}).integer, 0) << mode << ": " << left;
    }
  }
  const std::string named = unique_key("named");
  ASSERT_EQ(run_cli("bench --clients 2 --ops 10 --fencing --lock-key '" + named + "'").exit_code, 0);
  EXPECT_EQ(raw({"EXISTS", lock_key_names(named).fence_counter}).integer, 1) << "a named key keeps its counter";
  raw({"DEL", lock_key_names(named).fence_counter});
}

}  // namespace
}  // namespace lockbridge::testing
