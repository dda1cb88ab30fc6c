#include "embedded_server.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <thread>
#include <vector>

#include "cli_common.hpp"
#include "lockbridge/client.hpp"
#include "lockbridge/error.hpp"

namespace lockbridge::tools {
namespace {

// The end of redis-server's log, for an error message (the directory is removed afterwards).
std::string log_tail(const std::string& path) {
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  constexpr std::size_t kMax = 600;
  if (text.size() > kMax) text = "..." + text.substr(text.size() - kMax);
  return text.empty() ? std::string("(empty log)") : text;
}

// Stops the child: SIGTERM, then SIGKILL if it has not exited within the grace period.
void stop_child(pid_t pid) {
  if (pid <= 0) return;
  kill(pid, SIGTERM);
  for (int i = 0; i < 100; ++i) {  // up to 5 s
    int status = 0;
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid || (done < 0 && errno == ECHILD)) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

}  // namespace

std::string find_on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  // Debian installs redis-server in /usr/bin, but a minimal environment's PATH may lack it.
  const std::string dirs = (path != nullptr && *path != '\0' ? std::string(path) + ":" : std::string()) +
                           "/usr/local/bin:/usr/bin:/bin:/usr/sbin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    const std::size_t end = std::min(dirs.find(':', start), dirs.size());
    const std::string dir = dirs.substr(start, end - start);
    const std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + program;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return {};
}

EmbeddedRedis::EmbeddedRedis(std::string dir, pid_t pid, Persistence persistence)
    : dir_(std::move(dir)), url_("unix://" + dir_ + "/redis.sock"), pid_(pid), persistence_(persistence) {}

std::unique_ptr<EmbeddedRedis> EmbeddedRedis::start(std::chrono::milliseconds ready_timeout, Persistence persistence) {
  // /tmp, not $TMPDIR: a unix socket path must stay under 108 bytes.
  std::string pattern = "/tmp/lockbridge-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) throw FileError("cannot create a temporary directory", pattern, errno);
  std::unique_ptr<EmbeddedRedis> embedded(new EmbeddedRedis(pattern, -1, persistence));
  embedded->pid_ = spawn(embedded->dir_, persistence);
  embedded->wait_ready(ready_timeout);
  return embedded;
}

pid_t EmbeddedRedis::spawn(const std::string& dir, Persistence persistence) {
  const std::string server = find_on_path("redis-server");
  if (server.empty()) {
    throw std::runtime_error(
        "no --url given and LOCKBRIDGE_URL is not set, so lockbridge wanted to start its own redis-server, "
        "but redis-server is not installed (Debian: apt-get install redis-server)");
  }
  const std::string socket = dir + "/redis.sock";
  const std::string log = dir + "/redis.log";
  const bool append_only = persistence == Persistence::append_only;
  std::vector<std::string> args{server,
                                "--port",
                                "0",
                                "--unixsocket",
                                socket,
                                "--unixsocketperm",
                                "700",
                                "--save",
                                "",
                                "--appendonly",
                                append_only ? "yes" : "no",
                                "--dir",
                                dir,
                                "--daemonize",
                                "no",
                                "--logfile",
                                log,
                                "--loglevel",
                                "warning"};
  if (append_only) {
    args.insert(args.end(), {"--appendfsync", "always"});
  }
  std::vector<char*> argv;
  for (auto& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);

  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("cannot fork to start redis-server");
  if (pid == 0) {
    // Die with the parent, and stay out of its process group so a terminal's Ctrl-C reaches only
    // the CLI, which then releases its lock before stopping the server.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(1);
    setpgid(0, 0);
    const int null_fd = open("/dev/null", O_RDWR);
    if (null_fd >= 0) {
      dup2(null_fd, STDIN_FILENO);
      dup2(null_fd, STDOUT_FILENO);
    }
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

void EmbeddedRedis::wait_ready(std::chrono::milliseconds ready_timeout) {
  const std::string log = dir_ + "/redis.log";
  ClientOptions options;
  options.connect_timeout = std::chrono::milliseconds(200);
  options.reconnect_backoff = std::chrono::milliseconds(0);
  const auto deadline = std::chrono::steady_clock::now() + ready_timeout;
  for (;;) {
    try {
      Client(url_, options).ping();
      return;
    } catch (const Error&) {
    }
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      throw std::runtime_error("redis-server exited during start-up: " + log_tail(log));
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      throw std::runtime_error("redis-server did not answer PING within " + std::to_string(ready_timeout.count()) +
                               " ms: " + log_tail(log));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void EmbeddedRedis::restart(std::chrono::milliseconds ready_timeout) {
  if (persistence_ == Persistence::append_only) {
    kill(pid_, SIGKILL);  // a crash: what the append-only file synced is all that comes back
  } else {
    try {
      Client(url_).command({"SHUTDOWN", "SAVE"});
    } catch (const Error&) {  // the server closes the connection instead of replying
    }
  }
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + ready_timeout;
  while (waitpid(pid_, &status, WNOHANG) != pid_) {
    if (std::chrono::steady_clock::now() >= deadline) {
      stop_child(pid_);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  pid_ = -1;
  pid_ = spawn(dir_, persistence_);
  wait_ready(ready_timeout);
}

EmbeddedRedis::~EmbeddedRedis() {
  stop_child(pid_);
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

}  // namespace lockbridge::tools
