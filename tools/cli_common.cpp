#include "cli_common.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <thread>

#include <unistd.h>

#include "fd_buffer.hpp"
#include "key_text.hpp"
#include "lockbridge/deadline.hpp"
#include "lockbridge/url.hpp"
#include "lockbridge/version.hpp"

namespace lockbridge::tools {
namespace {
// Set by the signal handler, read by every thread (bench's workers too): a lock-free atomic is
// both async-signal-safe and free of data races, which volatile sig_atomic_t is only within one thread.
std::atomic<bool> g_interrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free);
extern "C" void on_interrupt(int /*signal*/) { g_interrupted.store(true, std::memory_order_relaxed); }
}  // namespace

FileError::FileError(const std::string& what, const std::string& path, int error_number)
    : std::runtime_error(what + " '" + path + "': " + std::strerror(error_number)) {}

int exit_code_for(const Error& error) noexcept { return exit_code_for(error.errc()); }

int exit_code_for(Errc code) noexcept {
  switch (code) {
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

Client RedisServer::client(ClientOptions options) const {
  options.tls = tls;
  options.connect_timeout = connect_timeout;
  options.on_notice = [](const std::string& notice) {
    std::cerr << "lockbridge: notice: " + terminal_text(notice) + "\n" << std::flush;
  };
  if (!metrics) return Client(url, options);
  options.observer = metrics->observer();
  Client client(url, options);
  metrics->watch(client);
  return client;
}

namespace {
TlsOptions tls_options_from(const po::variables_map& vm) {
  TlsOptions tls;
  tls.enabled = vm.count("tls") > 0;
  // An empty value is a mistake (an unset shell variable), never the same as leaving it out.
  const auto text = [&vm](const char* name) {
    if (!vm.count(name)) return std::string();
    const std::string& value = vm[name].as<std::string>();
    if (value.empty()) throw Error(Errc::bad_option, "--" + std::string(name) + " must not be empty");
    return value;
  };
  // --key alone is most often a lock key given with bench's old spelling: say what it is.
  if (vm.count("key") && !vm.count("cert")) {
    throw Error(Errc::bad_option,
                "--key is the private key of a TLS client certificate and goes with --cert; the key to lock is "
                "--lock-key (or KEY: hold KEY, inspect KEY)");
  }
  tls.ca_file = text("cacert");
  tls.ca_dir = text("cacertdir");
  tls.cert_file = text("cert");
  tls.key_file = text("key");
  tls.server_name = text("sni");
  tls.verify = vm.count("insecure") == 0;
  return tls;
}
}  // namespace

SubcommandRedis::SubcommandRedis(const po::variables_map& vm, EmbeddedRedis::Persistence persistence) {
  server_.tls = tls_options_from(vm);
  server_.tls.validate();
  server_.connect_timeout =
      milliseconds_option(vm, "connect-timeout", std::chrono::milliseconds(1), kMaxOptionDuration);
  // Checked (and listening) before a server is started or reached.
  server_.metrics = serve_metrics(vm);  // hold and bench only add --metrics
  const bool tls_flags = server_.tls.enabled || !server_.tls.settings_given().empty();
  if (vm.count("url")) {
    server_.url = vm["url"].as<std::string>();
  } else if (const char* env = std::getenv("LOCKBRIDGE_URL"); env != nullptr && *env != '\0') {
    server_.url = env;
  } else if (tls_flags) {
    throw Error(Errc::bad_option,
                "the TLS options need a server: --url rediss://HOST:PORT (or $LOCKBRIDGE_URL); "
                "the embedded redis-server speaks plain TCP");
  } else {
    embedded_ = EmbeddedRedis::start(std::chrono::seconds(10), persistence);
    server_.url = embedded_->url();
  }
  // Before anything is sent, or the embedded server stopped: TLS settings for a plain URL are
  // refused, not ignored.
  server_.tls.validate(parse_redis_url(server_.url));
  if (!server_.tls.verify) {
    std::cerr << "lockbridge: warning: --insecure: the server's certificate is not checked; anyone on the path can "
                 "read and change the traffic, lock tokens and password included\n";
  }
}

void add_json_option(po::options_description& options, const std::string& what) {
  options.add_options()("json", ("print " + what + " instead of text").c_str());
}

void add_url_option(po::options_description& options) {
  options.add_options()("url", po::value<std::string>(),
                        "Redis URL: redis[s]://[user[:password]@]host[:port][/db], unix:///path[?db=N], "
                        "redis[s]-sentinel://host:port[,host:port...]/master-name, "
                        "redis[s]-cluster://host:port[,host:port...] or "
                        "redlock://host:port,host:port,host:port[,...] (an odd number of masters); rediss: TLS. "
                        "Default: $LOCKBRIDGE_URL, else a private redis-server started for this command")(
      "tls", "TLS for every connection, also with a redis:// URL")(
      "cacert", po::value<std::string>(), "TLS: PEM file of the CAs to trust (default: the system's)")(
      "cacertdir", po::value<std::string>(), "TLS: directory of hashed CA certificates to trust")(
      "cert", po::value<std::string>(), "TLS: client certificate (PEM), for servers with tls-auth-clients")(
      "key", po::value<std::string>(), "TLS: the client certificate's private key (PEM, not encrypted)")(
      "sni", po::value<std::string>(),
      "TLS: server name to send and to check the certificate against (default: the URL's host)")(
      "insecure", "TLS: do not check the server's certificate (dangerous; prints a warning)")(
      "connect-timeout", number_value(std::to_string(ClientOptions{}.connect_timeout.count())),
      "ms (1 ms to 365 days) for each connect: the TCP connect, the TLS handshake and reading its files, AUTH and "
      "SELECT (a TLS server in another region may need more than the default)");
}

namespace {
// add_url_option's options.
constexpr std::string_view kUrlOptions[] = {"url", "tls", "cacert",   "cacertdir",      "cert",
                                            "key", "sni", "insecure", "connect-timeout"};

bool given(const po::variables_map& vm, std::string_view name) {
  const auto found = vm.find(std::string(name));
  return found != vm.end() && !found->second.defaulted();
}
}  // namespace

void refuse_given(const po::variables_map& vm, std::initializer_list<std::string_view> names, std::string_view why) {
  for (const std::string_view name : names) {
    if (given(vm, name)) throw Error(Errc::bad_option, "--" + std::string(name) + " " + std::string(why));
  }
}

void refuse_all_but(const po::variables_map& vm, std::initializer_list<std::string_view> allowed,
                    std::string_view why) {
  for (const auto& option : vm) {
    const std::string& name = option.first;  // a plain name: clang 14 cannot capture a structured binding
    const auto is = [&name](std::string_view other) { return name == other; };
    if (option.second.defaulted() || std::ranges::any_of(allowed, is) || std::ranges::any_of(kUrlOptions, is)) continue;
    throw Error(Errc::bad_option, "--" + name + " " + std::string(why));
  }
}

void add_lock_options(po::options_description& options) {
  options.add_options()(
      "strategy", po::value<std::string>()->default_value("token"),
      "legacy | token | redisson (Redisson RLock's layout; without --lease: 30 s renewed by the watchdog)")(
      "preset", po::value<std::string>()->default_value("hardened"), "legacy preset: faithful | hardened")(
      "format", po::value<std::string>()->default_value("ms"), "legacy value format: ms | seconds | uuid-ms")(
      "lease", number_value("60000"), "lease in ms (1 ms to 365 days)")(
      "wait-mode", po::value<std::string>()->default_value("notify"),
      "poll (retry policy only) | notify (a release wakes waiters; retry policy as fallback) | fair (notify, "
      "plus a first-come first-served queue across processes; token strategy, or redisson: Redisson's RFairLock)")(
      "fair-wait", number_value(std::to_string(RedissonOptions{}.fair_wait.count())),
      "redisson fair mode: the wait (1 ms to 365 days) Redisson's fair-lock deadlines add per waiter; must equal the "
      "Java peers' fairLockWaitTimeout")(
      "sharded-subscription", po::value<std::string>()->default_value("auto"),
      "redisson on a Redis Cluster: auto | on (SPUBLISH / SSUBSCRIBE) | off (PUBLISH / SUBSCRIBE); must be the Java "
      "fleet's shardedSubscriptionMode")(
      "starvation-after", number_value(std::to_string(MutexOptions{}.starvation_after.count())),
      "notify mode: a queued waiter that has waited MS ms (0 to 365 days; 0: at once) starves, and releases grant "
      "it the lock instead of letting newcomers barge (token, legacy hardened)")(
      "grant-lease", number_value(std::to_string(MutexOptions{}.grant_lease.count())),
      "a starving waiter (every waiter in fair mode) is granted the lock by the release for at most MS ms (1 ms "
      "to 365 days) until its hold lasts, so a waiter that died blocks nobody longer (token, legacy hardened)")(
      "watchdog", "renew the lease every lease/3 while held (token, legacy hardened)")(
      "fencing", "draw a fencing token with each acquisition (token; redisson: Redisson's RFencedLock)")(
      "retry", number_value(),
      "attempt every MS ms (0 to 365 days) while waiting, counted as jedis-lock counts them (default: exponential "
      "backoff "
      "with jitter, 1-100 ms, never past the holder's lease end)");
}

MutexOptions lock_options_from(const po::variables_map& vm) {
  MutexOptions options;
  const StrategyKind strategy = choice_option(kStrategyKindNames, "strategy", vm["strategy"].as<std::string>());
  const bool redisson = strategy == StrategyKind::redisson;
  if (redisson) options = MutexOptions::redisson_lock();
  options.strategy = strategy;
  options.legacy.preset = choice_option(kLegacyPresetNames, "preset", vm["preset"].as<std::string>());
  options.legacy.format = choice_option(kLegacyFormatNames, "format", vm["format"].as<std::string>());
  // Redisson: an explicit lease is a leaseTime, which Redisson never renews.
  const bool lease_given = !vm["lease"].defaulted();
  // The library's own ranges (MutexOptions::validate), checked here so the message names the option.
  const auto lease = milliseconds_option(vm, "lease", std::chrono::milliseconds(1), kMaxOptionDuration);
  if (!redisson || lease_given) options.lease = lease;
  if (vm.count("retry")) {
    options.retry = RetryPolicy::jedis_lock_resolution(
        milliseconds_option(vm, "retry", std::chrono::milliseconds::zero(), kMaxOptionDuration));
  }
  options.wait_mode = wait_mode_from(vm["wait-mode"].as<std::string>());
  options.starvation_after =
      milliseconds_option(vm, "starvation-after", std::chrono::milliseconds::zero(), kMaxOptionDuration);
  options.grant_lease = milliseconds_option(vm, "grant-lease", std::chrono::milliseconds(1), kMaxOptionDuration);
  if (strategy != StrategyKind::legacy)
    refuse_given(vm, {"preset", "format"}, "is the legacy strategy's (--strategy legacy)");
  if (options.wait_mode != WaitMode::notify || redisson || (strategy == StrategyKind::legacy && options.faithful())) {
    refuse_given(vm, {"starvation-after"}, "is notify mode's starvation rule, for the token and legacy hardened locks");
  }
  if (options.wait_mode == WaitMode::poll || redisson || (strategy == StrategyKind::legacy && options.faithful())) {
    refuse_given(vm, {"grant-lease"}, "is for waiters a release grants the lock to (notify and fair mode; token, legacy hardened)");
  }
  options.redisson.fair_wait =
      milliseconds_option(vm, "fair-wait", std::chrono::milliseconds(1), kMaxOptionDuration);
  if (!redisson || options.wait_mode != WaitMode::fair) {
    refuse_given(vm, {"fair-wait"}, "is Redisson's fair lock's (--strategy redisson --wait-mode fair)");
  }
  options.redisson.sharded_subscription = choice_option(kShardedSubscriptionNames, "sharded-subscription",
                                                        vm["sharded-subscription"].as<std::string>());
  if (!redisson) refuse_given(vm, {"sharded-subscription"}, "is the redisson strategy's (--strategy redisson)");
  options.watchdog.enabled = vm.count("watchdog") > 0 || (redisson && !lease_given);
  if (vm.count("fencing")) {
    if (options.strategy == StrategyKind::legacy) {
      throw Error(Errc::bad_option, "--fencing needs --strategy token (or redisson: Redisson's RFencedLock)");
    }
    options.token.fencing = true;
  }
  options.validate();
  return options;
}

WaitMode wait_mode_from(std::string_view name) { return choice_option(kWaitModeNames, "wait-mode", name); }

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

std::optional<int> parse_command_line(int argc, char** argv, std::string_view usage, const ExitMeanings& exits,
                                      const po::options_description& options,
                                      const po::positional_options_description& positional, po::variables_map& vm) {
  po::options_description all(options);
  all.add_options()("help,h", "show this help")("version", "show the version");
  po::store(po::command_line_parser(argc, argv).options(all).positional(positional).run(), vm);
  if (vm.count("help")) {
    std::cout << "Usage: " << usage << "\n" << exit_status_text(exits) << "\n\n" << all << "\n";
    return kExitOk;
  }
  if (vm.count("version")) {
    std::cout << "lockbridge " << version() << "\n";
    return kExitOk;
  }
  po::notify(vm);
  return std::nullopt;
}

namespace {
void install_interrupt_handlers() {
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  for (const int signal : {SIGINT, SIGTERM, SIGHUP}) sigaction(signal, &action, nullptr);
}
}  // namespace

bool interrupted() noexcept { return g_interrupted.load(std::memory_order_relaxed); }

bool sleep_unless(std::chrono::milliseconds duration, const std::function<bool()>& stop) {
  const auto deadline = deadline_after(duration);
  while (!stop()) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return true;
    std::this_thread::sleep_for(
        std::min<std::chrono::steady_clock::duration>(deadline - now, std::chrono::milliseconds(20)));
  }
  return false;
}

bool sleep_unless_interrupted(std::chrono::milliseconds duration) { return sleep_unless(duration, interrupted); }

StopWhen::StopWhen(std::function<bool()> condition)
    : watcher_([source = source_, condition = std::move(condition)](const std::stop_token& done) mutable {
        while (!done.stop_requested()) {
          if (condition()) {
            source.request_stop();
            return;
          }
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
      }) {}

namespace {

int run_body(std::string_view command, const std::function<int()>& body) {
  // A failure after an interrupt is said as it is, and the exit is 130: the interrupt is why the
  // work stopped (a wait it cut short, a connection it broke), and a script must see that.
  const auto unless_interrupted = [](int code) { return interrupted() ? kExitInterrupted : code; };
  try {
    return body();
  } catch (const po::error& error) {
    std::cerr << "lockbridge " << command << ": " << terminal_text(error.what()) << " (see --help)\n";
    return kExitUsage;
  } catch (const Error& error) {
    std::cerr << "lockbridge " << command << ": " << terminal_text(error.what()) << " [" << errc_name(error.errc())
              << "]\n";
    return unless_interrupted(exit_code_for(error));
  } catch (const FileError& error) {
    std::cerr << "lockbridge " << command << ": " << terminal_text(error.what()) << " [file]\n";
    return unless_interrupted(kExitFile);
  } catch (const std::exception& error) {
    std::cerr << "lockbridge " << command << ": " << terminal_text(error.what()) << "\n";
    return unless_interrupted(kExitRedis);
  }
}

}  // namespace

int guarded(std::string_view command, const std::function<int()>& body) {
  install_interrupt_handlers();
  // Standard output through a buffer that keeps why a write failed: whatever the body printed must
  // reach it, or the command has failed too.
  FdBuffer out(STDOUT_FILENO, /*owned=*/false);
  // Put back however this scope is left (even by something that is not a std::exception), before
  // `out` is gone.
  struct RestoreCout {
    std::streambuf* previous;
    ~RestoreCout() { std::cout.rdbuf(previous); }
  } restore{std::cout.rdbuf(&out)};
  int result = run_body(command, body);
  if (result == kExitOk && interrupted()) result = kExitInterrupted;
  std::cout.flush();
  if (out.error() != 0) {
    std::cerr << "lockbridge " << command << ": writing to standard output failed: " << std::strerror(out.error())
              << " [file]\n";
    if (result == kExitOk) result = kExitFile;
  }
  return result;
}

std::string_view version() noexcept { return LOCKBRIDGE_VERSION; }

std::string dump_line(const nlohmann::ordered_json& value) {
  return terminal_safe_json(value.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
}

// ---- numbers on the command line -------------------------------------------------------------

namespace {

constexpr std::int64_t kMsPerDay = 24LL * 3600 * 1000;

std::string ms_range(std::chrono::milliseconds min, std::chrono::milliseconds max) {
  std::string range = std::to_string(min.count()) + " and " + std::to_string(max.count()) + " ms";
  if (max.count() >= kMsPerDay && max.count() % kMsPerDay == 0)
    range += " (" + std::to_string(max.count() / kMsPerDay) + " days)";
  return range;
}

[[noreturn]] void out_of_range(const std::string& name, const std::string& range, const std::string& given) {
  throw Error(Errc::bad_option, "--" + name + " must be between " + range + ", got '" + given + "'");
}

const std::string& text_of(const po::variables_map& vm, const std::string& name) {
  if (!vm.count(name)) throw Error(Errc::bad_option, "--" + name + " is required");
  return vm[name].as<std::string>();
}

}  // namespace

std::optional<std::int64_t> whole_number(std::string_view text) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

po::typed_value<std::string>* number_value() { return po::value<std::string>()->value_name("N"); }

po::typed_value<std::string>* number_value(const std::string& default_value) {
  return number_value()->default_value(default_value);
}

std::chrono::milliseconds milliseconds_option(const po::variables_map& vm, const std::string& name,
                                              std::chrono::milliseconds min, std::chrono::milliseconds max) {
  const std::string& text = text_of(vm, name);
  const auto value = whole_number(text);
  if (!value || *value < min.count() || *value > max.count()) out_of_range(name, ms_range(min, max), text);
  return std::chrono::milliseconds(*value);
}

std::int64_t count_option(const po::variables_map& vm, const std::string& name, std::int64_t min, std::int64_t max) {
  const std::string& text = text_of(vm, name);
  const auto value = whole_number(text);
  if (!value || *value < min || *value > max)
    out_of_range(name, std::to_string(min) + " and " + std::to_string(max), text);
  return *value;
}

namespace {

// A decimal number of `unit`s (ms in a unit: 1000 for seconds, 60000 for minutes), rounded to
// milliseconds and checked against [min, max] after rounding: what the command will actually use.
// The message names the bounds in the option's own unit.
std::chrono::milliseconds decimal_option(const po::variables_map& vm, const std::string& name,
                                         std::chrono::milliseconds min, std::chrono::milliseconds max,
                                         std::int64_t unit_ms, const char* unit_name) {
  const std::string& text = text_of(vm, name);
  double units = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), units);
  const bool number = error == std::errc() && end == text.data() + text.size() && !text.empty() && std::isfinite(units);
  const double ms = number ? std::round(units * static_cast<double>(unit_ms)) : 0;
  if (!number || ms < static_cast<double>(min.count()) || ms > static_cast<double>(max.count())) {
    const auto in_units = [unit_ms](std::chrono::milliseconds bound) {
      char shown[40];
      std::snprintf(shown, sizeof shown, "%.3f", static_cast<double>(bound.count()) / static_cast<double>(unit_ms));
      std::string trimmed(shown);
      while (trimmed.back() == '0') trimmed.pop_back();  // 0.100 -> 0.1, 60.000 -> 60
      if (trimmed.back() == '.') trimmed.pop_back();
      return trimmed;
    };
    out_of_range(name, in_units(min) + " and " + in_units(max) + " " + unit_name, text);
  }
  return std::chrono::milliseconds(static_cast<std::int64_t>(ms));
}

}  // namespace

std::chrono::milliseconds seconds_option(const po::variables_map& vm, const std::string& name,
                                         std::chrono::milliseconds min, std::chrono::milliseconds max) {
  return decimal_option(vm, name, min, max, 1000, "seconds");
}

std::chrono::milliseconds minutes_option(const po::variables_map& vm, const std::string& name,
                                         std::chrono::milliseconds min, std::chrono::milliseconds max) {
  return decimal_option(vm, name, min, max, 60 * 1000, "minutes");
}

std::string scan_pattern(const po::variables_map& vm, const std::string& name, std::string_view what) {
  const std::string& pattern = text_of(vm, name);
  if (pattern.empty()) {
    throw Error(Errc::bad_option, std::string(what) + " must not be empty: it matches no key ('*' matches every key)");
  }
  return pattern;
}

void add_far_future_option(po::options_description& options) {
  options.add_options()("far-future", number_value(std::to_string(7LL * kMsPerDay)),
                        "ms (1 ms to 100 years): an expiry further ahead than this is flagged far_future");
}

std::chrono::milliseconds far_future_option(const po::variables_map& vm) {
  return milliseconds_option(vm, "far-future", std::chrono::milliseconds(1), kMaxFarFuture);
}

void add_batch_option(po::options_description& options, const std::string& what) {
  options.add_options()("batch", number_value("1000"),
                        ("SCAN COUNT (1 to 100000): keys per batch (" + what + ")").c_str());
}

int batch_option(const po::variables_map& vm) { return static_cast<int>(count_option(vm, "batch", 1, kMaxBatch)); }

}  // namespace lockbridge::tools
