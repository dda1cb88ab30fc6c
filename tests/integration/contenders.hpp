// Processes contending on one lock key, each checking exclusion the same way (INCR of a check key
// must give 1 while holding; DECR before releasing) and printing one summary line:
//   acquisitions=N violations=V errors=E [woken=W timed_out=T]
// lock_contender (lockbridge) prints the first three; tests/interop/peer.py all five.
#pragma once

#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace lockbridge::testing {

struct ContenderTotals {
  long acquisitions = 0;
  long violations = 0;
  long errors = 0;
  long timed_out = 0;        // peer.py only: waits that ran out a long lease with no release heard
  int failed_processes = 0;  // exited non-zero, or printed no summary line
};

// The command line of one lock_contender (its usage: lock_contender_main.cpp), on the fixture's
// server: e.g. `strategy` token|legacy|redisson, `preset` faithful|hardened|none|fair|fenced|spin.
// With `stop_key`, it also stops once that key exists; `lease_ms` 0 keeps lock_contender's default.
std::string contender_command(const std::string& strategy, const std::string& preset, const std::string& key,
                              const std::string& check_key, int acquisitions, int lease_ms = 0,
                              const std::string& stop_key = "");

// Starts every command at once; finish() waits for them and adds up their summary lines.
class Contenders {
 public:
  explicit Contenders(const std::vector<std::string>& commands);
  ~Contenders();  // waits for those not finished yet
  Contenders(const Contenders&) = delete;
  Contenders& operator=(const Contenders&) = delete;
  ContenderTotals finish();

 private:
  std::vector<FILE*> processes_;
};

// Starts every command at once, then adds up their summary lines.
ContenderTotals run_contenders(const std::vector<std::string>& commands);

// A fleet of mixed languages on one lock: lock_contender processes (`commands`, each stopping once
// `stop_key` exists) and Java peer sides played by threads of this process (each runs until
// `stop_key` exists and returns the violations it saw). run_mixed_fleet() starts them all, lets
// them run until `joined()` holds and the processes have acquired 4 times (60 s at most: a
// sanitized build starts its processes slowly, and Java threads alone can satisfy `joined`), and
// `linger` longer (the processes' own share of the run), sets `stop_key`, and gathers what every
// side saw.
struct MixedFleetRun {
  bool joined = false;  // joined() held, and the processes had acquired 4 times, in time
  ContenderTotals processes;
  std::vector<long> java_violations;  // each Java side's, in java_sides' order
};
MixedFleetRun run_mixed_fleet(const std::vector<std::string>& commands, const std::string& stop_key,
                              const std::vector<std::function<long()>>& java_sides, const std::function<bool()>& joined,
                              std::chrono::milliseconds linger = std::chrono::milliseconds(200));
// What every mixed fleet must show: each process finished and the processes acquired, with no
// error, and no side saw what its check forbids (two holders, a fence out of order, ...).
void expect_no_violation(const MixedFleetRun& run);

}  // namespace lockbridge::testing
