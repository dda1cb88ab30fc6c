// lockbridge bench: N clients run the check-key protocol on one key; prints latency, throughput,
// cost and safety (a table, or one JSON object with --json). README.md documents both.
#include <cmath>
#include <iostream>

#include "bench/renewals.hpp"
#include "bench/report.hpp"
#include "bench/runner.hpp"
#include "cli_common.hpp"
#include "subcommands.hpp"

namespace lockbridge::tools {
namespace {

constexpr std::string_view kUsage =
    "lockbridge bench [--url URL] [--strategy legacy|token] [--preset faithful|hardened] [--key K] [--check-key CK]\n"
    "                 [--clients N] [--procs] [--duration S | --ops N] [--hold MS] [--think MS] [--lease MS]\n"
    "                 [--wait-mode poll|notify|fair] [--watchdog] [--fencing] [--retry MS]\n"
    "                 [--fault pause|kill|skew|restart] [--skew-ms MS] [--json]\n"
    "lockbridge bench --renewals N [--lease MS] [--duration S] [--url URL] [--json]\n\n"
    "Each client loops: acquire K, INCR CK (must return 1, else a violation), hold, DECR CK, release,\n"
    "think. Clients in other languages may join a run on the same K and CK.\n"
    "--renewals N: one client holds N locks with the watchdog on for the duration, and reports how\n"
    "many renewals it made in how many round trips.\n"
    "Exit status: 0 no violation, 1 violations seen (without --fault), 2 bad usage, 3 Redis error.";

std::chrono::milliseconds seconds_option(const po::variables_map& vm, const char* name) {
  const double seconds = vm[name].as<double>();
  if (!std::isfinite(seconds) || seconds <= 0 || seconds > 86400) {
    throw po::error(std::string("--") + name + " must be between 0 and 86400 seconds");
  }
  return std::chrono::milliseconds(static_cast<long long>(std::llround(seconds * 1000)));
}

bench::BenchConfig config_from(const po::variables_map& vm) {
  bench::BenchConfig config;
  config.lock = lock_options_from(vm);
  config.lock.acquire_timeout = std::chrono::milliseconds(vm["timeout"].as<long long>());
  if (vm.count("key")) config.key = vm["key"].as<std::string>();
  if (vm.count("check-key")) config.check_key = vm["check-key"].as<std::string>();
  if (vm.count("key") && config.key.empty()) throw Error(Errc::bad_option, "--key must not be empty");
  if (vm.count("check-key") && config.check_key.empty()) throw Error(Errc::bad_option, "--check-key must not be empty");
  config.clients = vm["clients"].as<int>();
  config.procs = vm.count("procs") > 0;
  config.duration = seconds_option(vm, "duration");
  if (vm.count("ops")) {
    const long long ops = vm["ops"].as<long long>();
    if (ops < 1) throw Error(Errc::bad_option, "--ops must be at least 1");
    config.ops = static_cast<std::uint64_t>(ops);
  }
  config.hold = std::chrono::milliseconds(vm["hold"].as<long long>());
  config.think = std::chrono::milliseconds(vm["think"].as<long long>());
  if (vm.count("fault")) {
    config.fault = bench::fault_from_string(vm["fault"].as<std::string>());
    // A fault needs someone to suffer it and someone to show the effect, a holder to catch, and a
    // lease short enough to end within the run: defaults for what the user left unsaid.
    if (vm["clients"].defaulted()) config.clients = 4;
    if (vm["hold"].defaulted()) config.hold = std::chrono::milliseconds(20);
    if (vm["lease"].defaulted()) config.lock.lease = std::chrono::milliseconds(2000);
    if (vm["duration"].defaulted()) config.duration = std::chrono::seconds(8);
    // A process to stop or kill; and skew models clients on different machines, which never
    // share a process's local queue (it would line them up and hide the double grants).
    if (config.fault == bench::Fault::pause || config.fault == bench::Fault::kill || config.fault == bench::Fault::skew) {
      config.procs = true;
    }
  }
  config.skew = std::chrono::milliseconds(vm["skew-ms"].as<long long>());
  config.validate();
  return config;
}

int renewal_bench(const po::variables_map& vm) {
  const int locks = vm["renewals"].as<int>();
  if (locks < 1 || locks > 1'000'000) throw Error(Errc::bad_option, "--renewals must be between 1 and 1000000");
  MutexOptions options = lock_options_from(vm);
  options.watchdog.enabled = true;
  if (vm["lease"].defaulted()) options.lease = std::chrono::milliseconds(3000);
  options.validate();
  install_interrupt_handlers();
  RedisTarget target(url_option(vm));
  const auto result = bench::run_renewal_bench(target.url(), options, locks, seconds_option(vm, "duration"));
  const nlohmann::ordered_json json = bench::to_json(result);
  if (vm.count("json")) {
    std::cout << dump_line(json) << std::endl;
  } else {
    for (const auto& [name, value] : json.items()) std::cout << name << ": " << value.dump() << "\n";
  }
  if (interrupted()) return kExitInterrupted;
  return result.still_held == result.locks ? kExitOk : kExitNotAcquired;
}

int bench_command(int argc, char** argv) {
  po::options_description options("bench options");
  add_lock_options(options);
  add_url_option(options);
  options.add_options()
      ("key", po::value<std::string>(), "the lock key (default: a fresh lockbridge:bench:<random>)")
      ("check-key", po::value<std::string>(), "the check key (default: KEY:check)")
      ("clients", po::value<int>()->default_value(1), "concurrent clients, each with its own connections")
      ("procs", "one process per client instead of one thread")
      ("duration", po::value<double>()->default_value(5.0), "seconds to run")
      ("ops", po::value<long long>(), "stop after this many acquisitions instead")
      ("hold", po::value<long long>()->default_value(0), "ms to hold the lock")
      ("think", po::value<long long>()->default_value(0), "ms to pause after each release")
      ("timeout", po::value<long long>()->default_value(10000), "ms one acquire waits before it counts as a timeout")
      ("fault", po::value<std::string>(), "pause | kill | skew | restart (see README.md)")
      ("skew-ms", po::value<long long>()->default_value(5000), "--fault skew: how far client 0's clock runs ahead")
      ("renewals", po::value<int>(), "hold this many locks with the watchdog and measure the renewals instead")
      ("json", "print one JSON object");
  po::variables_map vm;
  if (const auto done = parse_command_line(argc, argv, kUsage, options, {}, vm)) return *done;
  if (vm.count("renewals")) return renewal_bench(vm);
  const bench::BenchConfig config = config_from(vm);
  install_interrupt_handlers();
  RedisTarget target(url_option(vm));
  const bench::BenchResult result = bench::run_bench(config, target.url(), target.embedded_server());
  if (vm.count("json")) {
    std::cout << dump_line(bench::to_json(result)) << std::endl;
  } else {
    bench::print_table(std::cout, result);
  }
  if (interrupted()) return kExitInterrupted;
  return result.violations > 0 && config.fault == bench::Fault::none ? kExitNotAcquired : kExitOk;
}

}  // namespace

int run_bench(int argc, char** argv) {
  return guarded("bench", [&] { return bench_command(argc, argv); });
}

}  // namespace lockbridge::tools
