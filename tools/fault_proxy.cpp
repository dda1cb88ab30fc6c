#include "fault_proxy.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <deque>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace lockbridge::tools {

namespace {

using Clock = std::chrono::steady_clock;

sockaddr_in loopback(int port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  return address;
}

void make_nonblocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

// Closes with a TCP reset rather than a FIN.
void abort_socket(int fd) {
  const linger hard{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &hard, sizeof hard);
  close(fd);
}

}  // namespace

// The proxy thread's state (named, not anonymous: FaultProxy::Links holds it).
namespace fault_proxy_state {

// Bytes read from one side, to be written to the other once due.
struct Chunk {
  std::string bytes;
  Clock::time_point due;
};

constexpr std::size_t kClientSentKept = 1 << 16;

struct Link {
  int client = -1;
  int server = -1;
  std::deque<Chunk> to_server;
  std::deque<Chunk> to_client;
  bool closed = false;
  std::string client_sent;  // what the client sent first (up to kClientSentKept), for reset_where
};

}  // namespace fault_proxy_state

using fault_proxy_state::Chunk;
using fault_proxy_state::Link;

struct FaultProxy::Links {
  std::vector<Link> all;
};

FaultProxy::FaultProxy(int upstream_port, Start start) : upstream_port_(upstream_port) {
  listen_on_loopback();
  if (start == Start::now) this->start();
}

FaultProxy::FaultProxy(std::string upstream_path, Start start) : upstream_path_(std::move(upstream_path)) {
  if (upstream_path_.size() >= sizeof(sockaddr_un::sun_path)) {
    throw std::runtime_error("fault proxy: the socket path is too long: " + upstream_path_);
  }
  listen_on_loopback();
  if (start == Start::now) this->start();
}

void FaultProxy::start() {
  if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
}

int FaultProxy::connect_upstream() const {
  if (upstream_path_.empty()) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const sockaddr_in address = loopback(upstream_port_);
    if (fd >= 0 && connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0) {
      const int on = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
      return fd;
    }
    if (fd >= 0) close(fd);
    return -1;
  }
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  upstream_path_.copy(address.sun_path, sizeof address.sun_path - 1);
  if (fd >= 0 && connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0) return fd;
  if (fd >= 0) close(fd);
  return -1;
}

void FaultProxy::listen_on_loopback() {
  listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address = loopback(0);
  if (listen_fd_ < 0 || bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      listen(listen_fd_, 64) != 0 || pipe(wake_fds_) != 0) {
    if (listen_fd_ >= 0) close(listen_fd_);
    throw std::runtime_error("fault proxy: cannot listen on loopback");
  }
  socklen_t length = sizeof address;
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&address), &length);
  port_ = ntohs(address.sin_port);
  make_nonblocking(wake_fds_[0]);
}

FaultProxy::~FaultProxy() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake();
  if (thread_.joinable()) thread_.join();
  close(listen_fd_);
  close(wake_fds_[0]);
  close(wake_fds_[1]);
}

void FaultProxy::wake() const {
  const char byte = 0;
  (void)!write(wake_fds_[1], &byte, 1);
}

void FaultProxy::stall() {
  std::lock_guard lock(mutex_);
  faults_.stalled = true;
}

void FaultProxy::delay(std::chrono::milliseconds each_chunk) {
  {
    std::lock_guard lock(mutex_);
    faults_.delay = each_chunk;
  }
  wake();
}

void FaultProxy::cut_after(std::size_t server_bytes) {
  std::lock_guard lock(mutex_);
  faults_.cut_after = server_bytes;
}

void FaultProxy::reset() { reset_where({}); }

