// lockbridge bench --api async: the clients are coroutines on one thread of this process
// (lockbridge/asio.hpp's AsyncMutex, one per client, all of one AsyncClient: one pipelined
// connection), spread over --keys keys. Each loops: acquire, hold, release, think. Exclusion is
// checked in this process, where every holder is: a client that takes a key while another client
// holds it is a violation. Reports what bench reports of the samples, the process's memory per
// client and the server's commands per client per second.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "../cli_common.hpp"
#include "lockbridge/options.hpp"
#include "stats.hpp"

namespace lockbridge::tools::bench {

// More waiters than this are a load test of the server, not of the lock.
inline constexpr int kMaxAsyncClients = 100'000;

struct AsyncBenchConfig {
  MutexOptions lock;  // strategy, preset, lease, wait mode, retry; acquire_timeout bounds each wait
  std::string key;    // the keys' prefix; empty: lockbridge:bench:<random>
  int clients = 1;
  int keys = 1;  // client i locks key i % keys
  std::chrono::milliseconds duration{5000};
  std::chrono::milliseconds hold{0};
  std::chrono::milliseconds think{0};
};

struct AsyncBenchResult {
  int clients = 0;
  int keys = 0;
  double seconds = 0;
  double rtt_us = 0;  // PING p50 on a blocking connection, before the run
  SampleSummary samples;
  std::uint64_t violations = 0;
  std::uint64_t errors = 0;
  std::optional<std::string> first_error;
  // The process's resident memory with every client created and started, less before any was,
  // per client (KiB), read from /proc/self/statm.
  std::optional<double> rss_per_client_kib;
  // The server's commands (INFO commandstats, every command) during the run, per client and second.
  std::optional<double> server_commands_per_client_per_s;
};

// Runs on this thread; a signal (interrupted()) ends the run early. Throws Error when the server
// cannot be reached before the run.
AsyncBenchResult run_async_bench(const AsyncBenchConfig& config, const RedisServer& server);

nlohmann::ordered_json to_json(const AsyncBenchResult& result);
void print_table(std::ostream& out, const AsyncBenchResult& result);

}  // namespace lockbridge::tools::bench
