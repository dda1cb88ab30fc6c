#include "topology.hpp"

#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "embedded_server.hpp"
#include "redis_test_support.hpp"
#include "strategies/companion_keys.hpp"

namespace lockbridge::testing {

bool topology_tls() { return over_tls(); }

ClientOptions topology_client() {
  ClientOptions options;
  if (topology_tls()) options.tls = test_tls();
  return options;
}

std::string cli_topology_args(const std::string& url) {
  std::string args = " --url '" + url + "'";
  if (topology_tls()) args += " --cacert '" + tls_file("ca.pem") + "'";
  return args;
}

ClientOptions quick_failing_client() {
  ClientOptions options = topology_client();
  options.connect_timeout = std::chrono::milliseconds(500);
  options.command_timeout = std::chrono::milliseconds(500);
  return options;
}

namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

constexpr int kPortAttempts = 20;
constexpr milliseconds kReadyTimeout{5000};
constexpr milliseconds kPollInterval{10};
constexpr milliseconds kTopologyTimeout{20000};

// The TLS settings of a topology's servers, name and value: the fixture's certificates, and TLS
// for what servers say to each other. Their own connections to each other present the client
// certificate: the other end (tls-auth-clients optional) checks any certificate it is shown, and
// the server's is for servers only (extendedKeyUsage serverAuth).
std::vector<std::pair<std::string, std::string>> topology_tls_settings() {
  return {{"tls-cert-file", tls_file("server.pem")},
          {"tls-key-file", tls_file("server.key")},
          {"tls-client-cert-file", tls_file("client.pem")},
          {"tls-client-key-file", tls_file("client.key")},
          {"tls-ca-cert-file", tls_file("ca.pem")},
          {"tls-auth-clients", "optional"},
          {"tls-replication", "yes"}};
}

struct ContextDeleter {
  void operator()(redisContext* context) const { redisFree(context); }
};
struct ReplyDeleter {
  void operator()(redisReply* reply) const { freeReplyObject(reply); }
};
using ContextPtr = std::unique_ptr<redisContext, ContextDeleter>;
using ReplyPtr = std::unique_ptr<redisReply, ReplyDeleter>;

timeval to_timeval(milliseconds timeout) {
  return timeval{static_cast<time_t>(timeout.count() / 1000), static_cast<suseconds_t>(timeout.count() % 1000 * 1000)};
}

// One command on a fresh connection; throws std::runtime_error when the connection fails.
ReplyPtr call(int port, const std::vector<std::string>& args, milliseconds timeout) {
  const timeval tv = to_timeval(timeout);
  ContextPtr context(redisConnectWithTimeout("127.0.0.1", port, tv));
  if (!context) throw std::runtime_error("cannot allocate a hiredis context");
  if (context->err != 0) {
    throw std::runtime_error("127.0.0.1:" + std::to_string(port) + " unreachable: " + context->errstr);
  }
  redisSetTimeout(context.get(), tv);
  std::vector<const char*> argv;
  std::vector<size_t> lengths;
  for (const auto& arg : args) {
    argv.push_back(arg.data());
    lengths.push_back(arg.size());
  }
  ReplyPtr reply(static_cast<redisReply*>(
      redisCommandArgv(context.get(), static_cast<int>(argv.size()), argv.data(), lengths.data())));
  if (!reply) {
    throw std::runtime_error("127.0.0.1:" + std::to_string(port) + " " + (args.empty() ? "" : args[0]) +
                             " failed: " + context->errstr);
  }
  return reply;
}

std::string flatten(const redisReply& reply) {
  switch (reply.type) {
    case REDIS_REPLY_INTEGER:
      return std::to_string(reply.integer);
    case REDIS_REPLY_NIL:
      return "(nil)";
    case REDIS_REPLY_ARRAY: {
      std::string joined;
      for (size_t i = 0; i < reply.elements; ++i) {
        if (i > 0) joined += ' ';
        joined += flatten(*reply.element[i]);
      }
      return joined;
    }
    default:
      return std::string(reply.str, reply.len);  // string, status, error
  }
}

std::string flatten(const Reply& reply) {
  switch (reply.kind) {
    case Reply::Kind::integer:
      return std::to_string(reply.integer);
    case Reply::Kind::nil:
      return "(nil)";
    case Reply::Kind::array: {
      std::string joined;
      for (size_t i = 0; i < reply.elements.size(); ++i) joined += (i > 0 ? " " : "") + flatten(reply.elements[i]);
      return joined;
    }
    default:
      return reply.str;  // string, status, error
  }
}

// call() for a TLS-only server, through lockbridge's own TLS (hiredis 0.14 has none): the
// fixture's client certificate is presented, and the server's is not verified (a test may give it
// an expired one; the answer's process id tells whose server it is).
Reply call_over_tls(int port, const std::vector<std::string>& args, milliseconds timeout) {
  ClientOptions options;
  options.connect_timeout = timeout;
  options.command_timeout = timeout;
  options.tls.cert_file = tls_file("client.pem");
  options.tls.key_file = tls_file("client.key");
  options.tls.verify = false;
  try {
    const std::vector<std::vector<std::string>> one{args};
    return Client("rediss://127.0.0.1:" + std::to_string(port), options).pipeline(one).at(0);
  } catch (const Error& error) {
    throw std::runtime_error(error.what());
  }
}

std::string make_temp_dir() {
  const char* base = std::getenv("LOCKBRIDGE_TEST_DIR");
  std::filesystem::path parent = (base != nullptr && *base != '\0') ? base : "/tmp";
  std::filesystem::create_directories(parent);
  std::string pattern = (parent / "lbtopo-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr)
    throw std::runtime_error("cannot create a temporary directory in " + parent.string());
  return pattern;
}

int random_port() {
  static thread_local std::mt19937 random(std::random_device{}());
  return std::uniform_int_distribution<int>(20000, 50000)(random);
}

// A random port no topology of this suite run has had before: claimed by creating
// $LOCKBRIDGE_TEST_DIR/ports/<port> (O_EXCL, so tests in other processes see the claim; the
// fixture's start clears them). A port is not used twice because a test's Sentinels keep watching
// the address of a master the test killed: had another test's server come up there, they would
// have taken it for that master come back and made it a replica of theirs.
int unused_port() {
  const char* base = std::getenv("LOCKBRIDGE_TEST_DIR");
  if (base == nullptr || *base == '\0') return random_port();
  const std::filesystem::path claims = std::filesystem::path(base) / "ports";
  std::filesystem::create_directories(claims);
  for (int attempt = 0; attempt < 1000; ++attempt) {
    const int port = random_port();
    const int fd = ::open((claims / std::to_string(port)).c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
    if (fd >= 0) {
      ::close(fd);
      return port;
    }
    if (errno != EEXIST) throw std::runtime_error("cannot claim a port in " + claims.string());
  }
  throw std::runtime_error("no unclaimed port left in " + claims.string());
}

// "key:value" lines of an INFO reply (or of CLUSTER INFO) as a map.
std::map<std::string, std::string> info_fields(const std::string& info) {
  std::map<std::string, std::string> fields;
  std::istringstream lines(info);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto colon = line.find(':');
    if (colon != std::string::npos) fields[line.substr(0, colon)] = line.substr(colon + 1);
  }
  return fields;
}

// A SENTINEL replicas/sentinels entry (a flat field/value array) as a map.
std::map<std::string, std::string> field_map(const redisReply& entry) {
  std::map<std::string, std::string> fields;
  if (entry.type != REDIS_REPLY_ARRAY) return fields;
  for (size_t i = 0; i + 1 < entry.elements; i += 2)
    fields[flatten(*entry.element[i])] = flatten(*entry.element[i + 1]);
  return fields;
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::istringstream in(text);
  for (std::string part; std::getline(in, part, separator);) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

}  // namespace

void wait_until(const std::function<bool()>& condition, milliseconds timeout, const std::string& what,
                const std::function<std::string()>& details) {
  const auto give_up = steady_clock::now() + timeout;
  std::string last_error;
  for (;;) {
    try {
      if (condition()) return;
    } catch (const std::runtime_error& error) {
      last_error = error.what();
    }
    if (steady_clock::now() >= give_up) {
      std::string message = what + ": not within " + std::to_string(timeout.count()) + " ms";
      if (!last_error.empty()) message += " (last error: " + last_error + ")";
      if (details) message += "\n" + details();
      throw std::runtime_error(message);
    }
    std::this_thread::sleep_for(kPollInterval);
  }
}

// ---- ServerProcess ----------------------------------------------------------------------------

ServerProcess::ServerProcess(Kind kind, std::string dir) : kind_(kind), dir_(std::move(dir)) {}

ServerProcess::~ServerProcess() {
  kill();
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

std::unique_ptr<ServerProcess> ServerProcess::start_server(std::vector<std::string> extra) {
  std::unique_ptr<ServerProcess> server(new ServerProcess(Kind::server, make_temp_dir()));
  server->extra_ = std::move(extra);
  server->start_on_free_port();
  return server;
}

std::unique_ptr<ServerProcess> ServerProcess::start_tls_server(std::vector<std::string> tls) {
  return start_with_tls_port(std::move(tls), /*tls_only=*/true);
}

std::unique_ptr<ServerProcess> ServerProcess::start_with_tls_port(std::vector<std::string> extra, bool tls_only) {
  std::unique_ptr<ServerProcess> server(new ServerProcess(Kind::server, make_temp_dir()));
  server->extra_ = std::move(extra);
  server->with_tls_port_ = true;
  server->tls_only_ = tls_only;
  server->start_on_free_port();
  return server;
}

std::unique_ptr<ServerProcess> ServerProcess::start_topology_server(std::vector<std::string> extra) {
  if (!topology_tls()) return start_server(std::move(extra));
  if (std::find(extra.begin(), extra.end(), "--cluster-enabled") != extra.end()) {
    extra.insert(extra.end(), {"--tls-cluster", "yes"});  // the bus, and MIGRATE between nodes
  }
  for (const auto& [name, value] : topology_tls_settings()) extra.insert(extra.end(), {"--" + name, value});
  return start_with_tls_port(std::move(extra), /*tls_only=*/false);  // the plain port stays for the tests' checks
}

std::unique_ptr<ServerProcess> ServerProcess::start_sentinel(const std::string& master_name, int master_port,
                                                             int quorum, milliseconds down_after,
                                                             milliseconds failover_timeout, bool tls) {
  std::unique_ptr<ServerProcess> sentinel(new ServerProcess(Kind::sentinel, make_temp_dir()));
  sentinel->with_tls_port_ = tls;
  const std::string& dir = sentinel->dir_;
  // Sentinel rewrites this file (its id, the replicas and sentinels it found), hence one
  // directory per sentinel. Failover speed comes from the two timeouts: the election timeout is
  // min(10 s, failover-timeout), and a failed attempt is retried after 2 * failover-timeout.
  sentinel->sentinel_body_ =
      "bind 127.0.0.1\n"
      "dir " +
      dir +
      "\n"
      "logfile " +
      dir +
      "/log\n"
      "sentinel resolve-hostnames no\n"
      "sentinel announce-hostnames no\n"
      "sentinel monitor " +
      master_name + " 127.0.0.1 " + std::to_string(master_port) + " " + std::to_string(quorum) +
      "\n"
      "sentinel down-after-milliseconds " +
      master_name + " " + std::to_string(down_after.count()) +
      "\n"
      "sentinel failover-timeout " +
      master_name + " " + std::to_string(failover_timeout.count()) +
      "\n"
      "sentinel parallel-syncs " +
      master_name + " 1\n";
  if (tls) {
    // tls-replication: TLS to the servers it watches, and the port it announces to other Sentinels.
    for (const auto& [name, value] : topology_tls_settings()) sentinel->sentinel_body_ += name + " " + value + "\n";
  }
  sentinel->start_on_free_port();
  return sentinel;
}

std::string ServerProcess::address() const { return "127.0.0.1:" + std::to_string(port_); }

std::string ServerProcess::client_address() const { return "127.0.0.1:" + std::to_string(client_port()); }

std::vector<std::string> ServerProcess::arguments() const {
  if (kind_ == Kind::sentinel) return {"redis-sentinel", dir_ + "/sentinel.conf"};
  const std::string plain_port = tls_only_ ? "0" : std::to_string(port_);  // 0: no plain port
  std::vector<std::string> args{"redis-server", "--port",    plain_port,     "--bind",      "127.0.0.1",
                                "--save",       "",          "--appendonly", "no",          "--dir",
                                dir_,           "--logfile", dir_ + "/log",  "--daemonize", "no"};
  if (with_tls_port_) args.insert(args.end(), {"--tls-port", std::to_string(tls_port_)});
  args.insert(args.end(), extra_.begin(), extra_.end());
  return args;
}

void ServerProcess::start_on_free_port() {
  std::string failure;
  for (int attempt = 0; attempt < kPortAttempts; ++attempt) {
    port_ = unused_port();
    if (tls_only_) {
      tls_port_ = port_;
    } else if (with_tls_port_) {
      do tls_port_ = unused_port();  // distinct already, unless nothing is claimed (no fixture)
      while (tls_port_ == port_);
    }
    if (kind_ == Kind::sentinel) {
      // Fresh for each port: a sentinel that failed to bind may have rewritten it already.
      std::ofstream conf(dir_ + "/sentinel.conf", std::ios::trunc);
      conf << "port " << port_ << "\n";
      if (with_tls_port_) conf << "tls-port " << tls_port_ << "\n";
      conf << sentinel_body_;
      if (!conf.flush()) throw std::runtime_error("cannot write " + dir_ + "/sentinel.conf");
    }
    if (launch_and_wait(&failure)) return;
    // Only a port someone else holds is worth another try; any other failure would repeat.
    const std::string log = log_tail(50);
    if (log.find("Address already in use") == std::string::npos &&
        failure.find("did not answer") == std::string::npos) {
      break;
    }
    std::error_code ignored;
    std::filesystem::remove(dir_ + "/log", ignored);
    std::filesystem::remove(dir_ + "/stdout", ignored);
  }
  throw std::runtime_error(arguments()[0] + " did not come up (" + failure + "); last log lines:\n" + log_tail());
}

bool ServerProcess::launch_and_wait(std::string* failure) {
  const std::string program = tools::find_on_path(kind_ == Kind::sentinel ? "redis-sentinel" : "redis-server");
  if (program.empty()) {
    throw std::runtime_error(std::string(kind_ == Kind::sentinel ? "redis-sentinel" : "redis-server") +
                             " is not installed (run scripts/bootstrap.sh)");
  }
  // Everything the child needs is prepared before fork: after it, only async-signal-safe calls.
  std::vector<std::string> args = arguments();
  std::vector<char*> argv;
  for (auto& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const std::string output = dir_ + "/stdout";  // what it prints before its logfile is open
  const pid_t parent = getpid();

  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("cannot fork to start " + args[0]);
  if (pid == 0) {
    // Die with the test (even one killed by a CTest timeout), not with a mere SIGTERM grace.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    const int null_fd = open("/dev/null", O_RDONLY);
    const int out_fd = open(output.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (null_fd >= 0) dup2(null_fd, STDIN_FILENO);
    if (out_fd >= 0) {
      dup2(out_fd, STDOUT_FILENO);
      dup2(out_fd, STDERR_FILENO);
    }
    // Other tests' sockets and pipes (a popen'd CLI's stdout) must not stay open in the server.
    close_range(3, UINT_MAX, 0);
    // argv[0] says which mode: Debian's redis-sentinel is the server binary under another name.
    execv(program.c_str(), argv.data());
    _exit(127);
  }
  pid_ = pid;

  const std::string our_process_id = "process_id:" + std::to_string(pid);
  const auto give_up = steady_clock::now() + kReadyTimeout;
  for (;;) {
    if (!running()) {
      *failure = args[0] + " exited on port " + std::to_string(port_);
      return false;
    }
    // The answer must come from our process: a port taken by another server would answer too.
    try {
      if (command({"INFO", "server"}).find(our_process_id) != std::string::npos) return true;
    } catch (const std::runtime_error&) {
    }
    if (steady_clock::now() >= give_up) {
      *failure = args[0] + " did not answer on port " + std::to_string(port_) + " within " +
                 std::to_string(kReadyTimeout.count()) + " ms";
      kill();
      return false;
    }
    std::this_thread::sleep_for(kPollInterval);
  }
}

bool ServerProcess::running() const {
  if (pid_ <= 0) return false;
  int status = 0;
  const pid_t done = waitpid(pid_, &status, WNOHANG);
  if (done == 0) return true;
  pid_ = -1;  // reaped (or not our child any more)
  return false;
}

void ServerProcess::kill() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  while (waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
}

void ServerProcess::pause() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGSTOP);
  // The signal is delivered asynchronously: wait for the stop, so the caller knows it runs no more.
  int status = 0;
  pid_t done = -1;
  while ((done = waitpid(pid_, &status, WUNTRACED)) < 0 && errno == EINTR) {
  }
  if (done != pid_ || !WIFSTOPPED(status)) pid_ = -1;  // it had exited (and is reaped now)
}

void ServerProcess::resume() {
  if (pid_ > 0) ::kill(pid_, SIGCONT);
}

void ServerProcess::restart() {
  kill();
  std::string failure;
  if (!launch_and_wait(&failure)) {
    throw std::runtime_error("restart failed (" + failure + "); last log lines:\n" + log_tail());
  }
}

std::string ServerProcess::command(std::initializer_list<std::string_view> args) const {
  return command(std::vector<std::string>(args.begin(), args.end()));
}

std::string ServerProcess::command(const std::vector<std::string>& args, milliseconds timeout) const {
  if (tls_only_) return flatten(call_over_tls(port_, args, timeout));
  return flatten(*call(port_, args, timeout));
}

std::vector<std::string> ServerProcess::command_list(const std::vector<std::string>& args) const {
  if (tls_only_) {
    const Reply reply = call_over_tls(port_, args, milliseconds(2000));
    if (reply.kind == Reply::Kind::error) throw std::runtime_error(address() + ": " + reply.str);
    std::vector<std::string> elements;
    for (const Reply& element : reply.elements) elements.push_back(flatten(element));
    return elements;
  }
  const ReplyPtr reply = call(port_, args, milliseconds(2000));
  if (reply->type == REDIS_REPLY_ERROR) throw std::runtime_error(address() + ": " + flatten(*reply));
  std::vector<std::string> elements;
  for (size_t i = 0; i < reply->elements; ++i) elements.push_back(flatten(*reply->element[i]));
  return elements;
}

std::string ServerProcess::log_tail(int lines) const {
  std::deque<std::string> tail;
  for (const char* name : {"/stdout", "/log"}) {
    std::ifstream in(dir_ + name);
    for (std::string line; std::getline(in, line);) {
      tail.push_back(std::move(line));
      if (static_cast<int>(tail.size()) > lines) tail.pop_front();
    }
  }
  std::string text = "[" + address() + " " + dir_ + "]";
  for (const auto& line : tail) text += "\n  " + line;
  return text;
}

void cut_off_replica(ServerProcess& master, ServerProcess& replica) {
  replica.pause();
  const std::string killed = master.command({"CLIENT", "KILL", "TYPE", "replica"});
  wait_until(
      [&] {
        return info_fields(master.command({"INFO", "replication"}))["connected_slaves"] == "0";
      },
      kTopologyTimeout, master.address() + " dropping its replica links (CLIENT KILL answered " + killed + ")",
      [&] { return master.log_tail(); });
}

int connections_on_port(const ServerProcess& server, int port) {
  const std::string address = "laddr=127.0.0.1:" + std::to_string(port) + " ";
  std::istringstream lines(server.command({"CLIENT", "LIST"}));
  int count = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.find(address) != std::string::npos && line.find(" cmd=client|list ") == std::string::npos) ++count;
  }
  return count;
}

bool has_one_shard_subscriber(const ServerProcess& node, const std::string& channel) {
  std::istringstream names(node.command({"PUBSUB", "SHARDCHANNELS", detail::prefix_pattern(channel)}));
  int subscribers = 0;
  for (std::string name; names >> name;) {
    if (name != channel && !name.starts_with(channel + ":")) continue;
    const std::string counted = node.command({"PUBSUB", "SHARDNUMSUB", name});
    subscribers += std::stoi(counted.substr(counted.rfind(' ') + 1));
  }
  return subscribers == 1;
}

// ---- SentinelTopology -------------------------------------------------------------------------

SentinelTopology::SentinelTopology(milliseconds down_after) {
  static std::atomic<int> topologies{0};
  master_name = "lbmaster-" + std::to_string(::getpid()) + "-" + std::to_string(++topologies);
  // A master waits repl-diskless-sync-delay (5 s) for more replicas before a full sync; the
  // replica becomes a master on failover, so neither waits.
  master = ServerProcess::start_topology_server({"--repl-diskless-sync-delay", "0"});
  replica = ServerProcess::start_topology_server(
      {"--repl-diskless-sync-delay", "0", "--replicaof", "127.0.0.1", std::to_string(master->client_port())});
  // A replica announces the port it replicates on: its TLS port under tls-replication.
  const std::string replica_entry = "port=" + std::to_string(replica->client_port()) + ",state=online";
  wait_until(
      [&] {
        return master->command({"INFO", "replication"}).find(replica_entry) != std::string::npos;
      },
      kTopologyTimeout, "replica " + replica->address() + " in sync with " + master->address(),
      [&] { return master->log_tail() + "\n" + replica->log_tail(); });

  for (int i = 0; i < 3; ++i)
    sentinels.push_back(ServerProcess::start_sentinel(master_name, master->client_port(), 2, down_after,
                                                      milliseconds(3000), topology_tls()));

  const std::string master_address = "127.0.0.1 " + std::to_string(master->client_port());
  const std::string replica_port = std::to_string(replica->client_port());
  for (const auto& sentinel : sentinels) {
    wait_until(
        [&] {
          if (sentinel->command({"SENTINEL", "get-master-addr-by-name", master_name}) != master_address) return false;
          if (sentinel->command_list({"SENTINEL", "sentinels", master_name}).size() != sentinels.size() - 1)
            return false;
          // The replica must be usable for a failover: linked, its INFO read.
          const ReplyPtr replicas = call(sentinel->port(), {"SENTINEL", "replicas", master_name}, milliseconds(2000));
          for (size_t i = 0; i < replicas->elements; ++i) {
            auto fields = field_map(*replicas->element[i]);
            if (fields["port"] == replica_port)
              return fields["flags"] == "slave" && fields["master-link-status"] == "ok";
          }
          return false;
        },
        kTopologyTimeout, "sentinel " + sentinel->address() + " knowing master, replica and the other sentinels",
        [&] { return sentinel->log_tail(); });
  }
}

std::string SentinelTopology::url() const {
  std::string url = topology_tls() ? "rediss-sentinel://" : "redis-sentinel://";
  for (size_t i = 0; i < sentinels.size(); ++i) url += (i > 0 ? "," : "") + sentinels[i]->client_address();
  return url + "/" + master_name;
}

int SentinelTopology::current_master_port() const {
  std::string errors;
  for (const auto& sentinel : sentinels) {
    if (!sentinel->running()) continue;
    try {
      const auto parts = split(sentinel->command({"SENTINEL", "get-master-addr-by-name", master_name}), ' ');
      if (parts.size() == 2) return std::stoi(parts[1]);
      errors += " " + sentinel->address() + " does not know " + master_name + ";";
    } catch (const std::runtime_error& error) {
      errors += std::string(" ") + error.what() + ";";
    }
  }
  throw std::runtime_error("no sentinel names the master:" + errors);
}

ServerProcess* SentinelTopology::server_on(int port) const {
  for (ServerProcess* server : {master.get(), replica.get()}) {
    if (server != nullptr && server->client_port() == port) return server;
  }
  return nullptr;
}

int SentinelTopology::wait_for_failover(int old_port, milliseconds timeout) const {
  int new_port = 0;
  wait_until(
      [&] {
        new_port = current_master_port();
        if (new_port == old_port) return false;
        const ServerProcess* promoted = server_on(new_port);
        if (promoted == nullptr)
          throw std::runtime_error("sentinels name an unknown master port " + std::to_string(new_port));
        if (promoted->command({"ROLE"}).rfind("master", 0) != 0) return false;
        // Settled: every Sentinel names it and sees it up. A Sentinel that switched late has fresh
        // links to it, and one that gets no PONG within down-after would fail over again.
        for (const auto& sentinel : sentinels) {
          if (!sentinel->running()) continue;
          auto fields = field_map(*call(sentinel->port(), {"SENTINEL", "master", master_name}, milliseconds(2000)));
          if (fields["port"] != std::to_string(new_port) || fields["flags"] != "master") return false;
        }
        return true;
      },
      timeout, "failover away from port " + std::to_string(old_port),
      [&] {
        std::string logs;
        for (const auto& sentinel : sentinels) logs += sentinel->log_tail(15) + "\n";
        return logs;
      });
  return new_port;
}

// ---- IndependentMasters -----------------------------------------------------------------------

IndependentMasters::IndependentMasters(int n) {
  for (int i = 0; i < n; ++i) masters.push_back(ServerProcess::start_server());
}

std::string IndependentMasters::url() const {
  std::string url = "redlock://";
  for (size_t i = 0; i < masters.size(); ++i) url += (i > 0 ? "," : "") + masters[i]->address();
  return url;
}

// ---- ClusterTopology --------------------------------------------------------------------------

namespace {

// One node's view from CLUSTER NODES, without what differs by observer ("myself", ping times,
// link state): "id port role master-id slots...", one line per node, sorted. Also says which
// slots the observing node claims itself.
struct ClusterView {
  std::string canonical;
  std::vector<std::pair<int, int>> own_slots;  // inclusive ranges
  bool healthy = true;                         // no node in handshake or failing
};

ClusterView parse_cluster_nodes(const std::string& text) {
  ClusterView view;
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const auto fields = split(line, ' ');
    if (fields.size() < 8) continue;
    const std::string& flags = fields[2];
    if (flags.find("handshake") != std::string::npos || flags.find("fail") != std::string::npos ||
        flags.find("noaddr") != std::string::npos) {
      view.healthy = false;
    }
    const bool myself = flags.find("myself") != std::string::npos;
    const std::string port = fields[1].substr(fields[1].find(':') + 1, fields[1].find('@') - fields[1].find(':') - 1);
    std::string canonical = fields[0] + " " + port + " " +
                            (flags.find("master") != std::string::npos ? "master" : "replica") + " " + fields[3];
    for (size_t i = 8; i < fields.size(); ++i) {
      if (fields[i].front() == '[') continue;  // a slot being imported or migrated: not owned
      canonical += " " + fields[i];
      if (myself) {
        const auto dash = fields[i].find('-');
        const int first = std::stoi(fields[i].substr(0, dash));
        const int last = dash == std::string::npos ? first : std::stoi(fields[i].substr(dash + 1));
        view.own_slots.emplace_back(first, last);
      }
    }
    lines.push_back(std::move(canonical));
  }
  std::sort(lines.begin(), lines.end());
  for (const auto& line : lines) view.canonical += line + "\n";
  return view;
}

}  // namespace

