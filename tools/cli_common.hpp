// What every subcommand shares: exit codes, the --url / LOCKBRIDGE_URL / embedded-server rule,
// lock options and numbers on the command line, error reporting and Ctrl-C handling.
#pragma once

#include <boost/program_options.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "embedded_server.hpp"
#include "exit_status.hpp"
#include "lockbridge/mutex.hpp"
#include "metrics_option.hpp"

namespace lockbridge::tools {

namespace po = boost::program_options;

// The exit code for a lockbridge::Error, or for its code (a release's last_error()).
int exit_code_for(const Error& error) noexcept;
int exit_code_for(Errc code) noexcept;

// A local file could not be created, read, written, synced or renamed (a full disk, a file-size
// limit, a missing directory, permissions): exit 5, printed with [file]. Not a lockbridge::Error,
// whose codes are all about Redis. A file whose content is wrong (not a journal, a malformed line)
// is bad input instead: Error{bad_option}, exit 2.
class FileError : public std::runtime_error {
 public:
  // what() is "<what> '<path>': <strerror(error_number)>".
  FileError(const std::string& what, const std::string& path, int error_number);
};

// A Redis and how to reach it: its URL and the TLS flags. Copied into bench's workers.
struct RedisServer {
  std::string url;
  TlsOptions tls;
  std::chrono::milliseconds connect_timeout{ClientOptions{}.connect_timeout};  // --connect-timeout
  std::shared_ptr<ServedMetrics> metrics;  // --metrics: observes and counts every Client of it
  // A Client of it, with `options` plus the TLS flags and the connect timeout (and the metrics'
  // observer).
  Client client(ClientOptions options = {}) const;
};

// Where the subcommand's Redis is: --url, else $LOCKBRIDGE_URL, else an embedded redis-server
// (started here and stopped when this object goes away); with the TLS flags (add_url_option).
// --insecure prints a warning on stderr.
class SubcommandRedis {
 public:
  // `persistence`: the embedded server's, when one is started.
  explicit SubcommandRedis(const po::variables_map& vm,
                           EmbeddedRedis::Persistence persistence = EmbeddedRedis::Persistence::on_shutdown);
  const std::string& url() const noexcept { return server_.url; }
  const RedisServer& server() const noexcept { return server_; }
  Client client() const { return server_.client(); }
  bool embedded() const noexcept { return embedded_ != nullptr; }
  EmbeddedRedis* embedded_server() noexcept { return embedded_.get(); }

