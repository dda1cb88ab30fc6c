// Mutual exclusion across processes: 8 lock_contender processes per strategy contend on one key;
// each holder INCRs a check key (must read 1) and DECRs it before releasing. 10,000 acquisitions,
// zero overlaps.
#include <gtest/gtest.h>

#include <cstdio>
#include <regex>

#include "redis_test_support.hpp"

namespace lockbridge::testing {
namespace {

constexpr int kProcesses = 8;
constexpr int kAcquisitionsPerProcess = 1250;  // 10,000 in all

struct Totals {
  long acquisitions = 0;
  long violations = 0;
  long errors = 0;
  int failed_processes = 0;
};

Totals run_contenders(const std::string& strategy, const std::string& preset) {
  const std::string key = unique_key("lock");
  const std::string check_key = unique_key("check");
  std::vector<FILE*> processes;
  for (int i = 0; i < kProcesses; ++i) {
    const std::string command = std::string(LOCKBRIDGE_CONTENDER) + " '" + unix_url() + "' '" + key + "' '" + check_key +
                                "' " + strategy + " " + preset + " " + std::to_string(kAcquisitionsPerProcess);
    FILE* process = popen(command.c_str(), "r");
    if (process == nullptr) throw std::runtime_error("cannot start " + command);
    processes.push_back(process);
  }
  Totals totals;
  const std::regex line("acquisitions=([0-9]+) violations=([0-9]+) errors=([0-9]+)");
  for (FILE* process : processes) {
    std::string output;
    char buffer[256];
    while (fgets(buffer, sizeof buffer, process) != nullptr) output += buffer;
    const int status = pclose(process);
    std::smatch match;
    if (status != 0 || !std::regex_search(output, match, line)) {
      ++totals.failed_processes;
      continue;
    }
    totals.acquisitions += std::stol(match[1]);
    totals.violations += std::stol(match[2]);
    totals.errors += std::stol(match[3]);
  }
  return totals;
}

class CrossProcess : public ::testing::TestWithParam<std::pair<std::string, std::string>> {};

TEST_P(CrossProcess, EightProcessesNeverHoldTheLockAtOnce) {
  const auto& [strategy, preset] = GetParam();
  const Totals totals = run_contenders(strategy, preset);
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
