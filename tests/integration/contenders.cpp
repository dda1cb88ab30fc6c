#include "contenders.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <future>
#include <optional>
#include <regex>
#include <thread>

#include "redis_test_support.hpp"

namespace lockbridge::testing {

std::string contender_command(const std::string& strategy, const std::string& preset, const std::string& key,
                              const std::string& check_key, int acquisitions, int lease_ms,
                              const std::string& stop_key) {
  std::string command = std::string(LOCKBRIDGE_CONTENDER) + " '" + unix_url() + "' '" + key + "' '" + check_key + "' " +
                        strategy + " " + preset + " " + std::to_string(acquisitions);
  if (lease_ms > 0 || !stop_key.empty()) command += " " + std::to_string(lease_ms > 0 ? lease_ms : 60000);
  if (!stop_key.empty()) command += " '" + stop_key + "'";
  return command;
}

ContenderTotals run_contenders(const std::vector<std::string>& commands) { return Contenders(commands).finish(); }

MixedFleetRun run_mixed_fleet(const std::vector<std::string>& commands, const std::string& stop_key,
                              const std::vector<std::function<long()>>& java_sides, const std::function<bool()>& joined,
                              std::chrono::milliseconds linger) {
  // Every side runs until the stop key exists, and the fleet's and the threads' destructors wait
  // for them: whatever ends this early (a throw), the key is set first (destroyed first: declared
  // last), or the test would hang.
  struct StopFirst {
    const std::string& key;
    ~StopFirst() {
      try {
        raw({"SET", key, "1"});
      } catch (...) {
      }
    }
  };
  std::vector<std::future<long>> java;
  std::optional<Contenders> fleet;
  const StopFirst stop_first{stop_key};
  for (const auto& side : java_sides) java.push_back(std::async(std::launch::async, side));
  fleet.emplace(commands);
  MixedFleetRun run;
  const std::string acquired = stop_key + ":acquired";  // lock_contender counts there
  run.joined = eventually([&] { return joined() && std::atoll(raw({"GET", acquired}).str.c_str()) >= 4; },
                          std::chrono::seconds(60));
  std::this_thread::sleep_for(linger);
  raw({"SET", stop_key, "1"});
  run.processes = fleet->finish();
  for (auto& side : java) run.java_violations.push_back(side.get());
  raw({"DEL", acquired});
  return run;
}

void expect_no_violation(const MixedFleetRun& run) {
  EXPECT_EQ(run.processes.failed_processes, 0) << "processes that failed or printed no summary";
  EXPECT_GE(run.processes.acquisitions, 4) << "the processes' acquisitions";
  EXPECT_EQ(run.processes.violations, 0) << "the processes' violations";
  EXPECT_EQ(run.processes.errors, 0) << "the processes' errors";
  for (std::size_t side = 0; side < run.java_violations.size(); ++side) {
    EXPECT_EQ(run.java_violations[side], 0) << "the violations Java side " << side << " saw";
  }
}

Contenders::Contenders(const std::vector<std::string>& commands) {
  for (const std::string& command : commands) processes_.push_back(start_process(command));
}

Contenders::~Contenders() {
  for (FILE* process : processes_) (void)finish_process(process);
}

ContenderTotals Contenders::finish() {
  std::vector<FILE*> processes = std::move(processes_);
  processes_.clear();
  ContenderTotals totals;
  const std::regex line("acquisitions=([0-9]+) violations=([0-9]+) errors=([0-9]+)( woken=[0-9]+ timed_out=([0-9]+))?");
  for (FILE* process : processes) {
    const ProcessOutput finished = finish_process(process);
    std::smatch match;
    if (finished.status != 0 || !std::regex_search(finished.output, match, line)) {
      ++totals.failed_processes;
      continue;
    }
    totals.acquisitions += std::stol(match[1]);
    totals.violations += std::stol(match[2]);
    totals.errors += std::stol(match[3]);
    if (match[5].matched) totals.timed_out += std::stol(match[5]);
  }
  return totals;
}

}  // namespace lockbridge::testing
