#include "cli_common.hpp"

#include <csignal>
#include <cstdlib>
#include <iostream>
#include <thread>

#include "lockbridge/version.hpp"

namespace lockbridge::tools {
namespace {
volatile std::sig_atomic_t g_interrupted = 0;
extern "C" void on_interrupt(int /*signal*/) { g_interrupted = 1; }
}  // namespace

int exit_code_for(const Error& error) noexcept {
  switch (error.errc()) {
    case Errc::bad_option:
    case Errc::bad_value:
    case Errc::wrong_type:
      return kExitUsage;
    case Errc::lease_lost:
      return kExitNotAcquired;
    default:
      return kExitRedis;
  }
}

RedisTarget::RedisTarget(const std::optional<std::string>& url_option) {
  if (url_option) {
    url_ = *url_option;
  } else if (const char* env = std::getenv("LOCKBRIDGE_URL"); env != nullptr && *env != '\0') {
    url_ = env;
  } else {
    embedded_ = EmbeddedRedis::start();
    url_ = embedded_->url();
  }
}

void add_url_option(po::options_description& options) {
  options.add_options()("url", po::value<std::string>(),
                        "Redis URL: redis://[user[:password]@]host[:port][/db], unix:///path[?db=N], "
                        "redis-sentinel://host:port[,host:port...]/master-name or "
                        "redlock://host:port,host:port,host:port[,...] (an odd number of masters). "
                        "Default: $LOCKBRIDGE_URL, else a private redis-server started for this command");
}

std::optional<std::string> url_option(const po::variables_map& vm) {
  if (vm.count("url")) return vm["url"].as<std::string>();
  return std::nullopt;
}

void add_lock_options(po::options_description& options) {
  options.add_options()
      ("strategy", po::value<std::string>()->default_value("token"),
       "legacy | token | redisson (Redisson RLock's layout; without --lease: 30 s renewed by the watchdog)")
      ("preset", po::value<std::string>()->default_value("hardened"), "legacy preset: faithful | hardened")
      ("format", po::value<std::string>()->default_value("ms"), "legacy value format: ms | seconds | uuid-ms")
      ("lease", po::value<long long>()->default_value(60000), "lease in ms")
      ("wait-mode", po::value<std::string>()->default_value("notify"),
       "poll (retry policy only) | notify (a release wakes waiters; retry policy as fallback) | fair (notify, "
       "plus a first-come first-served queue across processes; token strategy)")
      ("watchdog", "renew the lease every lease/3 while held (token, legacy hardened)")
      ("fencing", "token strategy: draw a fencing token with each acquisition")
      ("retry", po::value<long long>(),
       "attempt every MS ms while waiting, counted as jedis-lock counts them (default: exponential backoff "
       "with jitter, 1-100 ms, never past the holder's lease end)");
}

MutexOptions lock_options_from(const po::variables_map& vm) {
  MutexOptions options;
  const auto strategy = vm["strategy"].as<std::string>();
  const bool redisson = strategy == "redisson";
  if (strategy == "legacy") {
    options.strategy = StrategyKind::legacy;
  } else if (redisson) {
    options = MutexOptions::redisson_lock();
  } else if (strategy != "token") {
    throw Error(Errc::bad_option, "--strategy must be legacy, token or redisson, got '" + strategy + "'");
  }
  const auto preset = vm["preset"].as<std::string>();
  if (preset == "faithful") {
    options.legacy.preset = LegacyPreset::faithful;
  } else if (preset != "hardened") {
    throw Error(Errc::bad_option, "--preset must be faithful or hardened, got '" + preset + "'");
  }
  const auto format = vm["format"].as<std::string>();
  const auto parsed = legacy_format_from_string(format);
  if (!parsed) throw Error(Errc::bad_option, "--format must be ms, seconds or uuid-ms, got '" + format + "'");
  options.legacy.format = *parsed;
  // Redisson: an explicit lease is a leaseTime, which Redisson never renews.
  const bool lease_given = !vm["lease"].defaulted();
  if (!redisson || lease_given) options.lease = std::chrono::milliseconds(vm["lease"].as<long long>());
  if (vm.count("retry")) options.retry = RetryPolicy::jedis_lock_resolution(std::chrono::milliseconds(vm["retry"].as<long long>()));
  options.wait_mode = wait_mode_from(vm["wait-mode"].as<std::string>());
  options.watchdog.enabled = vm.count("watchdog") > 0 || (redisson && !lease_given);
  if (vm.count("fencing")) {
    if (options.strategy != StrategyKind::token) throw Error(Errc::bad_option, "--fencing needs --strategy token");
    options.token.fencing = true;
  }
  options.validate();
  return options;
}

WaitMode wait_mode_from(std::string_view name) {
  if (name == "poll") return WaitMode::poll;
  if (name == "notify") return WaitMode::notify;
  if (name == "fair") return WaitMode::fair;
  throw Error(Errc::bad_option, "--wait-mode must be poll, notify or fair, got '" + std::string(name) + "'");
}

std::string waiting_label(const MutexOptions& options) {
  const RetryPolicy& retry = options.retry;
  std::string policy;
  switch (retry.kind) {
    case RetryPolicy::Kind::backoff:
      policy = "backoff " + std::to_string(retry.initial.count()) + "-" + std::to_string(retry.cap.count()) + "ms";
      break;
    case RetryPolicy::Kind::jedis_lock:
      policy = "every " + std::to_string(retry.interval.count()) + "ms";
      break;
    case RetryPolicy::Kind::fixed_count:
      policy = std::to_string(retry.retries) + " retries " + std::to_string(retry.interval.count()) + "ms apart";
      break;
  }
  return std::string(to_string(options.wait_mode)) + (options.wait_mode == WaitMode::poll ? " " : ", ") + policy;
}

std::vector<NamedStrategy> every_strategy() {
  MutexOptions faithful = MutexOptions::jedis_lock_1_0();
  MutexOptions hardened = faithful;
  hardened.legacy.preset = LegacyPreset::hardened;
  MutexOptions token;
  token.strategy = StrategyKind::token;
  return {{"legacy faithful", "jedis-lock 1.0.0", faithful}, {"legacy hardened", {}, hardened}, {"token", {}, token}};
}

std::optional<int> parse_command_line(int argc, char** argv, std::string_view usage, const po::options_description& options,
                                      const po::positional_options_description& positional, po::variables_map& vm) {
  po::options_description all(options);
  all.add_options()("help,h", "show this help")("version", "show the version");
  po::store(po::command_line_parser(argc, argv).options(all).positional(positional).run(), vm);
  if (vm.count("help")) {
    std::cout << "Usage: " << usage << "\n\n" << all << "\n";
    return kExitOk;
  }
  if (vm.count("version")) {
    std::cout << "lockbridge " << version() << "\n";
    return kExitOk;
  }
  po::notify(vm);
  return std::nullopt;
}

void install_interrupt_handlers() {
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

bool interrupted() noexcept { return g_interrupted != 0; }

bool sleep_unless_interrupted(std::chrono::milliseconds duration) {
  const auto deadline = std::chrono::steady_clock::now() + duration;
  while (!interrupted()) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return true;
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(deadline - now, std::chrono::milliseconds(20)));
  }
  return false;
}

int guarded(std::string_view command, const std::function<int()>& body) {
  try {
    return body();
  } catch (const po::error& error) {
    std::cerr << "lockbridge " << command << ": " << error.what() << " (see --help)\n";
    return kExitUsage;
  } catch (const Error& error) {
    std::cerr << "lockbridge " << command << ": " << error.what() << " [" << errc_name(error.errc()) << "]\n";
    return exit_code_for(error);
  } catch (const std::exception& error) {
    std::cerr << "lockbridge " << command << ": " << error.what() << "\n";
    return kExitRedis;
  }
}

std::string_view version() noexcept { return LOCKBRIDGE_VERSION; }

std::string dump_line(const nlohmann::ordered_json& value) {
  return value.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

void add_far_future_option(po::options_description& options) {
  options.add_options()("far-future", po::value<long long>()->default_value(7LL * 24 * 3600 * 1000),
                        "ms: an expiry further ahead than this is flagged far_future");
}

std::chrono::milliseconds far_future_option(const po::variables_map& vm) {
  const long long far_future = vm["far-future"].as<long long>();
  if (far_future < 1) throw Error(Errc::bad_option, "--far-future must be at least 1 ms");
  return std::chrono::milliseconds(far_future);
}

}  // namespace lockbridge::tools
