// One bench run's settings, as `lockbridge bench` and `lockbridge compare` describe them.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "lockbridge/mutex.hpp"
#include "lockbridge/name_table.hpp"

namespace lockbridge::tools::bench {

enum class Fault { none, pause, kill, skew, restart, stall };

// Which front a blocking-style client's lock goes through (bench_lock.hpp).
enum class Front { blocking, async };

// More clients than this is a load generator's job, not a lock benchmark's (and each has two connections).
inline constexpr int kMaxClients = 256;
// --ops: far more than any run can make, and far from the 64-bit ticket count's limit.
inline constexpr std::int64_t kMaxOps = 1'000'000'000'000;

inline constexpr NameTable<Fault, 6> kFaultNames{
    std::array<std::pair<Fault, std::string_view>, 6>{{{Fault::none, "none"},
                                                       {Fault::pause, "pause"},
                                                       {Fault::kill, "kill"},
                                                       {Fault::skew, "skew"},
                                                       {Fault::restart, "restart"},
                                                       {Fault::stall, "stall"}}}};

// The faults that catch a client holding the lock (and so need a process to stop, and a hold).
constexpr bool catches_a_holder(Fault fault) noexcept {
  return fault == Fault::pause || fault == Fault::kill || fault == Fault::stall;
}

constexpr std::string_view to_string(Fault fault) noexcept { return kFaultNames.name(fault, "none"); }

struct BenchConfig {
  MutexOptions lock;      // strategy, preset, format, lease, retry interval, acquire timeout
  Front front = Front::blocking;
  std::string key;        // empty: a fresh lockbridge:bench:<random> key
  std::string check_key;  // empty: key + ":check"
  int clients = 1;
  bool procs = false;  // one process per client instead of one thread
  std::chrono::milliseconds duration{5000};
  std::optional<std::uint64_t> ops;  // bounds the acquisitions instead of the duration
  std::chrono::milliseconds hold{0};
  std::chrono::milliseconds think{0};
  Fault fault = Fault::none;
  std::chrono::milliseconds skew{5000};  // --fault skew: client 0's clock runs this far ahead
  int rtt_pings = 1000;                  // PINGs for rtt_us (at least 1000)
  bool progress = true;                  // a progress line on stderr for runs longer than 2 s
  // --read-share: the lock is a SharedMutex (Redisson's read/write lock) and this percentage of
  // the acquisitions take its read side; nullopt: a Mutex.
  std::optional<int> read_share;

  // Throws Error{bad_option} naming the bad setting: settings that rule each other out (each one's
  // own range is checked where it is read: the command line's helpers, cli_common.hpp).
  void validate() const;
  // "poll 100ms": how a client waits for a held lock.
  std::string wait_mode() const;
};

}  // namespace lockbridge::tools::bench
