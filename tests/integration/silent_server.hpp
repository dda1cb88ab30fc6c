// A server that accepts connections (the kernel's backlog does) and never answers: every command
// sent to it times out, with an unknown outcome.
#pragma once

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stdexcept>
#include <string>

namespace lockbridge::testing {

class SilentServer {
 public:
  SilentServer() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = 0;
    if (fd_ < 0 || bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 || listen(fd_, 16) != 0) {
      if (fd_ >= 0) close(fd_);
      throw std::runtime_error("cannot listen on loopback");
    }
    socklen_t length = sizeof address;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
  }
  SilentServer(const SilentServer&) = delete;
  SilentServer& operator=(const SilentServer&) = delete;
  ~SilentServer() { close(fd_); }

  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  // Whether a client has connected (its connection waits in the backlog).
  bool anyone_connected() const {
    pollfd listening{fd_, POLLIN, 0};
    return poll(&listening, 1, 0) > 0;
  }
  std::string url() const { return "redis://" + address(); }

 private:
  int fd_ = -1;
  int port_ = 0;
};

}  // namespace lockbridge::testing
