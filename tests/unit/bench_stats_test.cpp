// The bench's arithmetic: percentiles, handoffs, same-owner ratio, fairness, commandstats deltas.
#include <gtest/gtest.h>

#include "bench/server_cost.hpp"
#include "bench/stats.hpp"

namespace lockbridge::tools::bench {
namespace {

HoldSample hold(int client, std::int64_t acquire_start, std::int64_t acquire_end, std::int64_t release_start,
                std::int64_t release_end) {
  HoldSample s;
  s.client = client;
  s.acquire_start_ns = acquire_start;
  s.acquire_end_ns = acquire_end;
  s.release_start_ns = release_start;
  s.release_end_ns = release_end;
  return s;
}

TEST(BenchStats, PercentileIsNearestRank) {
  std::vector<double> values{5, 1, 4, 2, 3};
  EXPECT_EQ(percentile(values, 50), 3);
  EXPECT_EQ(percentile(values, 99), 5);
  EXPECT_EQ(percentile(values, 1), 1);
  std::vector<double> none;
  EXPECT_FALSE(percentile(none, 50).has_value());
}

TEST(BenchStats, HandoffIsFromReleaseStartToTheNextOtherClientsAcquire) {
  // Client 0 holds twice in a row, then client 1 takes over; times in ns.
  const std::vector<HoldSample> zero{hold(0, 0, 10'000, 20'000, 30'000), hold(0, 30'000, 40'000, 50'000, 60'000)};
  const std::vector<HoldSample> one{hold(1, 0, 90'000, 100'000, 110'000)};
  const SampleSummary s = summarize({zero, one});
  EXPECT_EQ(s.acquisitions, 3U);
  ASSERT_TRUE(s.handoff_p50_us.has_value());
  EXPECT_DOUBLE_EQ(*s.handoff_p50_us, 40.0);   // 90'000 - 50'000 ns
  EXPECT_DOUBLE_EQ(*s.same_owner_ratio, 0.5);  // (0 -> 0) same, (0 -> 1) different
  EXPECT_EQ(s.per_client_min, 1U);
  EXPECT_EQ(s.per_client_max, 2U);
  EXPECT_DOUBLE_EQ(*s.acquire_max_us, 90.0);
  EXPECT_DOUBLE_EQ(*s.cycle_p50_us, 20.0);  // 10 us acquire + 10 us release each
}

TEST(BenchStats, ALockNobodyWasWaitingForIsNoHandoff) {
  // Client 1 starts asking only after client 0's release began: idle time, not a handoff.
  const std::vector<HoldSample> zero{hold(0, 0, 10'000, 20'000, 30'000)};
  const std::vector<HoldSample> one{hold(1, 25'000, 40'000, 50'000, 60'000)};
  const SampleSummary s = summarize({zero, one});
  EXPECT_FALSE(s.handoff_p50_us.has_value());
}

TEST(BenchStats, OneClientHasNoHandoffAndAnIdleClientCountsAsZero) {
  const std::vector<HoldSample> zero{hold(0, 0, 1'000, 2'000, 3'000), hold(0, 3'000, 4'000, 5'000, 6'000)};
  const SampleSummary s = summarize({zero, {}});
  EXPECT_FALSE(s.handoff_p50_us.has_value());
  EXPECT_EQ(s.per_client_min, 0U);
  EXPECT_DOUBLE_EQ(*s.same_owner_ratio, 1.0);
}

TEST(BenchStats, WaitsThatEndedWithoutTheLockCountInTheAcquirePercentiles) {
  // Client 1 never got the lock: its 5 ms wait, cut short by the run's end, is the worst one.
  const std::vector<HoldSample> zero{hold(0, 0, 10'000, 20'000, 30'000)};
  const std::vector<float> cut{5000.0F};
  const SampleSummary s = summarize({zero, {}}, {{}, cut});
  EXPECT_EQ(s.acquisitions, 1U);
  EXPECT_EQ(s.unacquired_waits, 1U);
  EXPECT_DOUBLE_EQ(*s.acquire_max_us, 5000.0);
  EXPECT_DOUBLE_EQ(*s.acquire_p999_us, 5000.0);
  EXPECT_EQ(s.per_client_min, 0U);
}

TEST(BenchStats, JainsIndexIsOneForEqualSharesAndOneOverNForOneTakingAll) {
  const std::vector<HoldSample> two{hold(0, 0, 1, 2, 3), hold(0, 3, 4, 5, 6)};
  const std::vector<HoldSample> other_two{hold(1, 0, 1, 2, 3), hold(1, 3, 4, 5, 6)};
  EXPECT_DOUBLE_EQ(*summarize({two, other_two}).fairness_jain, 1.0);
  EXPECT_DOUBLE_EQ(*summarize({two, {}, {}, {}}).fairness_jain, 0.25);
  EXPECT_FALSE(summarize({{}, {}}).fairness_jain.has_value());
}

TEST(BenchCommandstats, ParsesAndSubtractsLeavingOutTheBenchsOwnCommands) {
  const auto before = parse_commandstats(
      "# Commandstats\r\ncmdstat_evalsha:calls=10,usec=50,usec_per_call=5.00,rejected_calls=0,failed_calls=0\r\n"
      "cmdstat_incr:calls=3,usec=3\r\ncmdstat_info:calls=1,usec=9\r\n");
  const auto after = parse_commandstats(
      "# Commandstats\r\ncmdstat_evalsha:calls=30,usec=50\r\ncmdstat_set:calls=10,usec=1\r\n"
      "cmdstat_script|load:calls=2,usec=1\r\ncmdstat_incr:calls=13,usec=3\r\ncmdstat_decr:calls=10,usec=1\r\n"
      "cmdstat_info:calls=2,usec=9\r\ncmdstat_ping:calls=1000,usec=9\r\nnot a stat line\r\n");
  const auto delta = lock_commands_between(before, after);
  ASSERT_TRUE(delta.has_value());
  EXPECT_EQ(*delta, (CommandCounts{{"evalsha", 20}, {"script|load", 2}, {"set", 10}}));
  EXPECT_EQ(total(*delta), 32U);
}

TEST(BenchCommandstats, CountersThatWentBackwardsMeanARestartAndNoAnswer) {
  EXPECT_FALSE(lock_commands_between({{"get", 10}}, {{"get", 3}}).has_value());
  EXPECT_FALSE(lock_commands_between({{"get", 10}}, {{"set", 3}}).has_value());
}

TEST(BenchServerCpu, AddsUserAndSystemTimeAndLeavesOutTheChildren) {
  const auto seconds = parse_cpu_seconds(
      "# CPU\r\nused_cpu_sys:1.250000\r\nused_cpu_user:0.500000\r\nused_cpu_sys_children:9.000000\r\n"
      "used_cpu_user_children:9.000000\r\nused_cpu_sys_main_thread:1.000000\r\nused_cpu_user_main_thread:0.400000\r\n");
  ASSERT_TRUE(seconds.has_value());
  EXPECT_DOUBLE_EQ(*seconds, 1.75);
}

TEST(BenchServerCpu, AServerThatDoesNotReportBothTimesGivesNoFigure) {
  EXPECT_FALSE(parse_cpu_seconds("# CPU\r\nused_cpu_sys:1.25\r\n").has_value());
  EXPECT_FALSE(parse_cpu_seconds("# CPU\r\nused_cpu_sys:1.25\r\nused_cpu_user:much\r\n").has_value());
  EXPECT_FALSE(parse_cpu_seconds("").has_value());
}

}  // namespace
}  // namespace lockbridge::tools::bench
