// One bench run, start to finish: measure the round trip, start the clients, conduct the run (and
// its fault), read the server's command counts, and put the numbers together.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "../cli_common.hpp"
#include "bench_config.hpp"
#include "server_cost.hpp"
#include "embedded_server.hpp"
#include "stats.hpp"

namespace lockbridge::tools::bench {

struct BenchResult {
  BenchConfig config;  // as run: key and check key filled in
  double rtt_us = 0;
  double duration_s = 0;
  std::uint64_t acquisitions = 0;
  std::uint64_t violations = 0;
  std::uint64_t errors = 0;
  std::uint64_t timeouts = 0;
  std::uint64_t unfinished_waits = 0;  // waits cut off by the run's end (in the acquire figures at their length)
  std::uint64_t lost_leases = 0;       // releases refused because the lease had ended
  std::uint64_t dropped_samples = 0;
  SampleSummary summary;
  std::optional<CommandCounts> commands;  // the lock's commands during the run, per command
  std::optional<double> redis_cmds_per_acquire;
  // The server's CPU time (user + system) per acquisition, the bench's own check commands included
  // (the same two per acquisition in every run): what a lock costs Redis, beside its commands.
  std::optional<double> redis_cpu_us_per_acquire;
  std::optional<double> round_trips_per_acquire;
  std::vector<std::string> first_errors;  // one per client that had any
  // Set when errors stopped the work: a client was still failing when the run ended (a server
  // that died, an ACL that refuses the lock's commands). The figures then say little.
  std::optional<std::string> stopped_by;
  nlohmann::ordered_json fault;  // null without --fault
};

// `embedded` is the server behind `server` when lockbridge started it (restart needs it), else null.
// Throws Error for a bad configuration, an unreachable server, a check key already in use, or a lock
// key that every acquire refuses as bad input (wrong_type, bad_value: the run stops at the first).
BenchResult run_bench(BenchConfig config, const RedisServer& server, EmbeddedRedis* embedded);

}  // namespace lockbridge::tools::bench
