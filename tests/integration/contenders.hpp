// Processes contending on one lock key, each checking exclusion the same way (INCR of a check key
// must give 1 while holding; DECR before releasing) and printing one summary line:
//   acquisitions=N violations=V errors=E [woken=W timed_out=T]
// lock_contender (lockbridge) prints the first three; tests/interop/peer.py all five.
#pragma once

#include <cstdio>
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

// The command line of one lock_contender: `strategy` token|legacy|redisson, `preset`
// faithful|hardened|none, on the fixture's server. With `stop_key`, it also stops once that key
// exists; `lease_ms` 0 keeps lock_contender's default.
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

}  // namespace lockbridge::testing
