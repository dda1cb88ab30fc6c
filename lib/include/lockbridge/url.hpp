// lockbridge: Redis URLs.
//
//   redis://[user[:password]@]host[:port][/db]     host may be a name, IPv4 or [IPv6]; port 6379, db 0
//   unix:///path/to/socket[?db=N]
//
// user and password may be percent-encoded. Anything else (another scheme, a bad port, a query
// parameter that is not understood) is rejected with Error{Errc::bad_option} naming the bad part.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace lockbridge {

struct RedisUrl {
  enum class Transport { tcp, unix_socket };
  Transport transport = Transport::tcp;
  std::string host;         // tcp only, without brackets
  int port = 6379;          // tcp only
  std::string socket_path;  // unix_socket only
  std::optional<std::string> user;
  std::optional<std::string> password;
  int db = 0;

  // The URL again, with the password replaced by "***" so it can be logged.
  std::string redacted() const;
};

// Throws Error{Errc::bad_option}.
RedisUrl parse_redis_url(std::string_view url);

}  // namespace lockbridge