 private:
  std::unique_ptr<EmbeddedRedis> embedded_;
  RedisServer server_;
};

// --url and the TLS flags (--tls, --cacert, --cacertdir, --cert, --key, --sni, --insecure, named
// as redis-cli names them), and --connect-timeout, shared by every subcommand that talks to Redis.
// The width of every subcommand's option list: 120 columns, not Boost's 80, at which its wrapping
// split the URL forms in the middle of a word (and the man pages, made from that text, with them).
inline constexpr unsigned kHelpColumns = 120;

void add_url_option(po::options_description& options);

// --json: machine-readable output on stdout instead of the text, `what` saying its shape ("one JSON
// object", "one JSON line per ..."). One definition for every subcommand that prints; compare's
// --json is another thing, the FILE its results go to, besides its table.
void add_json_option(po::options_description& options, const std::string& what);

// Options that do not apply to what the command line asks for are refused, never dropped: each
// of `names` given on the command line (a default does not count) is Error{bad_option}, "--X
// <why>" (why: "does not apply to --soak", say).
void refuse_given(const po::variables_map& vm, std::initializer_list<std::string_view> names, std::string_view why);
// The same for every option given but those of `allowed` (and the URL and TLS options, which
// every mode that talks to Redis takes).
void refuse_all_but(const po::variables_map& vm, std::initializer_list<std::string_view> allowed, std::string_view why);

// --strategy, --preset, --format, --lease, --wait-mode, --retry, --watchdog, --fencing: parsed
// into MutexOptions. --preset and --format are refused for a strategy but legacy, and
// --starvation-after outside notify mode's token and hardened locks.
void add_lock_options(po::options_description& options);
MutexOptions lock_options_from(const po::variables_map& vm);

// Numeric options are declared as text with number_value() and read with the helpers below, so
// that every number, however large or malformed, gets the same message: Error{bad_option} naming
// the option and its range ("--for must be between 0 and 31536000000 ms (365 days), got '-1'").
// The option must be present (given or defaulted).
po::typed_value<std::string>* number_value();
po::typed_value<std::string>* number_value(const std::string& default_value);
std::chrono::milliseconds milliseconds_option(const po::variables_map& vm, const std::string& name,
                                              std::chrono::milliseconds min, std::chrono::milliseconds max);
std::int64_t count_option(const po::variables_map& vm, const std::string& name, std::int64_t min, std::int64_t max);
// The whole text as one decimal integer (an optional '-' and digits only: no '+', spaces or
// fraction); nullopt otherwise, including beyond 64 bits. For numbers on the command line and in
// replies (replies.hpp).
std::optional<std::int64_t> whole_number(std::string_view text);
// Decimal seconds ("--duration 0.5"), rounded to milliseconds; checked after rounding, so nothing
// below `min` passes by rounding. The message names the range in seconds.
std::chrono::milliseconds seconds_option(const po::variables_map& vm, const std::string& name,
                                         std::chrono::milliseconds min, std::chrono::milliseconds max);
// The same in decimal minutes ("--soak 0.5"), the message naming minutes.
std::chrono::milliseconds minutes_option(const po::variables_map& vm, const std::string& name,
                                         std::chrono::milliseconds min, std::chrono::milliseconds max);
// The longest duration any option takes is the library's (kMaxOptionDuration, lockbridge/options.hpp):
// its limit for a lease, an acquire timeout and a retry interval, and the CLI's for --for, --hold
// and --think.

// A SCAN MATCH pattern (audit's and convert's --match, watch's PATTERN): never empty, which
// matches no key. Throws Error{bad_option} naming `what`.
std::string scan_pattern(const po::variables_map& vm, const std::string& name, std::string_view what);

// --far-future MS (audit, convert): an expiry further ahead than this is flagged far_future.
// At most 100 years: no lease is longer, and the sums with Redis TIME stay far from overflowing.
inline constexpr std::chrono::milliseconds kMaxFarFuture = kNoDeadline;  // lockbridge/deadline.hpp
void add_far_future_option(po::options_description& options);
std::chrono::milliseconds far_future_option(const po::variables_map& vm);

// --batch N (audit, convert): SCAN's COUNT, and the keys read (and written) per round trip.
inline constexpr std::int64_t kMaxBatch = 100000;
void add_batch_option(po::options_description& options, const std::string& what);
int batch_option(const po::variables_map& vm);

// The value of option --`option` by its name in `table`. Throws Error{bad_option} naming the choices.
template <class Enum, std::size_t N>
Enum choice_option(const NameTable<Enum, N>& table, std::string_view option, std::string_view value) {
  if (const auto parsed = table.parse(value)) return *parsed;
  throw Error(Errc::bad_option,
              "--" + std::string(option) + " must be " + table.choices() + ", got '" + std::string(value) + "'");
}

// --wait-mode's value. Throws Error{bad_option} naming the choices.
WaitMode wait_mode_from(std::string_view name);

// How a lock waits between attempts, in a few words: "notify, backoff 1-100ms", "poll every 100ms"
// (whether it queues locally is MutexOptions::local_queue, shown apart).
std::string waiting_label(const MutexOptions& options);

// The strategies and presets side by side, as demo shows them: legacy faithful (the jedis-lock
// 1.0.0 defaults), legacy hardened (the same, hardened), token (the defaults).
struct NamedStrategy {
  std::string name;       // "legacy faithful", "legacy hardened", "token"
  std::string_view peer;  // the peer it matches on the wire, if any
  MutexOptions options;
};
std::vector<NamedStrategy> every_strategy();

// Parses argv for a subcommand; handles --help (the usage, the exit status as `exits` gives it,
// the options) and --version (returns them as an exit code). `positional` names the positional
// arguments in order (may be empty).
std::optional<int> parse_command_line(int argc, char** argv, std::string_view usage, const ExitMeanings& exits,
                                      const po::options_description& options,
                                      const po::positional_options_description& positional, po::variables_map& vm);

// SIGINT, SIGTERM and SIGHUP (a closed terminal) set a flag instead of killing the process, so
// locks are released and the embedded server stopped. guarded() installs the handlers for every
// command; interrupted() reads the flag.
bool interrupted() noexcept;
// Sleeps `duration` in short steps; returns false as soon as `stop()` (or, for the second,
// interrupted()) is true. A duration too long for the steady clock waits until stopped.
bool sleep_unless(std::chrono::milliseconds duration, const std::function<bool()>& stop);
// A stop token requested once `condition` holds (interrupted(), say), for the library's waits that
// a stop ends (Mutex::try_lock_for(wait, stop)): a signal handler may not request a stop itself,
// so a thread of this object's looks at the condition every 20 ms while it lives.
class StopWhen {
 public:
  explicit StopWhen(std::function<bool()> condition);
  std::stop_token token() const noexcept { return source_.get_token(); }

 private:
  std::stop_source source_;
  std::jthread watcher_;  // last: stopped and joined first
};
bool sleep_unless_interrupted(std::chrono::milliseconds duration);

std::string_view version() noexcept;

// Runs a subcommand's body with the interrupt handlers installed, and turns what it throws into a
// message on stderr and an exit code: usage errors 2, lockbridge::Error by its code, FileError 5,
// anything else (e.g. no redis-server) 3. Then standard output is flushed: if anything printed
// could not be written (a full disk, a closed pipe), that is said on stderr and a body's exit 0
// becomes 5. A body's 0 after an interrupt (a command that does not stop early) becomes 130.
int guarded(std::string_view command, const std::function<int()>& body);

// One line of JSON. Redis keys go in through put_key() (key_text.hpp), which keeps them exact;
// any other invalid UTF-8 is replaced (U+FFFD), never thrown on; what a terminal would obey (C1
// controls, bidirectional overrides) is \u-escaped (terminal_safe_json).
std::string dump_line(const nlohmann::ordered_json& value);

}  // namespace lockbridge::tools
