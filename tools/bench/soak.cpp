#include "soak.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <iomanip>
#include <random>
#include <string_view>
#include <thread>

#include "runner.hpp"

namespace lockbridge::tools::bench {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// The locks a soak mixes: what users run, each with the safety it claims.
struct Profile {
  std::string_view name;
  MutexOptions (*options)();
};

MutexOptions token_fenced() {
  MutexOptions options;
  options.strategy = StrategyKind::token;
  options.token.fencing = true;
  return options;
}

MutexOptions token_fenced_watchdog() {
  MutexOptions options = token_fenced();
  options.watchdog.enabled = true;
  return options;
}

MutexOptions legacy_hardened() {
  MutexOptions options;
  options.strategy = StrategyKind::legacy;
  options.legacy.preset = LegacyPreset::hardened;
  return options;
}

MutexOptions legacy_faithful() {
  MutexOptions options;
  options.strategy = StrategyKind::legacy;
  options.legacy.preset = LegacyPreset::faithful;
  options.wait_mode = WaitMode::poll;  // jedis-lock announces nothing
  options.retry = RetryPolicy::jedis_lock_resolution(milliseconds(10));
  return options;
}

constexpr std::array<Profile, 4> kProfiles{{{"token, fencing", token_fenced},
                                            {"token, fencing, watchdog", token_fenced_watchdog},
                                            {"legacy hardened", legacy_hardened},
                                            {"legacy faithful", legacy_faithful}}};

constexpr std::array<Fault, 5> kFaults{Fault::pause, Fault::kill, Fault::restart, Fault::skew, Fault::stall};

// Whether the fault lets a holder be inside after its lease has passed to another (the check key
// then counts an overlap, and fencing is what protects the resource).
bool overlap_expected(Fault fault, const MutexOptions& options) {
  return fault == Fault::pause || fault == Fault::stall || (fault == Fault::skew && options.faithful());
}

template <class T>
T draw(std::mt19937_64& random, T low, T high) {
  return std::uniform_int_distribution<T>(low, high)(random);
}

// One episode's settings, drawn from the soak's random stream.
BenchConfig episode_config(std::mt19937_64& random, const Profile& profile, Fault fault) {
  BenchConfig config;
  config.lock = profile.options();
  config.lock.lease = milliseconds(draw<int>(random, 300, 1200));
  config.lock.acquire_timeout = milliseconds(10000);
  if (!config.lock.faithful()) config.lock.retry = RetryPolicy::backoff_with_jitter(milliseconds(1), milliseconds(10));
  config.lock.local_queue = false;  // processes: one client each
  config.clients = draw<int>(random, 3, 6);
  config.procs = true;
  config.hold = milliseconds(draw<int>(random, 2, 30));
  config.think = milliseconds(draw<int>(random, 0, 5));
  config.fault = fault;
  config.skew = milliseconds(draw<int>(random, 1000, 5000));
  config.duration = milliseconds(draw<int>(random, 3000, 8000));
  config.progress = false;
  return config;
}

std::uint64_t count_of(const nlohmann::ordered_json& fault, const char* name) {
  const auto found = fault.find(name);
  return found != fault.end() && found->is_number_unsigned() ? found->get<std::uint64_t>() : 0;
}

// After an episode that failed: the server answers PING again within 30 s, or the soak is over
// (throws the last error).
void wait_until_answering(const RedisServer& server) {
  const auto give_up = Clock::now() + std::chrono::seconds(30);
  for (;;) {
    try {
      server.client().ping();
      return;
    } catch (const Error&) {
      if (Clock::now() >= give_up || interrupted()) throw;
    }
    std::this_thread::sleep_for(milliseconds(200));
  }
}

}  // namespace

