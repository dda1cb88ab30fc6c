// Mutual exclusion across processes: 8 lock_contender processes per strategy contend on one key;
// each holder INCRs a check key (must read 1) and DECRs it before releasing. 10,000 acquisitions,
// zero overlaps.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "contenders.hpp"
#include "redis_test_support.hpp"

namespace lockbridge::testing {
namespace {

constexpr int kProcesses = 8;
constexpr int kAcquisitionsPerProcess = 1250;  // 10,000 in all

ContenderTotals run_eight(const std::string& strategy, const std::string& preset) {
  const std::string key = unique_key("lock");
  const std::string check_key = unique_key("check");
  return run_contenders(std::vector<std::string>(
      kProcesses, contender_command(strategy, preset, key, check_key, kAcquisitionsPerProcess)));
}

class CrossProcess : public ::testing::TestWithParam<std::pair<std::string, std::string>> {};

TEST_P(CrossProcess, EightProcessesNeverHoldTheLockAtOnce) {
  const auto& [strategy, preset] = GetParam();
  const ContenderTotals totals = run_eight(strategy, preset);
  EXPECT_EQ(totals.failed_processes, 0);
  EXPECT_EQ(totals.acquisitions, kProcesses * kAcquisitionsPerProcess);
  EXPECT_EQ(totals.violations, 0);
  EXPECT_EQ(totals.errors, 0);
}

INSTANTIATE_TEST_SUITE_P(Strategies, CrossProcess,
                         ::testing::Values(std::pair<std::string, std::string>{"legacy", "faithful"},
                                           std::pair<std::string, std::string>{"legacy", "hardened"},
                                           std::pair<std::string, std::string>{"token", "none"},
                                           std::pair<std::string, std::string>{"redisson", "none"}),
                         [](const auto& param_info) { return param_info.param.first + "_" + param_info.param.second; });

}  // namespace
}  // namespace lockbridge::testing
