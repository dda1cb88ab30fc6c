// What every subcommand shares: exit codes, the --url / LOCKBRIDGE_URL / embedded-server rule,
// lock options on the command line, error reporting and Ctrl-C handling.
#pragma once

#include <boost/program_options.hpp>
#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "embedded_server.hpp"
#include "lockbridge/mutex.hpp"

namespace lockbridge::tools {

namespace po = boost::program_options;

enum ExitCode : int {
  kExitOk = 0,
  kExitNotAcquired = 1,  // not acquired, or the lease was lost before release
  kExitUsage = 2,        // bad usage or bad input (options, URL, key, wrong type, unparsable value)
  kExitRedis = 3,        // Redis or connection error
  kExitFindings = 4,     // audit: something named by --fail-on was found
  kExitInterrupted = 130,
};

// The exit code for a lockbridge::Error.
int exit_code_for(const Error& error) noexcept;

// Where the subcommand's Redis is: --url, else $LOCKBRIDGE_URL, else an embedded redis-server
// (started here and stopped when this object goes away).
class RedisTarget {
 public:
  explicit RedisTarget(const std::optional<std::string>& url_option);
  const std::string& url() const noexcept { return url_; }
  bool embedded() const noexcept { return embedded_ != nullptr; }
  EmbeddedRedis* embedded_server() noexcept { return embedded_.get(); }

 private:
  std::unique_ptr<EmbeddedRedis> embedded_;
  std::string url_;
};

// --url, shared by every subcommand that talks to Redis.
void add_url_option(po::options_description& options);
std::optional<std::string> url_option(const po::variables_map& vm);

// --strategy, --preset, --format, --lease, --wait-mode, --retry, --watchdog, --fencing: parsed
// into MutexOptions.
void add_lock_options(po::options_description& options);
MutexOptions lock_options_from(const po::variables_map& vm);

// --far-future MS (audit, convert): an expiry further ahead than this is flagged far_future.
void add_far_future_option(po::options_description& options);
std::chrono::milliseconds far_future_option(const po::variables_map& vm);

// --wait-mode's value. Throws Error{bad_option} naming the choices.
WaitMode wait_mode_from(std::string_view name);

// How a lock waits between attempts, in a few words: "notify, backoff 1-100ms", "poll every 100ms"
// (whether it queues locally is MutexOptions::local_queue, shown apart).
std::string waiting_label(const MutexOptions& options);

// The strategies and presets side by side, as demo shows them: legacy faithful (the jedis-lock
// 1.0.0 defaults), legacy hardened (the same, hardened), token (the defaults).
struct NamedStrategy {
  std::string name;        // "legacy faithful", "legacy hardened", "token"
  std::string_view peer;   // the peer it matches on the wire, if any
  MutexOptions options;
};
std::vector<NamedStrategy> every_strategy();

// Parses argv for a subcommand; handles --help and --version (returns them as an exit code).
// `positional` names the positional arguments in order (may be empty).
std::optional<int> parse_command_line(int argc, char** argv, std::string_view usage, const po::options_description& options,
                                      const po::positional_options_description& positional, po::variables_map& vm);

// Ctrl-C and SIGTERM set a flag instead of killing the process, so locks are released and the
// embedded server stopped. sleep_unless_interrupted() returns false when interrupted.
void install_interrupt_handlers();
bool interrupted() noexcept;
bool sleep_unless_interrupted(std::chrono::milliseconds duration);

std::string_view version() noexcept;

// Runs a subcommand's body and turns what it throws into a message on stderr and an exit code:
// usage errors 2, lockbridge::Error by its code, anything else (e.g. no redis-server) 3.
int guarded(std::string_view command, const std::function<int()>& body);

// One line of JSON. Redis keys go in through put_key() (key_text.hpp), which keeps them exact;
// any other invalid UTF-8 is replaced (U+FFFD), never thrown on.
std::string dump_line(const nlohmann::ordered_json& value);

}  // namespace lockbridge::tools