SoakReport run_soak(const SoakConfig& config, const RedisServer& server, EmbeddedRedis* embedded) {
  SoakReport report;
  report.config = config;
  std::mt19937_64 random(config.seed);
  const auto started = Clock::now();
  const auto end = started + config.length;
  for (std::uint64_t episode = 1; Clock::now() < end; ++episode) {
    if (interrupted()) {
      report.interrupted = true;
      break;
    }
    const Profile& profile = kProfiles[draw<std::size_t>(random, 0, kProfiles.size() - 1)];
    Fault fault = kFaults[draw<std::size_t>(random, 0, kFaults.size() - 1)];
    if (fault == Fault::restart && embedded == nullptr) fault = Fault::pause;  // only a server it started
    const BenchConfig episode_settings = episode_config(random, profile, fault);
    BenchResult result;
    try {
      result = run_bench(episode_settings, server, embedded);
    } catch (const Error& error) {
      report.not_run.push_back(
          {{"episode", episode}, {"profile", profile.name}, {"fault", to_string(fault)}, {"error", error.what()}});
      wait_until_answering(server);  // or throw: a soak without a server is over
      continue;
    }

    SoakTally& tally = report.profiles[std::string(profile.name)];
    ++tally.episodes;
    tally.acquisitions += result.acquisitions;
    tally.errors += result.errors;
    const bool injected = result.fault.is_object() && !result.fault.contains("failure");
    if (injected) {
      ++tally.faults[std::string(to_string(fault))];
    } else {
      ++tally.not_injected;
    }
    const bool allowed = overlap_expected(fault, result.config.lock);
    (allowed ? tally.expected_overlaps : tally.unexpected_overlaps) += result.violations;
    const std::uint64_t stale = result.fault.is_object() ? count_of(result.fault, "stale_writes") : 0;
    const std::uint64_t accepted =
        result.fault.is_object() ? count_of(result.fault, "stale_writes_accepted_by_fenced_resource") : 0;
    tally.stale_writes += stale;
    tally.stale_writes_accepted += accepted;
    if ((!allowed && result.violations > 0) || accepted > 0) {
      report.failures.push_back({{"episode", episode},
                                 {"profile", profile.name},
                                 {"fault", result.fault},
                                 {"violations", result.violations},
                                 {"clients", result.config.clients},
                                 {"lease_ms", result.config.lock.lease.count()},
                                 {"hold_ms", result.config.hold.count()}});
    }
  }
  report.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  return report;
}

nlohmann::ordered_json to_json(const SoakReport& report) {
  nlohmann::ordered_json profiles = nlohmann::ordered_json::object();
  for (const auto& [name, tally] : report.profiles) {
    nlohmann::ordered_json faults = nlohmann::ordered_json::object();
    for (const auto& [fault, count] : tally.faults) faults[fault] = count;
    profiles[name] = {{"episodes", tally.episodes},
                      {"faults", faults},
                      {"not_injected", tally.not_injected},
                      {"acquisitions", tally.acquisitions},
                      {"expected_overlaps", tally.expected_overlaps},
                      {"unexpected_overlaps", tally.unexpected_overlaps},
                      {"stale_writes", tally.stale_writes},
                      {"stale_writes_accepted_by_fenced_resource", tally.stale_writes_accepted},
                      {"errors", tally.errors}};
  }
  return {{"soak_minutes", std::chrono::duration<double, std::ratio<60>>(report.config.length).count()},
          {"seed", report.config.seed},
          {"seconds", report.seconds},
          {"interrupted", report.interrupted},
          {"passed", report.passed()},
          {"profiles", profiles},
          {"failures", report.failures},
          {"episodes_not_run", report.not_run}};
}

void print_table(std::ostream& out, const SoakReport& report) {
  out << "soak: " << std::fixed << std::setprecision(0) << report.seconds << " s, seed " << report.config.seed
      << (report.interrupted ? " (interrupted)" : "") << "\n";
  out << std::left << std::setw(26) << "profile" << std::right << std::setw(9) << "episodes" << std::setw(14)
      << "acquisitions" << std::setw(10) << "faults" << std::setw(10) << "overlaps" << std::setw(12) << "unexpected"
      << std::setw(8) << "stale" << std::setw(10) << "accepted" << std::setw(8) << "errors"
      << "\n";
  std::map<std::string, std::uint64_t> faults_by_kind;
  for (const auto& [name, tally] : report.profiles) {
    std::uint64_t faults = 0;
    for (const auto& [fault, count] : tally.faults) {
      faults += count;
      faults_by_kind[fault] += count;
    }
    out << std::left << std::setw(26) << name << std::right << std::setw(9) << tally.episodes << std::setw(14)
        << tally.acquisitions << std::setw(10) << faults << std::setw(10) << tally.expected_overlaps << std::setw(12)
        << tally.unexpected_overlaps << std::setw(8) << tally.stale_writes << std::setw(10)
        << tally.stale_writes_accepted << std::setw(8) << tally.errors << "\n";
  }
  out << "faults injected:";
  for (const auto& [fault, count] : faults_by_kind) out << " " << fault << " " << count;
  out << "\noverlaps: two clients inside at once where the fault allows it (pause and stall: a holder stopped or cut "
         "off\n"
         "past its lease; skew for the faithful preset); unexpected: anywhere else. stale: fenced writes sent after\n"
         "the lock had passed to another; accepted: those the fenced resource took.\n"
      << (report.not_run.empty()
              ? ""
              : std::to_string(report.not_run.size()) + " episode(s) could not run to their end (--json)\n")
      << (report.passed() ? "passed: no unexpected overlap, no stale write accepted\n"
                          : "FAILED: " + std::to_string(report.failures.size()) + " episode(s), listed in --json\n");
}

}  // namespace lockbridge::tools::bench
