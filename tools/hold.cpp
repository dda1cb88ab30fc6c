// lockbridge hold KEY: acquire, print one JSON line, hold, release, print one JSON line.
// Other clients (in any language) drive it in interop and fault tests, so its output and exit
// codes are an interface: README.md documents them.
#include <iostream>

#include "cli_common.hpp"
#include "key_text.hpp"
#include "subcommands.hpp"

namespace lockbridge::tools {
namespace {

constexpr std::string_view kUsage =
    "lockbridge hold KEY [--strategy legacy|token|redisson] [--preset faithful|hardened] [--format ms|seconds|uuid-ms]\n"
    "                    [--lease MS] [--wait MS] [--for MS] [--wait-mode poll|notify|fair] [--retry MS]\n"
    "                    [--starvation-after MS] [--grant-lease MS] [--fair-wait MS] [--sharded-subscription auto|on|off]\n"
    "                    [--watchdog] [--fencing] [--url URL] [--json]\n\n"
    "Acquires KEY within --wait ms (0 = one attempt), holds it for --for ms, releases it.";
constexpr ExitMeanings kExits{
    .ok = "acquired and released",
    .not_acquired = "not acquired (or lost before release)",
    .usage_detail = "or bad input",
    .interrupt_detail = "(SIGINT, SIGTERM or SIGHUP: a --wait ends at once, a held lock is released first)"};

void print(bool json, const nlohmann::ordered_json& line, const std::string& text) {
  if (json) {
    std::cout << dump_line(line) << std::endl;
  } else {
    std::cout << text << std::endl;
  }
}

}  // namespace

int run_hold(int argc, char** argv) {
  po::options_description options("hold options", kHelpColumns, kHelpColumns / 2);
  add_lock_options(options);
  add_url_option(options);
  add_metrics_option(options);
  options.add_options()("lock-key", po::value<std::string>(), "the lock key (positional)")(
      "wait", number_value("0"), "ms to keep trying (0 to 365 days); 0 = a single attempt")(
      "for", number_value("0"), "ms to hold the lock before releasing it (0 to 365 days)");
  add_json_option(options, "one JSON line per step");
  po::positional_options_description positional;
  positional.add("lock-key", 1);
  po::variables_map vm;
  if (const auto done = parse_command_line(argc, argv, kUsage, kExits, options, positional, vm)) return *done;
  if (!vm.count("lock-key")) throw po::error("missing KEY");
  const bool json = vm.count("json") > 0;
  const std::string key = vm["lock-key"].as<std::string>();
  // --wait is the library's acquire timeout, with its range.
  const auto wait = milliseconds_option(vm, "wait", std::chrono::milliseconds::zero(), kMaxOptionDuration);
  const auto hold_for = milliseconds_option(vm, "for", std::chrono::milliseconds::zero(), kMaxOptionDuration);
  const MutexOptions lock_options = lock_options_from(vm);

  const SubcommandRedis redis(vm);
  Mutex mutex(redis.client(), key, lock_options);

  nlohmann::ordered_json acquired_line{{"acquired", false}};
  put_key(acquired_line, key);  // any bytes: escaped, with key_base64 when not UTF-8
  acquired_line["strategy"] = to_string(lock_options.strategy);
  if (lock_options.strategy == StrategyKind::legacy) {
    acquired_line["preset"] = to_string(lock_options.legacy.preset);
    acquired_line["format"] = to_string(lock_options.legacy.format);
  }
  // An interrupt ends a wait at once (the waiter leaves any queue it joined); one attempt is never cut.
  const StopWhen stop(interrupted);
  const bool acquired =
      wait == std::chrono::milliseconds::zero() ? mutex.try_lock() : mutex.try_lock_for(wait, stop.token());
  acquired_line["acquired"] = acquired;
  acquired_line["value"] = acquired ? nlohmann::ordered_json(mutex.value()) : nlohmann::ordered_json(nullptr);
  if (acquired && mutex.fence()) acquired_line["fence"] = *mutex.fence();
  // Text for a terminal: the key and the value are bytes (the command line's, Redis's).
  print(json, acquired_line,
        acquired ? "acquired " + terminal_text(key) + " (value " + terminal_text(mutex.value()) + ")"
                 : "not acquired: " + terminal_text(key));
  if (!acquired) return interrupted() ? kExitInterrupted : kExitNotAcquired;

  const bool held_full_time = sleep_unless_interrupted(hold_for);
  std::string release_error;
  mutex.on_release_error([&release_error](const Error& e) { release_error = e.what(); });
  mutex.unlock();
  const std::error_code error = mutex.last_error();
  nlohmann::ordered_json released_line{{"released", !error}};
  if (error) released_line["error"] = errc_name(static_cast<Errc>(error.value()));
  if (error) released_line["message"] = release_error;
  print(json, released_line, error ? "not released: " + terminal_text(release_error) : std::string("released"));
  if (error) return exit_code_for(static_cast<Errc>(error.value()));
  return held_full_time ? kExitOk : kExitInterrupted;
}

}  // namespace lockbridge::tools
