#include "transport/socket.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <utility>

#include "transport/resolver.hpp"
#include "util/poll_timeout.hpp"

namespace lockbridge::detail {
namespace {

std::string errno_text(int number) { return std::strerror(number); }

[[noreturn]] void throw_errno(const std::string& doing, int number) {
  throw TransportError(Errc::io, doing + ": " + errno_text(number));
}

std::chrono::milliseconds left_until(Deadline deadline) {
  // Rounded up, so a wait never ends just before its deadline and spins once more with 0.
  const auto left = deadline - std::chrono::steady_clock::now();
  return std::chrono::ceil<std::chrono::milliseconds>(left);
}

int open_socket(int family) {
  const int fd = ::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) throw_errno("socket", errno);
  return fd;
}

void set_flag(int fd, int level, int name) {
  const int on = 1;
  // Best effort: a socket without them still works, only slower or later to notice a dead peer.
  (void)setsockopt(fd, level, name, &on, sizeof on);
}

}  // namespace

Socket::Socket(Socket&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

Socket& Socket::operator=(Socket&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

Socket::~Socket() {
  if (fd_ >= 0) ::close(fd_);
}

void Socket::wait_for(short events, Deadline deadline, const char* waiting_for) const {
  for (;;) {
    // Once the deadline has passed, one look without waiting: what is ready still counts.
    const auto left = std::max(left_until(deadline), std::chrono::milliseconds::zero());
    pollfd socket{fd_, events, 0};
    const int ready = ::poll(&socket, 1, poll_timeout(left));
    if (ready > 0) return;  // ready, or in error: the read or write that follows says which
    if (ready < 0 && errno != EINTR) throw_errno("poll", errno);
    if (ready == 0 && left.count() == 0) throw TransportError(Errc::timeout, std::string("no ") + waiting_for);
  }
}

Socket Socket::connect_tcp(const std::string& host, int port, Deadline deadline) {
  const std::shared_ptr<const addrinfo> found = resolve(host, port, deadline);
  std::string failures;
  for (const addrinfo* address = found.get(); address != nullptr; address = address->ai_next) {
    Socket socket(open_socket(address->ai_family));
    if (const int error = socket.connect_to(address->ai_addr, address->ai_addrlen, deadline); error != 0) {
      failures = errno_text(error);
      continue;
    }
    set_flag(socket.fd_, IPPROTO_TCP, TCP_NODELAY);
    set_flag(socket.fd_, SOL_SOCKET, SO_KEEPALIVE);
    return socket;
  }
  throw TransportError(Errc::io, failures.empty() ? "no address to connect to" : failures);
}

Socket Socket::connect_unix(const std::string& path, Deadline deadline) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.size() >= sizeof address.sun_path) {
    throw TransportError(Errc::io,
                         "socket path is longer than " + std::to_string(sizeof address.sun_path - 1) + " bytes");
  }
  std::memcpy(address.sun_path, path.data(), path.size());
  Socket socket(open_socket(AF_UNIX));
  const int error = socket.connect_to(reinterpret_cast<const sockaddr*>(&address), sizeof address, deadline);
  if (error != 0) throw TransportError(Errc::io, errno_text(error));
  return socket;
}

int Socket::connect_to(const sockaddr* address, socklen_t length, Deadline deadline) {
  if (::connect(fd_, address, length) == 0) return 0;
  // In progress; a unix socket whose backlog is full answers EAGAIN rather than waiting (over TCP,
  // EAGAIN means no local port is free: a failure).
  const bool unix_backlog = errno == EAGAIN && address->sa_family == AF_UNIX;
  if (errno != EINPROGRESS && !unix_backlog) return errno;
  wait_for(POLLOUT, deadline, "connection within the connect timeout");
  int error = 0;
  socklen_t size = sizeof error;
  if (::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &error, &size) != 0) error = errno;
  return error;
}

void Socket::write_all(std::string_view bytes, Deadline deadline) {
  while (!bytes.empty()) {
    const ssize_t written = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (written > 0) {
      bytes.remove_prefix(static_cast<std::size_t>(written));
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      wait_for(POLLOUT, deadline, "room to write within the command timeout");
    } else if (errno != EINTR) {
      throw_errno("write", errno);
    }
  }
}

std::size_t Socket::write_now(std::string_view bytes) {
  for (;;) {
    const ssize_t written = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (written >= 0) return static_cast<std::size_t>(written);
    if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
    if (errno != EINTR) throw_errno("write", errno);
  }
}

std::optional<std::size_t> Socket::read_now(std::span<char> buffer) {
  for (;;) {
    const ssize_t got = ::recv(fd_, buffer.data(), buffer.size(), 0);
    if (got >= 0) return static_cast<std::size_t>(got);
    if (errno == EAGAIN || errno == EWOULDBLOCK) return std::nullopt;
    if (errno != EINTR) throw_errno("read", errno);
  }
}

std::size_t Socket::read_some(std::span<char> buffer, Deadline deadline) {
  for (;;) {
    // Waited for first: a reply is read right after its request went out, when it cannot have
    // arrived yet, so a read first would only add a failed recv(2) to every round trip.
    wait_for(POLLIN, deadline, "reply within the command timeout");
    if (const auto got = read_now(buffer)) {
      if (*got == 0) throw closed_by_server();
      return *got;
    }
  }
}

bool Socket::readable_now() const noexcept {
  pollfd socket{fd_, POLLIN | POLLRDHUP, 0};
  return ::poll(&socket, 1, 0) != 0;  // readable, hung up, in error, or poll itself failed
}

}  // namespace lockbridge::detail
