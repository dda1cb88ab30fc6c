#include "async_bench.hpp"

#include <unistd.h>

#include <asio/co_spawn.hpp>
#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>

#include <algorithm>
#include <fstream>
#include <memory>
#include <span>
#include <system_error>
#include <vector>

#include "../key_text.hpp"
#include "server_cost.hpp"
#include "lockbridge/asio.hpp"
#include "lockbridge/identity.hpp"
#include "report.hpp"
#include "shared_run.hpp"

namespace lockbridge::tools::bench {
namespace {

using Clock = std::chrono::steady_clock;

// The process's resident memory now, in KiB (/proc/self/statm's second field, in pages).
std::optional<double> resident_kib() {
  std::ifstream statm("/proc/self/statm");
  long size = 0;
  long resident = 0;
  if (!(statm >> size >> resident)) return std::nullopt;
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) / 1024.0;
}

double ping_p50_us(const Client& client) {
  std::vector<double> rtts;
  for (int i = 0; i < 1000; ++i) {
    const auto started = Clock::now();
    client.ping();
    rtts.push_back(std::chrono::duration<double, std::micro>(Clock::now() - started).count());
  }
  return percentile(rtts, 50).value_or(0);
}

// What the clients share: one thread runs them all, so plain counters do.
struct Run {
  Clock::time_point end;
  bool stop = false;
  int running = 0;
  std::vector<int> holding;  // per key: clients between their acquire and their release
  std::uint64_t violations = 0;
  std::uint64_t errors = 0;
  std::optional<std::string> first_error;
  std::vector<std::vector<HoldSample>> samples;  // per client
  std::vector<std::vector<float>> unacquired;    // per client: waits that ended without the lock (us)
};

asio::awaitable<void> pause(std::chrono::milliseconds how_long) {
  if (how_long.count() <= 0) co_return;
  asio::steady_timer timer(co_await asio::this_coro::executor, how_long);
  co_await timer.async_wait(asio::use_awaitable);
}

// One client's loop: acquire, hold, release, think, until the run ends.
asio::awaitable<void> client_loop(int index, int key, AsyncMutex& mutex, Run& run, std::chrono::milliseconds hold,
                                  std::chrono::milliseconds think) {
  // The run's end stops the loop at once; the conductor's flag also covers a signal.
  while (!run.stop && Clock::now() < run.end) {
    HoldSample sample;
    sample.client = index;
    sample.acquire_start_ns = now_ns();
    // A wait still under way at the run's end ends there, and counts (unacquired).
    const auto deadline = std::min(run.end, Clock::now() + mutex.options().acquire_timeout);
    bool acquired = false;
    bool failed = false;
    try {
      acquired = co_await mutex.async_try_lock_until(deadline, asio::use_awaitable);
    } catch (const std::system_error& error) {
      ++run.errors;
      if (!run.first_error) run.first_error = error.what();
      failed = true;
    }
    if (failed) {
      co_await pause(std::chrono::milliseconds(10));  // a failing server is not hammered
      continue;
    }
    sample.acquire_end_ns = now_ns();
    if (!acquired) {
      run.unacquired[static_cast<std::size_t>(index)].push_back(
          static_cast<float>(static_cast<double>(sample.acquire_end_ns - sample.acquire_start_ns) / 1000.0));
      continue;
    }
    if (++run.holding[static_cast<std::size_t>(key)] > 1) ++run.violations;
    co_await pause(hold);
    --run.holding[static_cast<std::size_t>(key)];
    sample.release_start_ns = now_ns();
    try {
      co_await mutex.async_unlock(asio::use_awaitable);
    } catch (const std::system_error& error) {
      sample.release = error.code() == make_error_code(Errc::lease_lost) ? HoldSample::Release::lease_lost
                                                                         : HoldSample::Release::failed;
    }
    sample.release_end_ns = now_ns();
    run.samples[static_cast<std::size_t>(index)].push_back(sample);
    co_await pause(think);
  }
}

}  // namespace

