// The address PrometheusMetrics::serve listens on, checked before the HTTP server (CivetWeb, under
// prometheus-cpp) sees it: CivetWeb reads "listening_ports" as a list of its own syntax, so a
// comma would add a port on every interface, a '+' or an 's' would change what it means, and a
// port beyond 65535 would wrap round to another.
#pragma once

#include <string>
#include <string_view>

namespace lockbridge::detail {

struct ListenAddress {
  int family = 0;     // AF_INET or AF_INET6
  std::string host;   // the address, without brackets ("localhost" becomes 127.0.0.1)
  int port = 0;       // 0: a free one
  std::string civet;  // as CivetWeb's listening_ports wants it: "127.0.0.1:9464", "[::1]:9464"
  // "127.0.0.1:9464", "[::1]:9464": for messages and URLs, with the port `chosen`.
  std::string with_port(int chosen) const;
};

// HOST:PORT, HOST an IPv4 address, [an IPv6 address] or localhost, PORT 0 to 65535. Throws
// Error{bad_option} naming what is wrong, and for IPv6 when CivetWeb was built without it (as
// Debian 12's is).
ListenAddress parse_listen_address(std::string_view address);

// Why nothing can listen at `address` (errno's words from a bind of our own: "Address already in
// use", "Cannot assign requested address", "Permission denied"), or a general reason when a bind
// works now.
std::string why_not_listening(const ListenAddress& address);

}  // namespace lockbridge::detail
