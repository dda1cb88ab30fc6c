// lockbridge bench: N clients run the check-key protocol on one key; prints latency, throughput,
// cost and safety (a table, or one JSON object with --json). README.md documents both.
#include <iostream>
#include <random>

#include "bench/async_bench.hpp"
#include "bench/renewals.hpp"
#include "bench/report.hpp"
#include "bench/runner.hpp"
#include "bench/soak.hpp"
#include "cli_common.hpp"
#include "key_text.hpp"
#include "subcommands.hpp"

namespace lockbridge::tools {
namespace {

constexpr std::string_view kUsage =
    "lockbridge bench [--url URL] [--strategy legacy|token|redisson] [--preset faithful|hardened] [--lock-key K] [--check-key "
    "CK]\n"
    "                 [--clients N] [--procs] [--duration S | --ops N] [--hold MS] [--think MS] [--lease MS]\n"
    "                 [--wait-mode poll|notify|fair] [--starvation-after MS] [--grant-lease MS] [--fair-wait MS]\n"
    "                 [--sharded-subscription auto|on|off]\n"
    "                 [--watchdog] [--fencing] [--retry MS] [--read-share PCT]\n"
    "                 [--fault pause|kill|skew|restart|stall] [--skew-ms MS] [--json]\n"
    "lockbridge bench --api async [--clients N] [--keys N] [--duration S] [--hold MS] [--think MS] [lock options] "
    "[--json]\n"
    "lockbridge bench --renewals N [--lease MS] [--duration S] [--url URL] [--json]\n"
    "lockbridge bench --soak MINUTES [--seed N] [--url URL] [--json]\n\n"
    "Each client loops: acquire K, INCR CK (must return 1, else a violation), hold, DECR CK, release,\n"
    "think. Clients in other languages may join a run on the same K and CK. With --read-share a\n"
    "redisson client reads (SharedMutex) in PCT% of its acquisitions: readers INCR CK (must stay\n"
    "below 1000000), writers INCRBY CK 1000000 (must return exactly that).\n"
    "--api async: the clients (1 to 100000) are coroutines on one thread of this process, each with an\n"
    "AsyncMutex on one pipelined connection, over --keys keys; exclusion is checked in the process. It\n"
    "also reports the memory per client and the server's commands per client per second.\n"
    "--renewals N: one client holds N locks with the watchdog on for the duration, and reports how\n"
    "many renewals it made in how many round trips.\n"
    "--soak MINUTES: episodes of client processes under a random fault each (pause, kill, restart,\n"
    "skew, stall) and a random lock (token with fencing, hardened and faithful legacy), drawn from\n"
    "--seed, checking exclusion and fencing throughout; exit 1 when an overlap no fault allows, or a\n"
    "stale fenced write, was seen. Without --url its server keeps an append-only file (fsync always)\n"
    "and restart crashes it.";
constexpr ExitMeanings kExits{
    .ok = "no violation",
    .not_acquired = "violations seen (without --fault)",
    .redis_detail = "(also when errors stopped the work: a client still failing at the end, e.g. a server that died)",
    .interrupt_detail = "(SIGINT, SIGTERM, SIGHUP: the run stops at once)"};

// --duration: at most a day.
constexpr std::chrono::milliseconds kMaxBenchDuration{24LL * 3600 * 1000};

std::chrono::milliseconds duration_option(const po::variables_map& vm) {
  return seconds_option(vm, "duration", std::chrono::milliseconds(1), kMaxBenchDuration);
}

bench::BenchConfig config_from(const po::variables_map& vm) {
  bench::BenchConfig config;
  config.lock = lock_options_from(vm);
  config.lock.acquire_timeout =
      milliseconds_option(vm, "timeout", std::chrono::milliseconds::zero(), kMaxOptionDuration);
  if (vm.count("lock-key")) config.key = vm["lock-key"].as<std::string>();
  if (vm.count("check-key")) config.check_key = vm["check-key"].as<std::string>();
  if (vm.count("lock-key") && config.key.empty()) throw Error(Errc::bad_option, "--lock-key must not be empty");
  if (vm.count("check-key") && config.check_key.empty()) throw Error(Errc::bad_option, "--check-key must not be empty");
  config.clients = static_cast<int>(count_option(vm, "clients", 1, bench::kMaxClients));
  config.procs = vm.count("procs") > 0;
  config.duration = duration_option(vm);
  if (vm.count("ops")) {
    config.ops = static_cast<std::uint64_t>(count_option(vm, "ops", 1, bench::kMaxOps));
    refuse_given(vm, {"duration"}, "and --ops each say when the run ends: give one");
  }
  config.hold = milliseconds_option(vm, "hold", std::chrono::milliseconds::zero(), kMaxOptionDuration);
  config.think = milliseconds_option(vm, "think", std::chrono::milliseconds::zero(), kMaxOptionDuration);
  if (vm.count("read-share")) config.read_share = static_cast<int>(count_option(vm, "read-share", 0, 100));
  if (vm.count("fault")) {
    config.fault = choice_option(bench::kFaultNames, "fault", vm["fault"].as<std::string>());
    // A fault needs someone to suffer it and someone to show the effect, a holder to catch, and a
    // lease short enough to end within the run: defaults for what the user left unsaid.
    if (vm["clients"].defaulted()) config.clients = 4;
    if (vm["hold"].defaulted()) config.hold = std::chrono::milliseconds(20);
    if (vm["lease"].defaulted()) config.lock.lease = std::chrono::milliseconds(2000);
    if (vm["duration"].defaulted()) config.duration = std::chrono::seconds(8);
    // A process to stop or kill; and skew models clients on different machines, which never
    // share a process's local queue (it would line them up and hide the two holders at once).
    if (bench::catches_a_holder(config.fault) || config.fault == bench::Fault::skew) {
      config.procs = true;
    }
  }
  // The faithful preset's clock offset, within the library's range.
  config.skew = milliseconds_option(vm, "skew-ms", std::chrono::milliseconds(1), kMaxOptionDuration);
  if (config.fault != bench::Fault::skew) refuse_given(vm, {"skew-ms"}, "is --fault skew's");
  if (vm.count("metrics") && config.procs) {
    throw Error(Errc::bad_option,
                "--metrics serves the locks of this process: with --procs (or a --fault that needs "
                "processes) they run in others; measure threads, or scrape each service instead");
  }
  config.validate();
  return config;
}

int renewal_bench(const po::variables_map& vm) {
  // Each lock is a Mutex of one process, renewed by one thread.
  const int locks = static_cast<int>(count_option(vm, "renewals", 1, 1'000'000));
  MutexOptions options = lock_options_from(vm);
  options.watchdog.enabled = true;
  if (vm["lease"].defaulted()) options.lease = std::chrono::milliseconds(3000);
  options.validate();
  const std::chrono::milliseconds duration = duration_option(vm);
  const SubcommandRedis redis(vm);
  const auto result = bench::run_renewal_bench(redis.server(), options, locks, duration);
  const nlohmann::ordered_json json = bench::to_json(result);
  if (vm.count("json")) {
    std::cout << dump_line(json) << std::endl;
  } else {
    for (const auto& [name, value] : json.items()) std::cout << name << ": " << terminal_json(value) << "\n";
  }
  if (interrupted()) return kExitInterrupted;
  return result.still_held == result.locks ? kExitOk : kExitNotAcquired;
}

int async_bench(const po::variables_map& vm) {
  refuse_all_but(vm,
                 {"api", "keys", "clients", "duration", "hold", "think", "timeout", "lock-key", "strategy", "preset",
                  "format", "lease", "wait-mode", "starvation-after", "grant-lease", "fair-wait", "sharded-subscription", "watchdog", "fencing", "retry",
                  "json"},
                 "does not apply to --api async (its clients are coroutines of this process, on one thread)");
  bench::AsyncBenchConfig config;
  config.lock = lock_options_from(vm);
  config.lock.acquire_timeout =
      milliseconds_option(vm, "timeout", std::chrono::milliseconds::zero(), kMaxOptionDuration);
  config.lock.validate();
  if (vm.count("lock-key")) config.key = vm["lock-key"].as<std::string>();
  if (vm.count("lock-key") && config.key.empty()) throw Error(Errc::bad_option, "--lock-key must not be empty");
  config.clients = static_cast<int>(count_option(vm, "clients", 1, bench::kMaxAsyncClients));
  config.keys = vm.count("keys") ? static_cast<int>(count_option(vm, "keys", 1, config.clients)) : 1;
  config.duration = duration_option(vm);
  config.hold = milliseconds_option(vm, "hold", std::chrono::milliseconds::zero(), kMaxOptionDuration);
  config.think = milliseconds_option(vm, "think", std::chrono::milliseconds::zero(), kMaxOptionDuration);
  const SubcommandRedis redis(vm);
  const bench::AsyncBenchResult result = bench::run_async_bench(config, redis.server());
  if (vm.count("json")) {
    std::cout << dump_line(bench::to_json(result)) << std::endl;
  } else {
    bench::print_table(std::cout, result);
  }
  if (interrupted()) return kExitInterrupted;
  if (result.violations > 0) return kExitNotAcquired;
  if (result.samples.acquisitions == 0 && result.errors > 0) {
    std::cerr << "lockbridge bench: errors stopped the work: " << terminal_text(result.first_error.value_or(""))
              << "\n";
    return kExitRedis;
  }
  return kExitOk;
}

int soak_bench(const po::variables_map& vm) {
  bench::SoakConfig config;
  // Decimal minutes: 0.1 (6 s) to a week.
  config.length = minutes_option(vm, "soak", std::chrono::seconds(6), std::chrono::hours(7 * 24));
  config.seed =
      vm.count("seed") ? static_cast<std::uint64_t>(count_option(vm, "seed", 0, INT64_MAX)) : std::random_device{}();
  SubcommandRedis redis(vm, EmbeddedRedis::Persistence::append_only);
  // Asked once before the first episode: an episode that fails waits up to 30 s for the server to
  // answer again (a restart), which for a server that never answered was 30 s of silence.
  redis.client().ping();
  const bench::SoakReport report = bench::run_soak(config, redis.server(), redis.embedded_server());
  if (vm.count("json")) {
    std::cout << dump_line(bench::to_json(report)) << std::endl;
  } else {
    bench::print_table(std::cout, report);
  }
  if (report.interrupted) return kExitInterrupted;
  return report.passed() ? kExitOk : kExitNotAcquired;
}

}  // namespace

int run_bench(int argc, char** argv) {
  po::options_description options("bench options", kHelpColumns, kHelpColumns / 2);
  add_lock_options(options);
  add_url_option(options);
  add_metrics_option(options);
  options.add_options()("lock-key", po::value<std::string>(),
                        "the lock key (default: a fresh lockbridge:bench:<random>)")(
      "check-key", po::value<std::string>(), "the check key (default: KEY:check)")(
      "clients", number_value("1"), "concurrent clients (1 to 256), each with its own connections")(
      "procs", "one process per client instead of one thread")("duration", number_value("5"),
                                                               "seconds to run (0.001 to 86400)")(
      "ops", number_value(), "stop after this many acquisitions instead (1 to 10^12)")(
      "hold", number_value("0"), "ms to hold the lock (0 to 365 days)")(
      "think", number_value("0"), "ms to pause after each release (0 to 365 days)")(
      "read-share", number_value(),
      "with --strategy redisson: lock a SharedMutex (Redisson's read/write lock), reading in this percentage "
      "(0 to 100) of the acquisitions")(
      "timeout", number_value("10000"), "ms one acquire waits before it counts as a timeout (0 to 365 days)")(
      "fault", po::value<std::string>(), "pause | kill | skew | restart | stall (see README.md)")(
      "skew-ms", number_value("5000"), "--fault skew: how far client 0's clock runs ahead (1 ms to 365 days)")(
      "renewals", number_value(),
      "hold this many locks (1 to 10^6) with the watchdog and measure the renewals instead")(
      "soak", number_value(), "run this many minutes (0.1 to a week) of random faults and locks instead")(
      "seed", number_value(), "--soak: the random stream's seed (default: drawn; the report gives it)")(
      "api", po::value<std::string>()->default_value("blocking"),
      "blocking (threads or processes, Mutex) | async (coroutines on one thread, AsyncMutex)")(
      "keys", number_value(), "--api async: spread the clients over this many keys (1 to --clients)");
  add_json_option(options, "one JSON object");
  po::variables_map vm;
  if (const auto done = parse_command_line(argc, argv, kUsage, kExits, options, {}, vm)) return *done;
  // Each mode takes its own options; one of another mode is refused, never ignored.
  if (vm.count("soak")) {
    refuse_all_but(vm, {"soak", "seed", "json"},
                   "does not apply to --soak (its episodes draw their own locks, clients and faults)");
    return soak_bench(vm);
  }
  refuse_given(vm, {"seed"}, "is --soak's");
  if (vm.count("renewals")) {
    refuse_all_but(
        vm, {"renewals", "lease", "duration", "strategy", "preset", "format", "fencing", "watchdog", "json", "metrics"},
        "does not apply to --renewals (one client holds the locks, renewed by the watchdog)");
    return renewal_bench(vm);
  }
  if (vm["api"].as<std::string>() == "async") return async_bench(vm);
  if (vm["api"].as<std::string>() != "blocking")
    throw Error(Errc::bad_option, "--api must be blocking or async, not " + vm["api"].as<std::string>());
  refuse_given(vm, {"keys"}, "is --api async's");
  const bench::BenchConfig config = config_from(vm);
  SubcommandRedis redis(vm);
  const bench::BenchResult result = bench::run_bench(config, redis.server(), redis.embedded_server());
  if (vm.count("json")) {
    std::cout << dump_line(bench::to_json(result)) << std::endl;
  } else {
    bench::print_table(std::cout, result);
  }
  if (interrupted()) return kExitInterrupted;
  if (result.violations > 0 && config.fault == bench::Fault::none) return kExitNotAcquired;
  if (result.stopped_by) {
    std::cerr << "lockbridge bench: errors stopped the work: " << terminal_text(*result.stopped_by) << "\n";
    return kExitRedis;
  }
  return kExitOk;
}

}  // namespace lockbridge::tools
