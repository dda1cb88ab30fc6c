// Where a cluster node listens, as Redis reports it (CLUSTER NODES/SLOTS, MOVED/ASK redirects).
#pragma once

#include <compare>
#include <string>

namespace lockbridge::detail {

struct NodeAddress {
  // An IPv4 or IPv6 address or a hostname, as the server gave it (IPv6 without brackets). Empty
  // only in a parsed redirect, where it means "the node that sent the redirect".
  std::string host;
  int port = 0;

  auto operator<=>(const NodeAddress&) const = default;
};

// Port 0 is not something a client can connect to, whatever a reply says.
constexpr bool valid_port(long long port) noexcept { return port >= 1 && port <= 65535; }

}  // namespace lockbridge::detail
