// One bench client: its own connections, and the loop of the check-key protocol (README.md):
//   acquire KEY -> INCR CHECK (must return 1) -> hold -> DECR CHECK -> release -> think.
// With --read-share a writer INCRBYs 1000000 (must return exactly that) and a reader INCRs (must
// return less).
#pragma once

#include <chrono>
#include <optional>
#include <stop_token>
#include <string>

#include "../cli_common.hpp"
#include "lockbridge/mutex.hpp"
#include "bench_config.hpp"
#include "shared_run.hpp"

namespace lockbridge::tools::bench {

struct WorkerSpec {
  int index = 0;
  RedisServer server;  // for the lock: with --fault stall, through this client's own link
  // For the check key and the fenced resource: the bench's instruments, and what the lock
  // protects, which a partition between the client and the lock's server does not cut off. Always
  // the server itself: a check command lost with a stalled link would leave the count off for the
  // rest of the run (and the key at 1 after it).
  RedisServer check_server;
  std::string key;
  std::string check_key;
  MutexOptions lock;
  Front front = Front::blocking;
  std::chrono::milliseconds hold{0};
  std::chrono::milliseconds think{0};
  // PINGs to time on the lock's connection, one after every 4th release and the rest after the
  // loop: the round trip under the run's own conditions (CPU placement, wake-ups and load change
  // it more than anything else on a small machine). Client 0 does it.
  int rtt_pings = 0;
  std::optional<int> read_share = std::nullopt;  // BenchConfig::read_share
};

// The resource a fenced lock protects in a run (--fencing): it keeps the largest fence it has seen.
inline std::string fenced_resource(const std::string& check_key) { return check_key + ":fenced-resource"; }

// Connects, warms up, reports ready, waits for go, then loops until stop or the tickets run out.
// Never throws: failures are counted in the client's slot.
// `stop` ends a wait for the lock at once (the run has stopped: its end, or an interrupt).
void run_worker(const WorkerSpec& spec, SharedRun& run, std::stop_token stop) noexcept;

}  // namespace lockbridge::tools::bench
