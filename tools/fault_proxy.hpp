// A loopback TCP proxy between lockbridge and a redis-server, under a caller's control (the tests,
// bench --fault stall): bytes pass through both ways until the caller injects a fault. Its faults
// are the network's, not the server's:
//   stall()       accept bytes from both sides and deliver none (a silent partition: nothing is
//                 refused, nothing arrives);
//   delay(d)      deliver every chunk d after it arrived;
//   cut_after(n)  deliver only the next n bytes the server sends, then close that connection both
//                 ways (a reply cut in the middle);
//   reset()       abort every open connection with a TCP reset; new ones are accepted as before;
//   reset_where(s) the same, only for the connections whose client has sent `s` (e.g. the release
//                 subscriber's "SSUBSCRIBE"), so a test can break one connection and not another;
//   heal()        pass bytes through again, what a stall held first.
// One thread polls every socket; the destructor closes everything and joins it.
#pragma once

#include <chrono>
#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace lockbridge::tools {

class FaultProxy {
 public:
  // Listens on 127.0.0.1 (a free port) and forwards to 127.0.0.1:upstream_port, or to the unix
  // socket at upstream_path. Throws std::runtime_error when it cannot listen. Its thread starts at
  // once, or with start(): a process that forks after making proxies must make them without a
  // thread until then (a thread at fork time is what sanitizers and the C library warn against;
  // connections wait in the listen backlog meanwhile).
  enum class Start { now, later };
  explicit FaultProxy(int upstream_port, Start start = Start::now);
  explicit FaultProxy(std::string upstream_path, Start start = Start::now);
  void start();
  ~FaultProxy();
  FaultProxy(const FaultProxy&) = delete;
  FaultProxy& operator=(const FaultProxy&) = delete;

  int port() const noexcept { return port_; }
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }

  void stall();
  void delay(std::chrono::milliseconds each_chunk);
  void cut_after(std::size_t server_bytes);
  void reset();
  void reset_where(std::string client_sent);
  void heal();

  // Connections accepted so far, and open now.
  int accepted() const;
  int open_connections() const;

 private:
  struct Faults {
    bool stalled = false;
    std::chrono::milliseconds delay{0};
    std::optional<std::size_t> cut_after;  // server bytes still to deliver before the cut
    int resets = 0;                        // reset() and reset_where() calls so far
    std::string reset_only_where;          // the latest reset's filter: empty for every connection
  };
  struct Links;  // the proxy thread's sockets and buffers
  void listen_on_loopback();
  void run();
  void wake() const;  // the proxy thread looks at the faults again now

  int listen_fd_ = -1;
  int wake_fds_[2] = {-1, -1};
  int port_ = 0;
  int upstream_port_ = 0;
  std::string upstream_path_;    // a unix socket instead of upstream_port_
  int connect_upstream() const;  // a connected socket, or -1
  mutable std::mutex mutex_;
  Faults faults_;
  bool stopping_ = false;
  int accepted_ = 0;
  int resets_done_ = 0;  // resets the proxy thread has carried out
  int open_ = 0;
  std::thread thread_;
};

}  // namespace lockbridge::tools