ClusterTopology::ClusterTopology(int masters, int replicas_per_master) {
  const int count = masters * (1 + replicas_per_master);
  for (int i = 0; i < count; ++i) {
    // The bus port is port + 10000 (at most 60000): a bind failure there is retried like any other.
    // Under TLS the bus port is the TLS port + 10000 (tls-cluster), still at most 60000.
    nodes.push_back(
        ServerProcess::start_topology_server({"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                                              "--cluster-node-timeout", "1000", "--repl-diskless-sync-delay", "0"}));
    node_ids.push_back(nodes.back()->command({"CLUSTER", "MYID"}));
  }
  // Under TLS redis-cli must meet the nodes at their TLS ports: it derives each bus port from the
  // port it was given.
  std::string command = "timeout 60 redis-cli";
  if (topology_tls()) {
    command += " --tls --cacert '" + tls_file("ca.pem") + "' --cert '" + tls_file("client.pem") + "' --key '" +
               tls_file("client.key") + "'";
  }
  command += " --cluster create";
  for (const auto& node : nodes) command += " " + node->client_address();
  command += " --cluster-replicas " + std::to_string(replicas_per_master) + " --cluster-yes 2>&1";
  const ProcessOutput created = finish_process(start_process(command));
  if (!WIFEXITED(created.status) || WEXITSTATUS(created.status) != 0) {
    throw std::runtime_error(command + " failed (status " + std::to_string(created.status) + "):\n" + created.output);
  }
  wait_until_consistent();
  // A replica that has not synced yet could not be promoted: a failover test needs them linked.
  for (const auto& node : nodes) {
    wait_until(
        [&] {
          auto fields = info_fields(node->command({"INFO", "replication"}));
          return fields["role"] == "master" || fields["master_link_status"] == "up";
        },
        kTopologyTimeout, "cluster replica " + node->address() + " in sync", [&] { return node->log_tail(); });
  }
}

std::string ClusterTopology::url() const {
  std::string url = topology_tls() ? "rediss-cluster://" : "redis-cluster://";
  for (size_t i = 0; i < nodes.size(); ++i) url += (i > 0 ? "," : "") + nodes[i]->client_address();
  return url;
}

void ClusterTopology::wait_until_consistent(milliseconds timeout) const {
  std::string last_views;
  wait_until(
      [&] {
        last_views.clear();
        std::string agreed;
        bool consistent = true;
        for (const auto& node : nodes) {
          if (!node->running()) continue;
          const std::string state = info_fields(node->command({"CLUSTER", "INFO"}))["cluster_state"];
          const ClusterView view = parse_cluster_nodes(node->command({"CLUSTER", "NODES"}));
          last_views += node->address() + " cluster_state:" + state + "\n" + view.canonical;
          if (state != "ok" || !view.healthy) consistent = false;
          if (agreed.empty()) agreed = view.canonical;
          if (view.canonical != agreed) consistent = false;
        }
        return consistent && !agreed.empty();
      },
      timeout, "cluster nodes agreeing on a healthy slot map", [&] { return "last views:\n" + last_views; });
}

int ClusterTopology::owner_of_slot(int slot) const {
  std::vector<int> owners;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!nodes[i]->running()) continue;
    const ClusterView view = parse_cluster_nodes(nodes[i]->command({"CLUSTER", "NODES"}));
    for (const auto& [first, last] : view.own_slots) {
      if (slot >= first && slot <= last) owners.push_back(static_cast<int>(i));
    }
  }
  if (owners.size() != 1) {
    throw std::runtime_error("slot " + std::to_string(slot) + " is claimed by " + std::to_string(owners.size()) +
                             " nodes");
  }
  return owners.front();
}

int ClusterTopology::wait_for_new_owner(int slot, int old_owner, milliseconds timeout) const {
  int owner = old_owner;
  wait_until(
      [&] {
        owner = owner_of_slot(slot);  // throws while no running node claims it: "not yet"
        return owner != old_owner;
      },
      timeout, "a new owner of slot " + std::to_string(slot),
      [&] {
        std::string logs;
        for (const auto& node : nodes) {
          if (node->running()) logs += node->log_tail(10) + "\n";
        }
        return logs;
      });
  return owner;
}

int ClusterTopology::slot_of(std::string_view key) const {
  for (const auto& node : nodes) {
    if (node->running()) return std::stoi(node->command({"CLUSTER", "KEYSLOT", key}));
  }
  throw std::runtime_error("no cluster node is running");
}

int ClusterTopology::replica_of(int master_index) const {
  const std::string master_port = std::to_string(nodes.at(master_index)->client_port());
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!nodes[i]->running()) continue;
    // "slave 127.0.0.1 <master port> connected <offset>" (its TLS port under tls-replication)
    const std::vector<std::string> role = nodes[i]->command_list({"ROLE"});
    if (role.size() >= 3 && role[0] == "slave" && role[2] == master_port) return static_cast<int>(i);
  }
  throw std::runtime_error("no running node replicates " + nodes[master_index]->address());
}

