// What integration tests share: where the fixture's redis-server is, fresh keys, raw commands,
// and a MONITOR recorder for wire transcripts.
#pragma once

#include <nlohmann/json.hpp>

#include <hiredis/hiredis.h>

#include <gtest/gtest.h>

#include <sys/types.h>
#include <chrono>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <iosfwd>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "lockbridge/client.hpp"
#include "lockbridge/mutex.hpp"

namespace lockbridge::testing {

// The fixture's directory ($LOCKBRIDGE_TEST_DIR), its unix-socket URL and its loopback TCP port.
std::string test_dir();
std::string unix_url();
int tcp_port();

// The fixture server's TLS port, its certificates (tests/fixtures/redis-server.sh: ca.pem,
// server.pem/.key, client.pem/.key, expired.pem, other-ca.pem) and a rediss:// URL of it.
int tls_port();
std::string tls_file(std::string_view name);
std::string tls_url();
// Trusting the fixture's CA.
TlsOptions test_tls();

// With $LOCKBRIDGE_TEST_TLS set (CTest's "TLS." copies of the suites that matter), the tests'
// clients and CLI runs go over TLS to the fixture's TLS port; otherwise over its unix socket.
bool over_tls();
// A Client of the fixture's server: unix socket, or TLS (options.tls trusts the test CA) under
// over_tls().
Client test_client(ClientOptions options = {});
// The CLI arguments that name the same server: --url, and --cacert under over_tls().
std::string cli_server_args();

// A key no other test uses: "lbtest:<suite>.<test>:<suffix>:<random>".
std::string unique_key(std::string_view suffix = "");

// One command on a fresh connection of the test client (for setting up and checking keys).
Reply raw(std::initializer_list<std::string_view> args);
Reply raw(std::span<const std::string> args);

// A Redis ACL user on the fixture's server for one test, deleted when this object goes. It may
// use every key and channel ("~* &*") and run what `rules` allow, in ACL SETUSER's words: e.g.
// {"+@all", "-spublish"}. url() reaches the server as that user, over TCP.
class AclUser {
 public:
  explicit AclUser(std::initializer_list<std::string_view> rules);
  ~AclUser();
  AclUser(const AclUser&) = delete;
  AclUser& operator=(const AclUser&) = delete;
  const std::string& name() const noexcept { return name_; }
  std::string url() const;

