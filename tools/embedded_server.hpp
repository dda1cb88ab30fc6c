// The embedded default server: when neither --url nor LOCKBRIDGE_URL names a Redis, the CLI starts
// its own redis-server on a private unix socket in a fresh temporary directory, and stops it (and
// removes the directory) when the object is destroyed.
#pragma once

#include <sys/types.h>
#include <chrono>
#include <memory>
#include <string>

namespace lockbridge::tools {

class EmbeddedRedis {
 public:
  // What survives restart(): `on_shutdown` saves a snapshot as the server stops (SHUTDOWN SAVE);
  // `append_only` writes every command to an append-only file synced before it is acknowledged,
  // and restart() crashes the server (SIGKILL): only what the file holds comes back.
  enum class Persistence { on_shutdown, append_only };

  // Throws std::runtime_error with a clear message when redis-server is missing or does not start
  // answering PING within `ready_timeout`, FileError when its directory cannot be created.
  static std::unique_ptr<EmbeddedRedis> start(std::chrono::milliseconds ready_timeout = std::chrono::seconds(10),
                                              Persistence persistence = Persistence::on_shutdown);
  ~EmbeddedRedis();
  EmbeddedRedis(const EmbeddedRedis&) = delete;
  EmbeddedRedis& operator=(const EmbeddedRedis&) = delete;

  const std::string& url() const noexcept { return url_; }
  pid_t pid() const noexcept { return pid_; }
  Persistence persistence() const noexcept { return persistence_; }

  // Stops the server (SHUTDOWN SAVE, or a crash with append_only) and starts it again on the same
  // socket, where it reloads the saved keys (lock values and TTLs survive, as with a persistent
  // production server). Throws std::runtime_error when it does not come back within `ready_timeout`.
  void restart(std::chrono::milliseconds ready_timeout = std::chrono::seconds(10));

 private:
  EmbeddedRedis(std::string dir, pid_t pid, Persistence persistence);
  // Starts redis-server in `dir`.
  static pid_t spawn(const std::string& dir, Persistence persistence);
  void wait_ready(std::chrono::milliseconds ready_timeout);
  std::string dir_;
  std::string url_;
  pid_t pid_;
  Persistence persistence_;
};

// The absolute path of `program` found on PATH, or empty.
std::string find_on_path(const std::string& program);

}  // namespace lockbridge::tools