void ClusterTopology::move_slot(int slot, int to_index) {
  const int from_index = owner_of_slot(slot);
  if (from_index == to_index) return;
  ServerProcess& source = *nodes.at(from_index);
  ServerProcess& destination = *nodes.at(to_index);
  const std::string slot_text = std::to_string(slot);
  const auto expect_ok = [&](const ServerProcess& node, const std::vector<std::string>& args) {
    const std::string reply = node.command(args);
    if (reply != "OK")
      throw std::runtime_error(node.address() + " answered " + reply + " to " + args[0] + " " + args[1]);
  };

  expect_ok(destination, {"CLUSTER", "SETSLOT", slot_text, "IMPORTING", node_ids[from_index]});
  expect_ok(source, {"CLUSTER", "SETSLOT", slot_text, "MIGRATING", node_ids[to_index]});
  for (;;) {
    std::vector<std::string> keys = source.command_list({"CLUSTER", "GETKEYSINSLOT", slot_text, "10"});
    if (keys.empty()) break;
    // Under tls-cluster a node MIGRATEs over TLS: to the destination's TLS port.
    std::vector<std::string> migrate{"MIGRATE", "127.0.0.1", std::to_string(destination.client_port()), "", "0",
                                     "5000",    "KEYS"};
    migrate.insert(migrate.end(), keys.begin(), keys.end());
    const std::string reply = source.command(migrate, milliseconds(10000));
    if (reply != "OK" && reply != "NOKEY") throw std::runtime_error(source.address() + " MIGRATE answered " + reply);
  }
  // The destination first: it bumps its config epoch, so its claim wins everywhere; then the
  // source, which stops answering ASK and answers MOVED; then every other master, so none lags
  // behind.
  expect_ok(destination, {"CLUSTER", "SETSLOT", slot_text, "NODE", node_ids[to_index]});
  expect_ok(source, {"CLUSTER", "SETSLOT", slot_text, "NODE", node_ids[to_index]});
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (static_cast<int>(i) == from_index || i == static_cast<size_t>(to_index) || !nodes[i]->running()) continue;
    if (nodes[i]->command({"ROLE"}).rfind("master", 0) != 0) continue;
    expect_ok(*nodes[i], {"CLUSTER", "SETSLOT", slot_text, "NODE", node_ids[to_index]});
  }
  wait_until_consistent();
  if (owner_of_slot(slot) != to_index) throw std::runtime_error("slot " + slot_text + " did not move");
}

}  // namespace lockbridge::testing