 private:
  std::string name_;
};

// How many sharded subscribers hear the release announcements of `key` on the fixture's server:
// its release channel's, and every Client's own channel's beside it (release channel + ":<tag>",
// docs/design.md §10.2).
std::int64_t release_subscribers(const std::string& key);

// Whether `value` has the token strategy's form: 32 lowercase hex digits.
inline bool is_token(std::string_view value) {
  return value.size() == 32 && value.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

// The server's clock (Redis TIME) in epoch ms: what hardened legacy, fair mode and audit judge by.
std::int64_t server_ms();

// This machine's wall clock in epoch ms (what faithful legacy peers stamp with).
std::int64_t wall_ms();

// Polls `condition` every millisecond until it holds or `bound` passes; returns its last value.
// For states another thread or the server reaches, whenever that is.
bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds bound = std::chrono::seconds(10));

// Runs `attempt` again while it throws io or timeout (a server unreachable, a topology failing
// over, a client still holding a connection to a dead master), for at most 10 s; returns its
// first result. Other errors, and the last io or timeout, propagate.
template <class F>
auto retry_while_unreachable(F&& attempt) -> decltype(attempt()) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (;;) {
    try {
      return attempt();
    } catch (const Error& error) {
      if ((error.errc() != Errc::io && error.errc() != Errc::timeout) || std::chrono::steady_clock::now() >= give_up) {
        throw;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// Runs `f`, which must throw lockbridge::Error, and returns the error (a test failure otherwise).
template <class F>
Error expect_error(F&& f) {
  try {
    f();
  } catch (const Error& error) {
    return error;
  }
  ADD_FAILURE() << "expected a lockbridge::Error";
  return Error(Errc::protocol, "none thrown");
}

// MutexOptions for each strategy variant, with a short retry interval for tests.
MutexOptions faithful_options(LegacyFormat format = LegacyFormat::epoch_ms);
MutexOptions hardened_options(LegacyFormat format = LegacyFormat::epoch_ms);
MutexOptions token_options();
// One attempt (acquire_timeout 0) with `strategy`: token, hardened legacy, or Redisson's defaults.
MutexOptions one_attempt_options(StrategyKind strategy = StrategyKind::token);
// One attempt with each strategy and legacy preset, by the name parametrized tests use:
// "token", "legacy_hardened", "legacy_faithful" (jedis-lock 1.0's protocol, its retry loop faster)
// or "redisson".
MutexOptions variant_options(std::string_view variant);
// `options` as a waiter in notify mode that polls once a minute: within a test's bounds only a
// release message brings it in.
MutexOptions minute_poll_waiter(MutexOptions options);
// The test-name generator for suites parametrized by those names.
inline constexpr auto kVariantName = [](const auto& param_info) { return std::string(param_info.param); };

// A lock that must have survived something (a failover, for a replica-acknowledged lock): `rival`
// cannot take it, `holder` releases it without an error, and then `rival` can (and releases it).
void expect_held_only_by(Mutex& holder, Mutex& rival);

// After a failover that lost `first`'s lock (the promoted replica never had it): `second` takes it
// while `first` still believes it holds it (two holders) and draws no larger fence (both fenced);
// `first` then sees it held by someone else, and its release is lease_lost and leaves `second`'s
// value, read by `value_on_new_master`, in place. `second` releases it at the end. Calls are
// retried while the Clients still find the dead master (io, timeout).
void expect_lost_to_a_second_holder(Mutex& first, Mutex& second,
                                    const std::function<std::string()>& value_on_new_master);

// A holder that stalled past its short lease, and the holder that took the key over after it:
// both believe they hold the lock. `next` waits (up to 10 s) for the lease to run out. Each has
// its own Client of `url` (the fixture's server by default); `stalled` holds `stalled_lease`.
struct Takeover {
  Mutex stalled;
  Mutex next;
};
Takeover take_over_after_lease_end(const std::string& key, const MutexOptions& options,
                                   const std::string& url = unix_url(),
                                   std::chrono::milliseconds stalled_lease = std::chrono::milliseconds(50));

// Records, through MONITOR, every command that touches `key` (with `containing`, any key that
// contains it), between start() and stop(). start() and stop() each send a marker command and wait
// for MONITOR to show it, so the transcript holds exactly what ran in between: no sleeps, no timing.
class CommandRecorder {
 public:
  explicit CommandRecorder(std::string key, bool containing = false);
  ~CommandRecorder();
  void start();
  // The recorded commands touching the key, each as its list of arguments.
  std::vector<std::vector<std::string>> stop();
  // Returns once `count` more calls of `command` (upper case) touching the key have run since
  // start(): how a test knows a process elsewhere has got that far. Throws after 10 s without
  // any command. What it reads is not kept for stop().
  void wait_for_calls(std::string_view command, std::size_t count);

 private:
  std::vector<std::string> next_command();
  bool touches(const std::vector<std::string>& args) const;
  void wait_for_marker(const std::string& marker, std::vector<std::vector<std::string>>* keep);
  std::string key_;
  bool containing_ = false;
  redisContext* monitor_ = nullptr;
  std::string marker_prefix_;
};

// Splits one MONITOR line ("1700000000.123 [0 unix:/s] \"SET\" \"k\" \"v\"") into its arguments.
std::vector<std::string> parse_monitor_line(std::string_view line);

// A child process run through the shell (popen): start_process() throws when it cannot start;
// finish_process() reads its stdout to the end and waits for it (status as from waitpid).
FILE* start_process(const std::string& command);
struct ProcessOutput {
  int status = -1;
  std::string output;
};
ProcessOutput finish_process(FILE* process);

// Runs `body` in a child made by fork() (as a pre-fork server makes its workers) and returns what
// it returned, or "child failed: ..." when it threw, died or gave no answer within 20 s (then it
// is killed). The child ends with _exit: nothing of the parent's is destroyed twice.
std::string in_forked_child(const std::function<std::string()>& body);

// The lockbridge CLI run to completion: exit code, stdout, and the lines of it that are JSON.
struct CliRun {
  int exit_code = -1;
  std::vector<nlohmann::json> lines;
  std::string output;  // stdout
  std::string errors;  // stderr, kept apart so stdout stays parseable
};
// For assertion messages: exit code, stdout and stderr.
std::ostream& operator<<(std::ostream& out, const CliRun& run);
// `args` is shell text; with_url appends --url for the fixture's server; `env` (VAR=value ...) is
// set for the run.
CliRun run_cli(const std::string& args, bool with_url = true, const std::string& env = "");

// A convert or rollback that stopped before its end with `exit_code`: the summary it still printed
// (its last line) is marked incomplete and has `count` ("converted", "restored") at `done`.
void expect_incomplete_summary(const CliRun& run, int exit_code, const std::string& count, std::int64_t done);

// The lockbridge CLI running in the background with --url for the fixture's server, for tests that
// signal it. Every wait is bounded: a CLI still running when the test gives up is killed.
class BackgroundCli {
 public:
  // with_url appends --url (and --cacert) for the fixture's server. `program`: another of the
  // suite's programs instead of the CLI (lock_contender), given `args` alone.
  explicit BackgroundCli(const std::string& args, bool with_url = true, const std::string& program = LOCKBRIDGE_CLI);
  ~BackgroundCli();  // SIGKILLs a CLI still running
  BackgroundCli(const BackgroundCli&) = delete;
  BackgroundCli& operator=(const BackgroundCli&) = delete;

  pid_t pid() const noexcept { return pid_; }
  // Its stderr so far.
  std::string errors() const;
  // The next line of its stdout; nullopt at its end, or when none came within `bound`.
  std::optional<std::string> next_line(std::chrono::milliseconds bound = std::chrono::seconds(10));
  // Waits for it to exit. After `bound` it is killed (SIGKILL): exit_code is then -1.
  CliRun finish(std::chrono::milliseconds bound = std::chrono::seconds(10));

 private:
  bool read_more(std::chrono::steady_clock::time_point give_up);
  FILE* process_ = nullptr;
  pid_t pid_ = -1;
  std::string stderr_file_;
  std::string unread_;  // read from stdout, not yet returned by next_line()
  std::string output_;  // all of stdout after the pid line
};

}  // namespace lockbridge::testing
