// lockbridge: Redis URLs.
//
//   redis://[user[:password]@]host[:port][/db]     host may be a name, IPv4 or [IPv6]; port 6379, db 0
//   rediss://...                                   the same over TLS (ClientOptions::tls says how to verify)
//   unix:///path/to/socket[?db=N]
//   redis-sentinel://[user[:password]@]host[:port][,host[:port]...]/master-name[/db]
//                                                  the sentinels (port 26379); the master is asked of them
//   redlock://[user[:password]@]host[:port],host[:port],...[/db]
//                                                  an odd number (3 to 15) of independent masters
//   redis-cluster://[user[:password]@]host[:port][,host[:port]...]
//                                                  seed nodes of a Redis Cluster (database 0 only)
//   rediss-sentinel://..., rediss-cluster://...    the same over TLS: every connection (sentinels,
//                                                  masters, nodes) uses it
//
// In the multi-node forms the credentials and the database are those of the data nodes (the
// masters); sentinels are asked without them.
// user and password may be percent-encoded. Anything else (another scheme, a bad port, a query
// parameter that is not understood) is rejected with Error{Errc::bad_option} naming the bad part.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lockbridge/export.hpp"

namespace lockbridge {

struct LOCKBRIDGE_API RedisUrl {
  enum class Transport { tcp, unix_socket };
  // single: one server (redis://, unix://); the others name several nodes (see above).
  enum class Topology { single, sentinel, redlock, cluster };
  struct LOCKBRIDGE_API Node {
    std::string host;  // without brackets
    int port = 6379;
    bool operator==(const Node&) const = default;
  };
  Transport transport = Transport::tcp;
  std::string host;         // tcp only, without brackets
  int port = 6379;          // tcp only
  std::string socket_path;  // unix_socket only
  std::optional<std::string> user;
  std::optional<std::string> password;
  int db = 0;
  Topology topology = Topology::single;
  std::vector<Node> nodes;  // sentinel, redlock and cluster: the nodes named, in order; empty for single
  std::string master_name;  // sentinel only
  bool tls = false;         // a rediss scheme: every connection of this URL is TLS (tcp only)

  // A single-server URL for `node`, with this URL's credentials and database: how a multi-node
  // Client reaches one of its data nodes.
  RedisUrl server(const Node& node) const;

  // The URL again, with the password replaced by "***" so it can be logged; a user given without
  // a password is replaced too (it may be a password written without its ':').
  std::string redacted() const;
};

// Throws Error{Errc::bad_option}.
LOCKBRIDGE_API RedisUrl parse_redis_url(std::string_view url);

}  // namespace lockbridge