AsyncBenchResult run_async_bench(const AsyncBenchConfig& config, const RedisServer& server) {
  const Client client = server.client();
  AsyncBenchResult result;
  result.clients = config.clients;
  result.keys = config.keys;
  result.rtt_us = ping_p50_us(client);
  const std::string prefix = config.key.empty() ? "lockbridge:bench:" + random_token().substr(0, 12) : config.key;
  const auto key_of = [&](int k) { return config.keys == 1 ? prefix : prefix + ":" + std::to_string(k); };

  const CommandCounts before = read_commandstats(client);
  const std::optional<double> rss_before = resident_kib();
  asio::io_context io;
  AsyncClient redis(io.get_executor(), client);
  std::vector<std::unique_ptr<AsyncMutex>> mutexes;
  mutexes.reserve(static_cast<std::size_t>(config.clients));
  for (int i = 0; i < config.clients; ++i)
    mutexes.push_back(std::make_unique<AsyncMutex>(redis, key_of(i % config.keys), config.lock));

  Run run;
  run.holding.assign(static_cast<std::size_t>(config.keys), 0);
  run.samples.resize(static_cast<std::size_t>(config.clients));
  run.unacquired.resize(static_cast<std::size_t>(config.clients));
  const auto started = Clock::now();
  run.end = started + config.duration;
  for (int i = 0; i < config.clients; ++i) {
    ++run.running;
    asio::co_spawn(
        io, client_loop(i, i % config.keys, *mutexes[static_cast<std::size_t>(i)], run, config.hold, config.think),
        [&run](std::exception_ptr error) {
          --run.running;
          if (!error) return;
          ++run.errors;
          try {
            std::rethrow_exception(error);
          } catch (const std::exception& e) {
            if (!run.first_error) run.first_error = e.what();
          }
        });
  }
  // Half-way, every client is created and at work (most of them waiting): the memory they take.
  std::optional<double> rss_during;
  asio::steady_timer halfway(io, config.duration / 2);
  halfway.async_wait([&](const std::error_code&) { rss_during = resident_kib(); });
  // The end of the run, or a signal: the clients finish their cycle and stop.
  asio::steady_timer watch(io);
  std::function<void()> check = [&] {
    if (Clock::now() >= run.end || interrupted()) {
      run.stop = true;
      return;
    }
    watch.expires_after(std::chrono::milliseconds(20));
    watch.async_wait([&](const std::error_code&) { check(); });
  };
  check();
  // Waits end at the run's end; a release in flight then completes. The loop ends with the clients.
  while (run.running > 0) {
    io.run_for(std::chrono::milliseconds(50));
    io.restart();
    if (interrupted()) run.stop = true;
  }
  result.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  halfway.cancel();
  watch.cancel();
  mutexes.clear();
  io.run_for(std::chrono::milliseconds(100));  // what the mutexes left to do (nothing is held)

  if (rss_before && rss_during && config.clients > 0)
    result.rss_per_client_kib = (*rss_during - *rss_before) / config.clients;
  const CommandCounts after = read_commandstats(client);
  if (after.size() >= before.size() && total(after) >= total(before) && result.seconds > 0) {
    result.server_commands_per_client_per_s =
        static_cast<double>(total(after) - total(before)) / result.seconds / config.clients;
  }
  std::vector<std::span<const HoldSample>> per_client;
  std::vector<std::span<const float>> unacquired;
  for (int i = 0; i < config.clients; ++i) {
    per_client.emplace_back(run.samples[static_cast<std::size_t>(i)]);
    unacquired.emplace_back(run.unacquired[static_cast<std::size_t>(i)]);
  }
  result.samples = summarize(per_client, unacquired);
  result.violations = run.violations;
  result.errors = run.errors;
  result.first_error = run.first_error;
  return result;
}

nlohmann::ordered_json to_json(const AsyncBenchResult& result) {
  nlohmann::ordered_json json;
  const SampleSummary& s = result.samples;
  json["api"] = "async";
  json["clients"] = result.clients;
  json["keys"] = result.keys;
  json["seconds"] = result.seconds;
  json["acquisitions"] = s.acquisitions;
  json["acquisitions_per_s"] = result.seconds > 0 ? static_cast<double>(s.acquisitions) / result.seconds : 0.0;
  json["violations"] = result.violations;
  json["errors"] = result.errors;
  json["first_error"] = result.first_error ? nlohmann::json(*result.first_error) : nlohmann::json(nullptr);
  json["rtt_us"] = result.rtt_us;
  json["acquire_p50_us"] = optional_number(s.acquire_p50_us);
  json["acquire_p99_us"] = optional_number(s.acquire_p99_us);
  json["acquire_p999_us"] = optional_number(s.acquire_p999_us);
  json["acquire_max_us"] = optional_number(s.acquire_max_us);
  json["unacquired_waits"] = s.unacquired_waits;
  json["cycle_p50_us"] = optional_number(s.cycle_p50_us);
  json["handoff_p50_us"] = optional_number(s.handoff_p50_us);
  json["handoff_p99_us"] = optional_number(s.handoff_p99_us);
  json["per_client_min"] = s.per_client_min;
  json["per_client_max"] = s.per_client_max;
  json["fairness_jain"] = optional_number(s.fairness_jain);
  json["rss_per_client_kib"] = optional_number(result.rss_per_client_kib);
  json["server_commands_per_client_per_s"] = optional_number(result.server_commands_per_client_per_s);
  return json;
}

void print_table(std::ostream& out, const AsyncBenchResult& result) {
  const nlohmann::ordered_json json = to_json(result);
  for (const auto& [name, value] : json.items()) out << name << ": " << terminal_json(value) << "\n";
}

}  // namespace lockbridge::tools::bench