void FaultProxy::reset_where(std::string client_sent) {
  int resets = 0;
  {
    std::lock_guard lock(mutex_);
    resets = ++faults_.resets;
    faults_.reset_only_where = std::move(client_sent);
  }
  wake();
  // Returns once the proxy thread has aborted what it was asked to: the test's next step sees it.
  for (int i = 0; i < 1000; ++i) {
    {
      std::lock_guard lock(mutex_);
      if (resets_done_ == resets) return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

void FaultProxy::heal() {
  {
    std::lock_guard lock(mutex_);
    faults_.stalled = false;
    faults_.delay = std::chrono::milliseconds(0);
    faults_.cut_after.reset();
  }
  wake();
}

int FaultProxy::accepted() const {
  std::lock_guard lock(mutex_);
  return accepted_;
}

int FaultProxy::open_connections() const {
  std::lock_guard lock(mutex_);
  return open_;
}

void FaultProxy::run() {
  Links links;
  const auto close_link = [](Link& link, bool hard) {
    if (hard) {
      abort_socket(link.client);
      abort_socket(link.server);
    } else {
      close(link.client);
      close(link.server);
    }
    link.closed = true;
  };
  // Writes the due chunks of `queue` to `fd`; a cut delivers only what it allows and then closes
  // the link. Called with mutex_ held.
  const auto deliver = [&](Link& link, std::deque<Chunk>& queue, int fd, bool from_server, Clock::time_point now,
                           Clock::time_point& next_due) {
    while (!link.closed && !queue.empty()) {
      Chunk& chunk = queue.front();
      if (chunk.due > now) {
        next_due = std::min(next_due, chunk.due);
        return;
      }
      std::size_t allowed = chunk.bytes.size();
      if (from_server && faults_.cut_after) allowed = std::min(allowed, *faults_.cut_after);
      const ssize_t sent = allowed == 0 ? 0 : send(fd, chunk.bytes.data(), allowed, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (sent < 0) {
        if (errno != EAGAIN && errno != EWOULDBLOCK) close_link(link, false);
        return;
      }
      chunk.bytes.erase(0, static_cast<std::size_t>(sent));
      if (from_server && faults_.cut_after) {
        *faults_.cut_after -= static_cast<std::size_t>(sent);
        if (*faults_.cut_after == 0) {
          faults_.cut_after.reset();
          close_link(link, false);
          return;
        }
      }
      if (!chunk.bytes.empty()) return;  // the socket's buffer is full: later
      queue.pop_front();
    }
  };

  for (;;) {
    Clock::time_point next_due = Clock::time_point::max();
    std::chrono::milliseconds delay{0};
    {
      std::lock_guard lock(mutex_);
      if (stopping_) break;
      if (faults_.resets != resets_done_) {
        resets_done_ = faults_.resets;
        for (Link& link : links.all) {
          const bool chosen =
              faults_.reset_only_where.empty() || link.client_sent.find(faults_.reset_only_where) != std::string::npos;
          if (!link.closed && chosen) close_link(link, true);
        }
      }
      if (!faults_.stalled) {
        const auto now = Clock::now();
        for (Link& link : links.all) {
          deliver(link, link.to_server, link.server, false, now, next_due);
          deliver(link, link.to_client, link.client, true, now, next_due);
        }
      }
      std::erase_if(links.all, [](const Link& link) { return link.closed; });
      open_ = static_cast<int>(links.all.size());
      delay = faults_.delay;
    }

    std::vector<pollfd> fds{{wake_fds_[0], POLLIN, 0}, {listen_fd_, POLLIN, 0}};
    for (const Link& link : links.all) {
      fds.push_back({link.client, POLLIN, 0});
      fds.push_back({link.server, POLLIN, 0});
    }
    auto wait = std::chrono::milliseconds(20);
    if (next_due != Clock::time_point::max()) {
      wait = std::clamp(std::chrono::ceil<std::chrono::milliseconds>(next_due - Clock::now()),
                        std::chrono::milliseconds(0), wait);
    }
    if (poll(fds.data(), fds.size(), static_cast<int>(wait.count())) < 0) continue;

    if ((fds[0].revents & POLLIN) != 0) {
      char drain[64];
      while (read(wake_fds_[0], drain, sizeof drain) > 0) {
      }
    }
    if ((fds[1].revents & POLLIN) != 0) {
      const int client = accept(listen_fd_, nullptr, nullptr);
      if (client >= 0) {
        const int server = connect_upstream();
        if (server < 0) {
          abort_socket(client);
        } else {
          const int on = 1;
          setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
          make_nonblocking(client);
          make_nonblocking(server);
          links.all.push_back(Link{client, server, {}, {}, false, {}});
          std::lock_guard lock(mutex_);
          ++accepted_;
          open_ = static_cast<int>(links.all.size());
        }
      }
    }
    const auto now = Clock::now();
    for (std::size_t i = 0; i < links.all.size() && 2 + 2 * i + 1 < fds.size(); ++i) {
      Link& link = links.all[i];
      const auto take = [&](int fd, short revents, std::deque<Chunk>& queue) {
        if (link.closed || (revents & (POLLIN | POLLHUP | POLLERR)) == 0) return;
        char buffer[16384];
        const ssize_t n = recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
        if (n > 0) {
          if (fd == link.client && link.client_sent.size() < fault_proxy_state::kClientSentKept) {
            link.client_sent.append(buffer, static_cast<std::size_t>(n));
          }
          queue.push_back(Chunk{std::string(buffer, static_cast<std::size_t>(n)), now + delay});
        } else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
          close_link(link, false);  // one side went: the other is told the same way
        }
      };
      take(link.client, fds[2 + 2 * i].revents, link.to_server);
      take(link.server, fds[2 + 2 * i + 1].revents, link.to_client);
    }
  }
  for (Link& link : links.all) {
    if (!link.closed) close_link(link, false);
  }
}

}  // namespace lockbridge::tools
