// What the bench's clients and its conductor share while a run is on. It lives in one anonymous
// shared mapping, so the same code serves client threads and forked client processes: atomics
// are lock-free (hence address-free) and a client that is killed mid-run leaves everything it
// recorded so far behind for the report.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace lockbridge::tools::bench {

inline constexpr std::int64_t kNsPerMs = 1'000'000;

// The client that times the PING round trip (rtt_us) on its lock connection, between its cycles.
inline constexpr int kRttClient = 0;

// Steady-clock nanoseconds. CLOCK_MONOTONIC is one clock for every process on the machine, so
// times taken in different client processes compare directly (the handoff needs that).
std::int64_t now_ns() noexcept;

// One acquisition, from the start of the acquire call to the end of the release call.
struct HoldSample {
  enum class Release : std::uint8_t { released, lease_lost, failed };
  // With --fencing, each hold ends with a write to a fenced resource (bench/worker.cpp).
  enum class FencedWrite : std::uint8_t { none, accepted, rejected };
  std::int32_t client = 0;
  Release release = Release::released;
  FencedWrite fenced_write = FencedWrite::none;
  std::int64_t acquire_start_ns = 0;
  std::int64_t acquire_end_ns = 0;
  std::int64_t release_start_ns = 0;
  std::int64_t release_end_ns = 0;
  // When the fenced write was sent: a holder that acquired before this certainly held the lock
  // before the write reached the resource. (Its answer may come much later: the writer may be
  // stopped right after sending, with a write that was on time.)
  std::int64_t fenced_write_ns = 0;
};

// The conductor's signals and the run-wide counters.
struct RunControl {
  std::atomic<int> ready{0};     // clients connected and warmed up
  std::atomic<int> finished{0};  // clients that left their loop
  std::atomic<bool> go{false};
  std::atomic<bool> stop{false};
  std::atomic<std::int64_t> end_ns{0};   // waiting acquires give up here (the conductor may extend it)
  std::atomic<std::int64_t> tickets{0};  // acquisitions still allowed (--ops)
  std::atomic<std::uint64_t> acquisitions{0};
  std::atomic<std::uint64_t> violations{0};
  std::atomic<std::uint64_t> errors{0};
  std::atomic<int> holder{-1};  // the client between its INCR and its DECR, for fault injection
  // The check key is the bench's instrument, not the lock under test: --fault restart holds its
  // INCR/DECR back while the server restarts, so no count is lost to an unknown outcome.
  std::atomic<bool> check_paused{false};
  std::atomic<int> checks_in_flight{0};
  std::atomic<int> restarts{0};  // a connection from before a restart is dead: drop it first
  // The Errc of an acquire that failed on bad input (a key of another type, an unparsable value):
  // it fails the same way on every attempt, so the run stops; 0 while none did.
  std::atomic<int> bad_input{0};

  // Claims one acquisition; false when --ops is used up.
  bool take_ticket() noexcept { return tickets.fetch_sub(1, std::memory_order_relaxed) > 0; }
  void return_ticket() noexcept { tickets.fetch_add(1, std::memory_order_relaxed); }
};

inline constexpr std::uint32_t kMaxPings = 4096;
// Waits that ended without the lock (the run's end, or the acquire timeout) kept per client for
// the report; more are counted, not kept.
inline constexpr std::uint32_t kMaxUnacquiredWaits = 1024;

// One client's counters and its record of acquisitions.
struct ClientSlot {
  std::atomic<std::uint64_t> violations{0};   // INCR of the check key did not return 1
  std::atomic<std::uint64_t> errors{0};       // lock or check-key commands that threw
  std::atomic<std::uint64_t> timeouts{0};     // acquire attempts that gave up before the run's end
  std::atomic<std::uint64_t> unfinished{0};   // waits still under way when the run ended
  std::atomic<std::uint64_t> recoveries{0};   // acquisitions that followed an error
  std::atomic<bool> failing{false};           // its last cycle failed: an error stopped its work
  std::atomic<std::uint64_t> round_trips{0};  // requests the lock's connection sent during the run
  std::atomic<std::uint64_t> recorded{0};     // samples stored (later ones are dropped when full)
  std::atomic<std::uint32_t> pings{0};        // rtt_us entries stored
  float rtt_us[kMaxPings] = {};               // timed PINGs (kRttClient only)
  // Waits that ended without the lock: a waiter still waiting when the run ended, or one that
  // timed out. They count in the acquire percentiles: a report that left them out would hide
  // exactly the longest waits (a waiter starved for the whole run would not appear at all).
  std::atomic<std::uint32_t> unacquired{0};
  float unacquired_wait_us[kMaxUnacquiredWaits] = {};
  char first_error[240] = {};  // the first error message, NUL-terminated
};

class SharedRun {
 public:
  SharedRun(int clients, std::size_t samples_per_client);
  ~SharedRun();
  SharedRun(const SharedRun&) = delete;
  SharedRun& operator=(const SharedRun&) = delete;

  RunControl& control() noexcept { return *control_; }
  ClientSlot& slot(int client) noexcept { return slots_[client]; }
  int clients() const noexcept { return clients_; }

  // Stores a sample of `client` (only that client's thread or process may call this).
  void record(int client, const HoldSample& sample) noexcept;
  // Stores a wait of `client` that ended without the lock (same rule as record()).
  void record_unacquired(int client, std::int64_t wait_ns) noexcept;
  void note_error(int client, const std::string& message) noexcept;
  // Every client's samples; call after the clients finished (or died).
  std::span<const HoldSample> samples(int client) const noexcept;
  std::span<const float> unacquired_waits_us(int client) const noexcept;

 private:
  int clients_;
  std::size_t capacity_;
  std::size_t bytes_;
  void* mapping_;
  RunControl* control_;
  ClientSlot* slots_;
  HoldSample* samples_;
};

}  // namespace lockbridge::tools::bench
