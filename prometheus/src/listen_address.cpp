#include "listen_address.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "lockbridge/error.hpp"

#include <civetweb.h>

namespace lockbridge::detail {
namespace {

constexpr unsigned kCivetIpv6 = 8;  // mg_check_feature's bit for IPv6 support

[[noreturn]] void malformed(std::string_view address, const std::string& why) {
  throw Error(Errc::bad_option, "metrics: '" + std::string(address) +
                                    "' is not HOST:PORT with HOST an IPv4 address, [an IPv6 address] or localhost "
                                    "and PORT 0 to 65535 (0: a free one): " +
                                    why);
}

}  // namespace

std::string ListenAddress::with_port(int chosen) const {
  return (family == AF_INET6 ? "[" + host + "]" : host) + ":" + std::to_string(chosen);
}

ListenAddress parse_listen_address(std::string_view address) {
  const auto colon = address.rfind(':');
  if (colon == std::string_view::npos) malformed(address, "no port");
  const std::string_view host = address.substr(0, colon);
  const std::string_view port = address.substr(colon + 1);
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string_view::npos ||
      std::stoi(std::string(port)) > 65535) {
    malformed(address, "the port is not a number from 0 to 65535");
  }
  ListenAddress parsed;
  parsed.port = std::stoi(std::string(port));
  unsigned char scratch[sizeof(in6_addr)];
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    parsed.family = AF_INET6;
    parsed.host = std::string(host.substr(1, host.size() - 2));
    if (inet_pton(AF_INET6, parsed.host.c_str(), scratch) != 1) malformed(address, "not an IPv6 address in brackets");
    if (mg_check_feature(kCivetIpv6) == 0) {
      throw Error(Errc::bad_option, "metrics: '" + std::string(address) +
                                        "': the HTTP server of this build (CivetWeb, under prometheus-cpp) has no "
                                        "IPv6; listen on an IPv4 address (127.0.0.1, or 0.0.0.0 for every interface)");
    }
  } else {
    parsed.family = AF_INET;
    parsed.host = host == "localhost" ? "127.0.0.1" : std::string(host);
    if (inet_pton(AF_INET, parsed.host.c_str(), scratch) != 1) {
      malformed(address, host.empty() ? "no host" : "the host is none of these");
    }
  }
  parsed.civet = parsed.with_port(parsed.port);
  return parsed;
}

std::string why_not_listening(const ListenAddress& address) {
  const int fd = ::socket(address.family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::strerror(errno);
  const int on = 1;
  (void)::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);  // as CivetWeb binds
  sockaddr_storage storage{};
  socklen_t length = 0;
  if (address.family == AF_INET6) {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&storage);
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(static_cast<std::uint16_t>(address.port));
    inet_pton(AF_INET6, address.host.c_str(), &in6->sin6_addr);
    length = sizeof *in6;
  } else {
    auto* in4 = reinterpret_cast<sockaddr_in*>(&storage);
    in4->sin_family = AF_INET;
    in4->sin_port = htons(static_cast<std::uint16_t>(address.port));
    inet_pton(AF_INET, address.host.c_str(), &in4->sin_addr);
    length = sizeof *in4;
  }
  const int bound = ::bind(fd, reinterpret_cast<const sockaddr*>(&storage), length);
  const int error = errno;
  ::close(fd);
  return bound != 0 ? std::strerror(error) : "the HTTP server could not start there";
}

}  // namespace lockbridge::detail
