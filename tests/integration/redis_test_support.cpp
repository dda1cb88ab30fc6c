#include "redis_test_support.hpp"

#include <algorithm>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <ostream>
#include <sstream>
#include <stdexcept>

#include "lockbridge/identity.hpp"
#include "strategies/companion_keys.hpp"

namespace lockbridge::testing {

std::string test_dir() {
  const char* dir = std::getenv("LOCKBRIDGE_TEST_DIR");
  if (dir == nullptr || *dir == '\0') {
    throw std::runtime_error(
        "LOCKBRIDGE_TEST_DIR is not set: run integration tests through ctest, "
        "whose fixture starts redis-server");
  }
  return dir;
}

std::string unix_url() { return "unix://" + test_dir() + "/redis.sock"; }

int tcp_port() {
  std::ifstream in(test_dir() + "/port");
  int port = 0;
  if (!(in >> port)) throw std::runtime_error("no port file in " + test_dir());
  return port;
}

int tls_port() {
  std::ifstream in(test_dir() + "/tls-port");
  int port = 0;
  if (!(in >> port)) throw std::runtime_error("no tls-port file in " + test_dir());
  return port;
}

std::string tls_file(std::string_view name) { return test_dir() + "/tls/" + std::string(name); }

std::string tls_url() { return "rediss://127.0.0.1:" + std::to_string(tls_port()); }

TlsOptions test_tls() {
  TlsOptions tls;
  tls.ca_file = tls_file("ca.pem");
  return tls;
}

bool over_tls() {
  const char* flag = std::getenv("LOCKBRIDGE_TEST_TLS");
  return flag != nullptr && *flag != '\0';
}

std::string cli_server_args() {
  if (over_tls()) return " --url '" + tls_url() + "' --cacert '" + tls_file("ca.pem") + "'";
  return " --url '" + unix_url() + "'";
}

std::int64_t release_subscribers(const std::string& key) {
  const std::string channel = detail::release_channel(key);
  std::int64_t subscribers = 0;
  for (const Reply& name : raw({"PUBSUB", "SHARDCHANNELS", detail::prefix_pattern(channel)}).elements) {
    if (name.str != channel && !name.str.starts_with(channel + ":")) continue;
    const Reply counted = raw({"PUBSUB", "SHARDNUMSUB", name.str});
    if (counted.elements.size() == 2) subscribers += counted.elements[1].integer;
  }
  return subscribers;
}

AclUser::AclUser(std::initializer_list<std::string_view> rules) : name_("lbtest-" + random_token().substr(0, 12)) {
  std::vector<std::string> command{"ACL", "SETUSER", name_, "reset", "on", ">acl-test-password", "~*", "&*"};
  command.insert(command.end(), rules.begin(), rules.end());
  raw(command);
}

AclUser::~AclUser() {
  try {
    raw({"ACL", "DELUSER", name_});
  } catch (const Error&) {  // the server is going away with the fixture anyway
  }
}

std::string AclUser::url() const {
  return "redis://" + name_ + ":acl-test-password@127.0.0.1:" + std::to_string(tcp_port());
}

std::int64_t server_ms() {
  const Reply time = raw({"TIME"});
  return std::stoll(time.elements[0].str) * 1000 + std::stoll(time.elements[1].str) / 1000;
}

bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds bound) {
  // The answer is the evaluation that ended the wait: asking again could catch a condition that
  // has changed since (a renewal landing between two reads) and report false after true.
  const auto give_up = std::chrono::steady_clock::now() + bound;
  for (;;) {
    if (condition()) return true;
    if (std::chrono::steady_clock::now() >= give_up) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

Client test_client(ClientOptions options) {
  if (!over_tls()) return Client(unix_url(), options);
  options.tls = test_tls();
  return Client(tls_url(), options);
}

std::string unique_key(std::string_view suffix) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string key = "lbtest:";
  if (info != nullptr) key += std::string(info->test_suite_name()) + "." + info->name();
  if (!suffix.empty()) key += ":" + std::string(suffix);
  return key + ":" + random_token().substr(0, 8);
}

namespace {
const Client& raw_client() {
  static const Client client = test_client();
  return client;
}
}  // namespace

Reply raw(std::initializer_list<std::string_view> args) { return raw_client().command(args); }
Reply raw(std::span<const std::string> args) { return raw_client().command(args); }

std::int64_t wall_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

namespace {
MutexOptions with_test_timing(MutexOptions options) {
  options.retry = RetryPolicy::backoff_with_jitter(std::chrono::milliseconds(1), std::chrono::milliseconds(5));
  options.acquire_timeout = std::chrono::seconds(10);
  return options;
}
}  // namespace

MutexOptions faithful_options(LegacyFormat format) {
  MutexOptions options = MutexOptions::jedis_lock_1_0();
  options.legacy.format = format;
  return with_test_timing(options);
}

MutexOptions hardened_options(LegacyFormat format) {
  MutexOptions options = faithful_options(format);
  options.legacy.preset = LegacyPreset::hardened;
  return options;
}

MutexOptions token_options() {
  MutexOptions options;
  options.strategy = StrategyKind::token;
  return with_test_timing(options);
}

MutexOptions one_attempt_options(StrategyKind strategy) {
  MutexOptions options = strategy == StrategyKind::legacy     ? hardened_options()
                         : strategy == StrategyKind::redisson ? MutexOptions::redisson_lock()
                                                              : token_options();
  options.acquire_timeout = std::chrono::milliseconds(0);
  return options;
}

MutexOptions minute_poll_waiter(MutexOptions options) {
  options.wait_mode = WaitMode::notify;
  options.retry = RetryPolicy::fixed_retries(5, std::chrono::seconds(60));
  options.local_queue = false;
  options.acquire_timeout = std::chrono::seconds(50);
  return options;
}

MutexOptions variant_options(std::string_view variant) {
  if (variant == "legacy_faithful") {
    MutexOptions options = MutexOptions::jedis_lock_1_0();
    options.retry = RetryPolicy::jedis_lock_resolution(std::chrono::milliseconds(5));  // jedis-lock's loop, faster
    options.acquire_timeout = std::chrono::milliseconds(0);
    return options;
  }
  return one_attempt_options(variant == "legacy_hardened" ? StrategyKind::legacy
                             : variant.starts_with("redisson") ? StrategyKind::redisson
                                                          : StrategyKind::token);
}

void expect_held_only_by(Mutex& holder, Mutex& rival) {
  EXPECT_FALSE(rival.try_lock()) << "someone else took the lock";
  holder.unlock();
  EXPECT_FALSE(holder.last_error()) << "its holder's release did not find its own value";
  EXPECT_TRUE(rival.try_lock()) << "the lock was not free after its holder's release";
  rival.unlock();
}

void expect_lost_to_a_second_holder(Mutex& first, Mutex& second,
                                    const std::function<std::string()>& value_on_new_master) {
  ASSERT_TRUE(retry_while_unreachable([&] { return second.try_lock(); }));
  EXPECT_TRUE(first.owns_lock());  // two holders
  ASSERT_TRUE(first.fence().has_value());
  ASSERT_TRUE(second.fence().has_value());
  EXPECT_LE(*second.fence(), *first.fence()) << "the promoted replica's counter never saw the first INCR";
  const LockInfo seen = retry_while_unreachable([&] { return first.inspect(); });
  EXPECT_TRUE(seen.exists);
  EXPECT_FALSE(seen.held_by_me);
  first.unlock();
  EXPECT_EQ(first.last_error(), make_error_code(Errc::lease_lost));
  EXPECT_EQ(value_on_new_master(), second.value());
  EXPECT_TRUE(second.inspect().held_by_me);
  second.unlock();
  EXPECT_FALSE(second.last_error());
}

Takeover take_over_after_lease_end(const std::string& key, const MutexOptions& options, const std::string& url,
                                   std::chrono::milliseconds stalled_lease) {
  MutexOptions short_lease = options;
  short_lease.lease = stalled_lease;
  Takeover takeover{Mutex(Client(url), key, short_lease), Mutex(Client(url), key, options)};
  if (!takeover.stalled.try_lock()) throw std::runtime_error("the first holder could not lock a fresh key");
  if (!takeover.next.try_lock_for(std::chrono::seconds(10))) throw std::runtime_error("no takeover after the lease");
  return takeover;
}

// ---- MONITOR ----------------------------------------------------------------------------------

std::vector<std::string> parse_monitor_line(std::string_view line) {
  std::vector<std::string> args;
  const auto bracket = line.find("] ");
  if (bracket == std::string_view::npos) return args;
  std::size_t i = bracket + 2;
  while (i < line.size()) {
    if (line[i] != '"') {
      ++i;
      continue;
    }
    std::string arg;
    for (++i; i < line.size() && line[i] != '"'; ++i) {
      if (line[i] != '\\' || i + 1 >= line.size()) {
        arg.push_back(line[i]);
        continue;
      }
      const char escaped = line[++i];
      switch (escaped) {
        case 'n':
          arg.push_back('\n');
          break;
        case 'r':
          arg.push_back('\r');
          break;
        case 't':
          arg.push_back('\t');
          break;
        case 'x':
          arg.push_back(static_cast<char>(std::stoi(std::string(line.substr(i + 1, 2)), nullptr, 16)));
          i += 2;
          break;
        default:
          arg.push_back(escaped);
      }
    }
    args.push_back(std::move(arg));
    ++i;
  }
  return args;
}

CommandRecorder::CommandRecorder(std::string key, bool containing) : key_(std::move(key)), containing_(containing) {
  const std::string path = test_dir() + "/redis.sock";
  timeval timeout{10, 0};
  monitor_ = redisConnectUnixWithTimeout(path.c_str(), timeout);
  if (monitor_ == nullptr || monitor_->err != 0) throw std::runtime_error("MONITOR connection failed");
  redisSetTimeout(monitor_, timeout);
  auto* reply = static_cast<redisReply*>(redisCommand(monitor_, "MONITOR"));
  if (reply == nullptr) throw std::runtime_error("MONITOR failed");
  freeReplyObject(reply);
  marker_prefix_ = "lockbridge-recorder-" + random_token();
}

CommandRecorder::~CommandRecorder() {
  if (monitor_ != nullptr) redisFree(monitor_);
}

std::vector<std::string> CommandRecorder::next_command() {
  void* raw_reply = nullptr;
  if (redisGetReply(monitor_, &raw_reply) != REDIS_OK || raw_reply == nullptr) {
    throw std::runtime_error("MONITOR stream ended (10 s without a command)");
  }
  auto* reply = static_cast<redisReply*>(raw_reply);
  const std::string line(reply->str, reply->len);
  freeReplyObject(reply);
  return parse_monitor_line(line);
}

bool CommandRecorder::touches(const std::vector<std::string>& args) const {
  for (std::size_t i = 1; i < args.size(); ++i) {
    if (containing_ ? args[i].find(key_) != std::string::npos : args[i] == key_) return true;
  }
  return false;
}

void CommandRecorder::wait_for_marker(const std::string& marker, std::vector<std::vector<std::string>>* keep) {
  raw({"ECHO", marker});
  for (;;) {
    auto args = next_command();
    if (args.size() == 2 && args[0] == "ECHO" && args[1] == marker) return;
    if (keep != nullptr && touches(args)) keep->push_back(std::move(args));
  }
}

void CommandRecorder::wait_for_calls(std::string_view command, std::size_t count) {
  const auto named = [&](const std::string& name) {
    return name.size() == command.size() &&
           std::equal(name.begin(), name.end(), command.begin(),
                      [](char a, char b) { return std::toupper(static_cast<unsigned char>(a)) == b; });
  };
  for (std::size_t seen = 0; seen < count;) {
    const auto args = next_command();
    if (!args.empty() && named(args[0]) && touches(args)) ++seen;
  }
}

void CommandRecorder::start() { wait_for_marker(marker_prefix_ + "-start", nullptr); }

std::vector<std::vector<std::string>> CommandRecorder::stop() {
  std::vector<std::vector<std::string>> commands;
  wait_for_marker(marker_prefix_ + "-stop", &commands);
  return commands;
}

std::ostream& operator<<(std::ostream& out, const CliRun& run) {
  return out << "exit " << run.exit_code << "\n--- stdout\n" << run.output << "--- stderr\n" << run.errors;
}

FILE* start_process(const std::string& command) {
  FILE* process = popen(command.c_str(), "r");
  if (process == nullptr) throw std::runtime_error("cannot start " + command);
  return process;
}

ProcessOutput finish_process(FILE* process) {
  ProcessOutput result;
  char buffer[512];
  while (fgets(buffer, sizeof buffer, process) != nullptr) result.output += buffer;
  result.status = pclose(process);
  return result;
}

std::string in_forked_child(const std::function<std::string()>& body) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    close(fds[0]);
    std::string answer;
    try {
      answer = body();
    } catch (const std::exception& error) {
      answer = std::string("child failed: ") + error.what();
    }
    const char* data = answer.data();
    std::size_t left = answer.size();
    while (left > 0) {
      const ssize_t n = write(fds[1], data, left);
      if (n <= 0) break;
      data += n;
      left -= static_cast<std::size_t>(n);
    }
    _exit(0);
  }
  close(fds[1]);
  std::string answer;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  bool ended = false;
  while (!ended) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(give_up - std::chrono::steady_clock::now());
    pollfd readable{fds[0], POLLIN, 0};
    if (left.count() <= 0 || poll(&readable, 1, static_cast<int>(left.count())) <= 0) break;
    char buffer[512];
    const ssize_t n = read(fds[0], buffer, sizeof buffer);
    if (n <= 0) {
      ended = n == 0;
      if (n < 0 && errno == EINTR) continue;
      break;
    }
    answer.append(buffer, static_cast<std::size_t>(n));
  }
  close(fds[0]);
  if (!ended) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!ended) return "child failed: no answer within 20 s";
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return "child failed: died";
  return answer;
}

