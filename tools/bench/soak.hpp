// bench --soak MINUTES: a long run of episodes, each a bench run of client processes under one
// fault (pause, kill -9, server crash and restart from its append-only file, clock skew, a stalled
// link), drawn with the strategies at random from a seed, on one Redis, checking exclusion (the
// check key) and fencing (a fenced resource) the whole time. What each profile is allowed to show
// is stated in `expected_overlaps` (README.md, docs/benchmarks.md): a soak passes when nothing else
// happened.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "../cli_common.hpp"
#include "bench_config.hpp"
#include "embedded_server.hpp"

namespace lockbridge::tools::bench {

struct SoakConfig {
  std::chrono::milliseconds length{60000};
  std::uint64_t seed = 0;
};

// One profile's tally over the soak.
struct SoakTally {
  std::uint64_t episodes = 0;
  std::map<std::string, std::uint64_t> faults;  // injected, by name
  std::uint64_t not_injected = 0;               // episodes that ended before a holder could be caught
  std::uint64_t acquisitions = 0;
  // Check-key overlaps: two clients inside at once. Expected with pause and stall for every
  // profile (the stopped or cut-off holder is still inside when its lease ends: what fencing is
  // for), with skew for the faithful preset (it reads each client's clock); anywhere else a defect.
  std::uint64_t expected_overlaps = 0;
  std::uint64_t unexpected_overlaps = 0;
  std::uint64_t stale_writes = 0;           // fenced writes sent after the lock had passed to another
  std::uint64_t stale_writes_accepted = 0;  // ... that the fenced resource took: a defect
  std::uint64_t errors = 0;                 // failed calls (a fault's timeouts and lost connections)
};

struct SoakReport {
  SoakConfig config;
  double seconds = 0;
  std::map<std::string, SoakTally> profiles;     // by profile name
  std::vector<nlohmann::ordered_json> failures;  // episodes with an unexpected overlap or accepted stale write
  // Episodes that could not run to their end (an error from bench: a Redis too slow to answer the
  // conductor within its command timeout on a loaded machine, say). Listed, not failures of the
  // locks; the soak stops when the server no longer answers at all.
  std::vector<nlohmann::ordered_json> not_run;
  bool interrupted = false;
  bool passed() const noexcept { return failures.empty(); }
};

// Runs episodes until `config.minutes` have passed (or a signal). `embedded` is the server behind
// `server` when lockbridge started it; without it there are no restart episodes.
SoakReport run_soak(const SoakConfig& config, const RedisServer& server, EmbeddedRedis* embedded);

nlohmann::ordered_json to_json(const SoakReport& report);
void print_table(std::ostream& out, const SoakReport& report);

}  // namespace lockbridge::tools::bench
