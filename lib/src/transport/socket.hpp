// A connected stream socket (TCP or unix), always non-blocking, and the reads and writes on it that
// wait with poll(2) up to a deadline. Writes use MSG_NOSIGNAL: a peer that closed gives EPIPE, never
// SIGPIPE. Failures throw TransportError (io, timeout).
#pragma once

#include <sys/socket.h>

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "transport/transport_error.hpp"

namespace lockbridge::detail {

class Socket {
 public:
  // Every address `host` resolves to, in turn, until one accepts by `deadline`; TCP_NODELAY (a
  // lock request is one small write that must not wait for an ACK) and SO_KEEPALIVE (a dead peer
  // of an idle pooled or subscribed connection is found) are set.
  static Socket connect_tcp(const std::string& host, int port, Deadline deadline);
  static Socket connect_unix(const std::string& path, Deadline deadline);

  Socket(Socket&& other) noexcept;
  Socket& operator=(Socket&& other) noexcept;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  ~Socket();

  int fd() const noexcept { return fd_; }

  // Every byte, or throws.
  void write_all(std::string_view bytes, Deadline deadline);
  // What the socket takes now, without waiting: how many bytes it took (0 when its buffer is full).
  std::size_t write_now(std::string_view bytes);
  // At least one byte, waiting up to `deadline` for it. The peer closing is an io error.
  std::size_t read_some(std::span<char> buffer, Deadline deadline);
  // What has arrived, without waiting: nullopt when nothing has, 0 when the peer closed.
  std::optional<std::size_t> read_now(std::span<char> buffer);
  // Whether the socket is readable or hung up now (one poll(2), no wait, no read).
  bool readable_now() const noexcept;

 private:
  explicit Socket(int fd) noexcept : fd_(fd) {}
  // connect(2), waited for up to `deadline` (timeout thrown); the errno of a refusal, or 0.
  int connect_to(const sockaddr* address, socklen_t length, Deadline deadline);
  // Waits until `events` are ready on the socket; throws timeout at `deadline`.
  void wait_for(short events, Deadline deadline, const char* waiting_for) const;

  int fd_ = -1;
};

}  // namespace lockbridge::detail
