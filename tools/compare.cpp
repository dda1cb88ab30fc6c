// lockbridge compare: the main job. Every strategy and preset through the same workloads on the
// same Redis, one after the other; one side-by-side table, all results as JSON, and a chart.
#include <iomanip>
#include <iostream>
#include <optional>

#include "bench/plot.hpp"
#include "bench/report.hpp"
#include "bench/runner.hpp"
#include "cli_common.hpp"
#include "key_text.hpp"
#include "lockbridge/shared_mutex.hpp"
#include "output_file.hpp"
#include "subcommands.hpp"

namespace lockbridge::tools {
namespace {

constexpr std::string_view kUsage =
    "lockbridge compare [--url URL] [--duration S] [--json FILE] [--plot FILE.svg|.png]\n"
    "                   [--wait-mode poll|notify|fair] [--watchdog] [--clients-as processes|threads]\n\n"
    "Runs lockbridge bench for legacy faithful, legacy hardened, token waiting as its peers do (poll),\n"
    "token with lockbridge's waiting (notify), token in fair mode, redisson, and token through the\n"
    "async front (AsyncMutex on each client's own io_context) over four workloads:\n"
    "uncontended; 8 clients hold 1 ms; 32 clients hold 0 ms; 4 clients hold 1 ms think 20 ms.\n"
    "--wait-mode sets the waiting of the lockbridge columns (legacy hardened, token; fair applies to\n"
    "token only) instead of showing notify and fair side by side; the columns that wait as the peers\n"
    "do keep polling. --watchdog renews every lease while held, where the strategy can.\n"
    "--clients-as: each client of a contended workload is its own OS process (default, as a fleet of\n"
    "service instances runs), or a thread of this process (where the local line orders the waiters).";
constexpr ExitMeanings kExits{.ok = "no violation", .not_acquired = "violations seen", .files = "json, plot, stdout"};

// How the clients of the contended workloads run: one OS process each (a fleet, as users run
// services) or threads of one process.
enum class ClientsAs { processes, threads };
inline constexpr NameTable<ClientsAs, 2> kClientsAsNames{std::array<std::pair<ClientsAs, std::string_view>, 2>{
    {{ClientsAs::processes, "processes"}, {ClientsAs::threads, "threads"}}}};

// A column of the table: a strategy and preset with its waiting, through a front.
struct Column {
  std::string name;
  std::string_view peer;  // the peer it matches on the wire, if any
  MutexOptions options;
  bench::Front front = bench::Front::blocking;
  std::optional<int> read_share = std::nullopt;  // a SharedMutex reading in this percentage of acquisitions
};

struct Workload {
  std::string name;
  int clients;
  int hold_ms;
  int think_ms;
};

const std::vector<Workload>& workloads() {
  static const std::vector<Workload> all{
      {"uncontended", 1, 0, 0},
      {"8 clients hold 1ms", 8, 1, 0},
      {"32 clients hold 0ms", 32, 0, 0},
      {"4 clients hold 1ms think 20ms", 4, 1, 20},
  };
  return all;
}

// Every strategy and preset, and the waiting modes side by side: legacy faithful waits as
// jedis-lock does (poll every 100 ms); token is shown both waiting as the peers do (poll every
// 100 ms, every thread on its own) and with lockbridge's defaults (release notifications, backoff,
// local queue), as is legacy hardened, and in fair mode (a first-come first-served queue in Redis);
// redisson is Redisson's RLock layout with its 30 s lease, waking on Redisson's release channel;
// then its fair lock (RFairLock), and its read/write lock (SharedMutex) with 90% of the
// acquisitions reading.
// The last column is token again through the async front (AsyncMutex, each client's io_context run
// by its own thread): what the event-driven engine costs against the blocking one, in the same
// fleet.
// `wait_mode` (from --wait-mode) replaces the waiting of lockbridge's own columns and drops the
// separate fair column; `watchdog` turns renewals on wherever the strategy has an extend.
std::vector<Column> strategies(std::optional<WaitMode> wait_mode, bool watchdog) {
  MutexOptions faithful = MutexOptions::jedis_lock_1_0();
  MutexOptions hardened;
  hardened.strategy = StrategyKind::legacy;
  hardened.legacy.preset = LegacyPreset::hardened;
  hardened.lease = faithful.lease;
  MutexOptions token_poll;
  token_poll.wait_mode = WaitMode::poll;
  token_poll.retry = RetryPolicy::jedis_lock_resolution(std::chrono::milliseconds(100));
  token_poll.local_queue = false;
  MutexOptions token;
  MutexOptions token_fair;
  token_fair.wait_mode = WaitMode::fair;
  MutexOptions redisson = MutexOptions::redisson_lock();  // Redisson's own lease (30 s) and waiting
  if (wait_mode) {
    token.wait_mode = *wait_mode;
    if (*wait_mode != WaitMode::fair) {  // legacy and Redisson have no fair queue
      hardened.wait_mode = *wait_mode;
      redisson.wait_mode = *wait_mode;
    }
  }
  std::vector<Column> all{{"legacy faithful", "jedis-lock 1.0.0", faithful},
                                 {"legacy hardened", {}, hardened},
                                 {"token, poll (as peers)", {}, token_poll},
                                 {"token", {}, token}};
  if (!wait_mode) all.push_back({"token, fair", {}, token_fair});
  all.push_back({"redisson", "Redisson RLock", redisson});
  if (!wait_mode) {
    MutexOptions redisson_fair = redisson;
    redisson_fair.wait_mode = WaitMode::fair;
    all.push_back({"redisson, fair", "Redisson RFairLock", redisson_fair});
    all.push_back({"redisson rw, 90% reads", "Redisson RReadWriteLock", redisson, bench::Front::blocking, 90});
  }
  all.push_back({"token, async front", {}, token, bench::Front::async});
  for (auto& strategy : all) {
    strategy.options.acquire_timeout = std::chrono::seconds(10);
    strategy.options.watchdog.enabled = watchdog && strategy.options.can_extend();
  }
  return all;
}

// The columns a Client of `url` can run: a redlock:// Client refuses the strategies and features a
// majority of independent masters cannot give (the Mutex says which, without any I/O). Each one
// dropped is said on stderr.
std::vector<Column> runnable_on(const RedisServer& server, std::vector<Column> columns) {
  const Client client = server.client();
  std::vector<Column> runnable;
  for (Column& column : columns) {
    try {
      if (column.read_share) {
        const SharedMutex probe(client, "lockbridge:compare:probe", column.options);
      } else {
        const Mutex probe(client, "lockbridge:compare:probe", column.options);
      }
      runnable.push_back(std::move(column));
    } catch (const Error& error) {
      if (error.errc() != Errc::bad_option) throw;
      std::cerr << "lockbridge compare: skipping '" << column.name
                << "' on this topology: " << terminal_text(error.what()) << "\n";
    }
  }
  return runnable;
}

std::string watchdog_cell(const MutexOptions& options) {
  if (options.watchdog.enabled) return "yes, every lease/3";
  return options.can_extend() ? "no" : "n/a (no extend)";
}

void print_comparison(std::ostream& out, const std::vector<bench::BenchResult>& results,
                      const std::vector<Column>& columns) {
  constexpr int kName = 24;
  constexpr int kColumn = 30;
  for (std::size_t w = 0; w < workloads().size(); ++w) {
    const auto* row = &results[w * columns.size()];
    out << "\n" << workloads()[w].name << "\n" << std::left << std::setw(kName) << "";
    for (const auto& column : columns) out << std::setw(kColumn) << column.name;
    out << "\n";
    const auto line = [&](const std::string& metric, const auto& cell) {
      out << std::setw(kName) << metric;
      for (std::size_t s = 0; s < columns.size(); ++s) out << std::setw(kColumn) << cell(row[s]);
      out << "\n";
    };
    line("front", [](const bench::BenchResult& r) {
      return std::string(r.config.front == bench::Front::async ? "async (AsyncMutex)" : "blocking (Mutex)");
    });
    line("waiting", [](const bench::BenchResult& r) { return waiting_label(r.config.lock); });
    line("local queue",
         [](const bench::BenchResult& r) { return std::string(r.config.lock.local_queue ? "yes" : "no"); });
    line("watchdog", [](const bench::BenchResult& r) { return watchdog_cell(r.config.lock); });
    line("rtt (PING p50)", [&](const bench::BenchResult& r) { return bench::fixed(r.rtt_us, 1) + " us"; });
    line("acquisitions/s", [&](const bench::BenchResult& r) { return bench::fixed(bench::acquisitions_per_s(r), 0); });
    line("cycle p50",
         [](const bench::BenchResult& r) { return bench::latency_cell(r.summary.cycle_p50_us, r.rtt_us); });
    line("acquire p50",
         [](const bench::BenchResult& r) { return bench::latency_cell(r.summary.acquire_p50_us, r.rtt_us); });
    line("acquire p99",
         [](const bench::BenchResult& r) { return bench::latency_cell(r.summary.acquire_p99_us, r.rtt_us); });
    line("acquire p99.9",
         [](const bench::BenchResult& r) { return bench::latency_cell(r.summary.acquire_p999_us, r.rtt_us); });
    line("acquire max",
         [](const bench::BenchResult& r) { return bench::latency_cell(r.summary.acquire_max_us, r.rtt_us); });
    line("handoff p50",
         [](const bench::BenchResult& r) { return bench::latency_cell(r.summary.handoff_p50_us, r.rtt_us); });
    line("handoff p99",
         [](const bench::BenchResult& r) { return bench::latency_cell(r.summary.handoff_p99_us, r.rtt_us); });
    line("same owner next", [](const bench::BenchResult& r) { return bench::fixed(r.summary.same_owner_ratio, 3); });
    line("per client min/max", [](const bench::BenchResult& r) {
      return std::to_string(r.summary.per_client_min) + " / " + std::to_string(r.summary.per_client_max);
    });
    line("fairness (Jain)", [](const bench::BenchResult& r) { return bench::fixed(r.summary.fairness_jain, 3); });
    line("redis cmds/acquire", [](const bench::BenchResult& r) { return bench::fixed(r.redis_cmds_per_acquire, 2); });
    line("redis cpu/acquire", [](const bench::BenchResult& r) { return bench::micros_cell(r.redis_cpu_us_per_acquire); });
    line("round trips/acquire", [](const bench::BenchResult& r) { return bench::fixed(r.round_trips_per_acquire, 2); });
    line("violations", [](const bench::BenchResult& r) { return std::to_string(r.violations); });
    line("errors / timeouts",
         [](const bench::BenchResult& r) { return std::to_string(r.errors) + " / " + std::to_string(r.timeouts); });
  }
}

}  // namespace

int run_compare(int argc, char** argv) {
  po::options_description options("compare options", kHelpColumns, kHelpColumns / 2);
  add_url_option(options);
  options.add_options()("duration", number_value("3"), "seconds per strategy and workload (0.001 to 3600)")(
      "json", po::value<std::string>()->default_value("lockbridge-compare.json"), "write all results here")(
      "plot", po::value<std::string>()->default_value("lockbridge-compare.svg"), "draw the chart here (.svg or .png)")(
      "no-plot", "do not draw a chart")("wait-mode", po::value<std::string>(),
                                        "poll | notify | fair: the waiting of the lockbridge columns")(
      "watchdog", "renew every lease while held, where the strategy can")(
      "clients-as", po::value<std::string>()->default_value("processes"),
      "processes | threads: how the clients of a contended workload run");
  po::variables_map vm;
  if (const auto done = parse_command_line(argc, argv, kUsage, kExits, options, {}, vm)) return *done;
  // Per run: 24 of them, so an hour each is more than a day.
  const std::chrono::milliseconds duration =
      seconds_option(vm, "duration", std::chrono::milliseconds(1), std::chrono::milliseconds(3600 * 1000));
  const double seconds = std::chrono::duration<double>(duration).count();
  std::optional<WaitMode> wait_mode;
  if (vm.count("wait-mode")) wait_mode = wait_mode_from(vm["wait-mode"].as<std::string>());
  const ClientsAs clients_as = choice_option(kClientsAsNames, "clients-as", vm["clients-as"].as<std::string>());
  if (vm.count("no-plot")) refuse_given(vm, {"plot"}, "names the chart that --no-plot leaves out");
  const bool plot = !vm.count("no-plot");
  const NamedFile json_file{"--json", vm["json"].as<std::string>()};
  const NamedFile plot_file{"--plot", vm["plot"].as<std::string>()};
  check_files({}, plot ? std::vector{json_file, plot_file} : std::vector{json_file});
  // Created first: a bad path should fail before minutes of work.
  OutputFile json_out(json_file);
  std::optional<OutputFile> plot_out;
  if (plot) plot_out.emplace(plot_file);

  SubcommandRedis redis(vm);
  const std::vector<Column> columns =
      runnable_on(redis.server(), strategies(wait_mode, vm.count("watchdog") > 0));
  std::cerr << "lockbridge compare: " << columns.size() << " strategies x " << workloads().size() << " workloads, "
            << seconds << " s each, on " << terminal_text(redis.client().url().redacted())
            << (redis.embedded() ? " (embedded redis-server)" : "") << "\n";
  std::vector<bench::BenchResult> results;
  std::uint64_t violations = 0;
  for (const Workload& workload : workloads()) {
    for (const Column& strategy : columns) {
      if (interrupted()) break;
      bench::BenchConfig config;
      config.lock = strategy.options;
      config.front = strategy.front;
      config.read_share = strategy.read_share;
      config.clients = workload.clients;
      config.hold = std::chrono::milliseconds(workload.hold_ms);
      config.think = std::chrono::milliseconds(workload.think_ms);
      config.duration = duration;
      config.procs = clients_as == ClientsAs::processes && workload.clients > 1;
      std::cerr << "  " << workload.name << ": " << strategy.name << "\n";
      results.push_back(bench::run_bench(config, redis.server(), redis.embedded_server()));
      violations += results.back().violations;
      // A run whose work errors stopped (a server that died, an ACL refusing the lock's commands)
      // measured nothing; the next ones would not either. The files are left as they were.
      if (const auto& stopped = results.back().stopped_by) {
        throw Error(Errc::io, "compare stopped: " + std::string(workload.name) + ", " + strategy.name +
                                  ": errors stopped the work: " + *stopped);
      }
    }
  }
  // A signal stops the run in flight (the last one included) short: its figures are partial, so
  // the files are left as they were.
  if (interrupted()) {
    json_out.finish(false, "compare");
    if (plot_out) plot_out->finish(false, "compare");
    return kExitInterrupted;
  }

  std::cout << "lockbridge " << version()
            << " compare: same Redis, same run; latencies also as multiples of that run's\n"
            << "PING round trip (a lock cycle cannot beat 2x). "
            << (clients_as == ClientsAs::processes ? "Contended clients are separate processes (a fleet).\n"
                                                   : "Clients are threads of one process.\n")
            << "Acquire percentiles count every wait, also one the run's end cut short.\n";
  print_comparison(std::cout, results, columns);

  nlohmann::ordered_json all{{"version", version()},
                             {"url", redis.client().url().redacted()},
                             {"embedded_server", redis.embedded()},
                             {"duration_s_each", seconds},
                             {"clients_as", kClientsAsNames.name(clients_as, "processes")},
                             {"results", nlohmann::ordered_json::array()}};
  for (std::size_t i = 0; i < results.size(); ++i) {
    nlohmann::ordered_json entry = bench::to_json(results[i]);
    entry["workload"] = workloads()[i / columns.size()].name;
    all["results"].push_back(std::move(entry));
  }
  json_out.stream() << terminal_safe_json(all.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace))
                    << "\n";
  json_out.commit();
  std::cout << "\nresults: " << terminal_text(json_file.path) << "\n";
  if (plot_out) {
    std::vector<std::string> workload_names;
    for (const auto& workload : workloads()) workload_names.push_back(workload.name);
    std::vector<std::string> strategy_names;
    for (const auto& column : columns) strategy_names.push_back(column.name);
    std::cout << terminal_text(bench::draw_chart(results, workload_names, strategy_names, *plot_out).message) << "\n";
  }
  return violations == 0 ? kExitOk : kExitNotAcquired;
}

}  // namespace lockbridge::tools