namespace {
// Exit code, stdout and its JSON lines, and the stderr the shell wrote to `stderr_file` (removed).
CliRun cli_result(int status, std::string output, const std::filesystem::path& stderr_file) {
  CliRun run;
  run.output = std::move(output);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  {
    std::ifstream errors(stderr_file);
    run.errors.assign(std::istreambuf_iterator<char>(errors), std::istreambuf_iterator<char>());
  }
  std::filesystem::remove(stderr_file);
  std::istringstream lines(run.output);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line.front() == '{') run.lines.push_back(nlohmann::json::parse(line));
  }
  return run;
}

// A file name: a parametrized test's key has a '/' in it.
std::filesystem::path stderr_path() {
  std::string name = "cli-stderr-" + unique_key();
  std::replace(name.begin(), name.end(), '/', '_');
  return std::filesystem::path(test_dir()) / name;
}
}  // namespace

CliRun run_cli(const std::string& args, bool with_url, const std::string& env) {
  const std::filesystem::path stderr_file = stderr_path();
  const std::string command = "env " + std::string(with_url ? "" : "-u LOCKBRIDGE_URL ") + env + " " + LOCKBRIDGE_CLI +
                              " " + args + (with_url ? cli_server_args() : "") + " 2>'" + stderr_file.string() + "'";
  ProcessOutput finished = finish_process(start_process(command));
  return cli_result(finished.status, std::move(finished.output), stderr_file);
}

void expect_incomplete_summary(const CliRun& run, int exit_code, const std::string& count, std::int64_t done) {
  EXPECT_EQ(run.exit_code, exit_code) << run;
  ASSERT_FALSE(run.lines.empty()) << run;
  EXPECT_EQ(run.lines.back()["incomplete"], true) << run;
  EXPECT_EQ(run.lines.back()[count], done) << run;
}

// The shell prints its pid and then runs the CLI in its place (exec), so that pid is the CLI's.
BackgroundCli::BackgroundCli(const std::string& args, bool with_url, const std::string& program)
    : stderr_file_(stderr_path().string()) {
  process_ = start_process("echo $$; exec " + program + " " + args +
                           (with_url ? cli_server_args() : std::string()) + " 2>'" + stderr_file_ + "'");
  const auto pid_line = next_line();
  if (!pid_line) throw std::runtime_error("the CLI did not start: " + args);
  pid_ = static_cast<pid_t>(std::stol(*pid_line));
  output_ = unread_;  // what came after the pid line
}

BackgroundCli::~BackgroundCli() {
  if (process_ == nullptr) return;
  ::kill(pid_, SIGKILL);
  pclose(process_);
  std::filesystem::remove(stderr_file_);
}

std::string BackgroundCli::errors() const {
  std::ifstream in(stderr_file_);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

bool BackgroundCli::read_more(std::chrono::steady_clock::time_point give_up) {
  const int fd = fileno(process_);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(give_up - std::chrono::steady_clock::now());
    if (left <= std::chrono::milliseconds::zero()) return false;
    pollfd ready{fd, POLLIN, 0};
    const int n = poll(&ready, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (n < 0 && errno != EINTR) return false;
    if (n <= 0) continue;
    char buffer[512];
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got <= 0) return false;  // its end
    unread_.append(buffer, static_cast<std::size_t>(got));
    output_.append(buffer, static_cast<std::size_t>(got));
    return true;
  }
}

std::optional<std::string> BackgroundCli::next_line(std::chrono::milliseconds bound) {
  const auto give_up = std::chrono::steady_clock::now() + bound;
  for (;;) {
    const std::size_t end = unread_.find('\n');
    if (end != std::string::npos) {
      std::string line = unread_.substr(0, end);
      unread_.erase(0, end + 1);
      return line;
    }
    if (!read_more(give_up)) return std::nullopt;
  }
}

CliRun BackgroundCli::finish(std::chrono::milliseconds bound) {
  const auto give_up = std::chrono::steady_clock::now() + bound;
  while (read_more(give_up)) {
  }
  if (std::chrono::steady_clock::now() >= give_up) ::kill(pid_, SIGKILL);
  while (read_more(std::chrono::steady_clock::now() + std::chrono::seconds(10))) {
  }
  const int status = pclose(process_);
  process_ = nullptr;
  return cli_result(status, std::move(output_), stderr_file_);
}

}  // namespace lockbridge::testing
