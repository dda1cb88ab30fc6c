#include "lockbridge/url.hpp"

#include <sys/un.h>

#include <charconv>

#include "lockbridge/error.hpp"

namespace lockbridge {
namespace {

constexpr std::string_view kSchemes[] = {
    "redis", "rediss", "unix", "redis-sentinel", "redlock", "redis-cluster", "rediss-sentinel", "rediss-cluster"};

// Whether `scheme` is one lockbridge knows, so a message may show it.
bool known_scheme(std::string_view scheme) {
  for (const std::string_view known : kSchemes) {
    if (scheme == known) return true;
  }
  return false;
}

// Every complaint about a URL goes through here, and none quotes the URL: a malformed URL may
// carry a password anywhere (a missing '@' makes it the port, an unencoded '&' a query parameter,
// a stray "://" part of the scheme). `why` is built from this file's own words and numbers only;
// the scheme is shown when it is one lockbridge knows.
[[noreturn]] void bad_url(std::string_view url, const std::string& why) {
  const auto scheme_end = url.find("://");
  const std::string_view scheme = scheme_end == std::string_view::npos ? std::string_view() : url.substr(0, scheme_end);
  const std::string shown = known_scheme(scheme) ? " (" + std::string(scheme) + "://...)" : std::string();
  throw Error(Errc::bad_option, "invalid Redis URL" + shown + ": " + why);
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string percent_decode(std::string_view url, std::string_view text, std::string_view part) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out.push_back(text[i]);
      continue;
    }
    if (i + 2 >= text.size()) bad_url(url, "truncated percent escape in " + std::string(part));
    const int hi = hex_digit(text[i + 1]);
    const int lo = hex_digit(text[i + 2]);
    if (hi < 0 || lo < 0) bad_url(url, "bad percent escape in " + std::string(part));
    out.push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return out;
}

int parse_number(std::string_view url, std::string_view text, std::string_view part, int min, int max) {
  int value = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || value < min || value > max) {
    bad_url(url, std::string(part) + " is not a number in [" + std::to_string(min) + ", " + std::to_string(max) + "]");
  }
  return value;
}

constexpr int kMaxDb = 1 << 20;

// "user:password@" at the front of `rest` (the user info ends at the last '@': a host never
// contains one, so a password with an unencoded '/' still parses instead of being read as host
// and port, and echoed in an error). Fills `out` and returns what follows it.
std::string_view take_userinfo(std::string_view url, std::string_view rest, RedisUrl& out) {
  const auto at = rest.rfind('@');
  if (at == std::string_view::npos) return rest;
  const std::string_view userinfo = rest.substr(0, at);
  const auto colon = userinfo.find(':');
  const std::string_view user = userinfo.substr(0, colon);
  if (!user.empty()) out.user = percent_decode(url, user, "user");
  if (colon != std::string_view::npos) {
    out.password = percent_decode(url, userinfo.substr(colon + 1), "password");
  } else if (!out.user) {
    bad_url(url, "empty user info before '@'");
  }
  return rest.substr(at + 1);
}

// "host", "host:port", "[v6]" or "[v6]:port". `label` says which node, in messages ("" or "node 2: ").
RedisUrl::Node parse_node(std::string_view url, std::string_view authority, int default_port,
                          const std::string& label = {}) {
  std::string_view host = authority;
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {
    const auto close = authority.find(']');
    if (close == std::string_view::npos) bad_url(url, label + "IPv6 host is missing its closing ']'");
    host = authority.substr(1, close - 1);
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') bad_url(url, label + "unexpected text after the IPv6 host");
      port = after.substr(1);
      if (port.empty()) bad_url(url, label + "empty port");
    }
  } else if (const auto colon = authority.find(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
    if (port.empty()) bad_url(url, label + "empty port");
  }
  if (host.empty()) bad_url(url, label + "missing host");
  for (const char c : host) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '-' || c == '_' || c == ':';
    if (!ok) bad_url(url, label + "host contains an invalid character");
  }
  return {std::string(host), port.empty() ? default_port : parse_number(url, port, label + "port", 1, 65535)};
}

void refuse_query(std::string_view url, std::string_view rest, std::string_view scheme) {
  if (rest.find_first_of("?#") != std::string_view::npos) {
    bad_url(url, "query parameters and fragments are not supported in " + std::string(scheme) + ":// URLs");
  }
}

RedisUrl parse_tcp(std::string_view url, std::string_view rest) {
  RedisUrl out;
  out.transport = RedisUrl::Transport::tcp;
  refuse_query(url, rest, "redis");
  rest = take_userinfo(url, rest, out);
  std::string_view authority = rest;
  std::string_view path;
  if (const auto slash = rest.find('/'); slash != std::string_view::npos) {
    authority = rest.substr(0, slash);
    path = rest.substr(slash + 1);
  }
  RedisUrl::Node node = parse_node(url, authority, 6379);
  out.host = std::move(node.host);
  out.port = node.port;
  if (!path.empty()) out.db = parse_number(url, path, "database", 0, kMaxDb);
  return out;
}

// Redlock's vote count is only meaningful over an odd number of distinct masters: the same server
// named twice would count one write as two votes.
constexpr std::size_t kMaxRedlockMasters = 15;

// redis-sentinel://, redlock:// and redis-cluster://: a comma-separated node list, then a path.
RedisUrl parse_multi(std::string_view url, std::string_view rest, RedisUrl::Topology topology,
                     std::string_view scheme) {
  RedisUrl out;
  out.transport = RedisUrl::Transport::tcp;
  out.topology = topology;
  refuse_query(url, rest, scheme);
  rest = take_userinfo(url, rest, out);
  const auto slash = rest.find('/');
  std::string_view list = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);
  const int default_port = topology == RedisUrl::Topology::sentinel ? 26379 : 6379;
  while (true) {
    const auto comma = list.find(',');
    const std::string number = std::to_string(out.nodes.size() + 1);
    const RedisUrl::Node node = parse_node(url, list.substr(0, comma), default_port, "node " + number + ": ");
    for (std::size_t i = 0; i < out.nodes.size(); ++i) {
      if (out.nodes[i] == node) {
        bad_url(url, "nodes " + std::to_string(i + 1) + " and " + number +
                         " are the same host and port (a node may be named once)");
      }
    }
    out.nodes.push_back(node);
    if (comma == std::string_view::npos) break;
    list = list.substr(comma + 1);
  }
  switch (topology) {
    case RedisUrl::Topology::sentinel: {
      const auto db_slash = path.find('/');
      const std::string_view name = path.substr(0, db_slash);
      if (name.empty()) bad_url(url, "missing master name (redis-sentinel://host:port,.../master-name)");
      out.master_name = percent_decode(url, name, "master name");
      if (db_slash != std::string_view::npos)
        out.db = parse_number(url, path.substr(db_slash + 1), "database", 0, kMaxDb);
      break;
    }
    case RedisUrl::Topology::redlock:
      if (out.nodes.size() < 3 || out.nodes.size() > kMaxRedlockMasters || out.nodes.size() % 2 == 0) {
        bad_url(url, "redlock needs an odd number of masters from 3 to " + std::to_string(kMaxRedlockMasters) +
                         ", got " + std::to_string(out.nodes.size()));
      }
      if (!path.empty()) out.db = parse_number(url, path, "database", 0, kMaxDb);
      break;
    case RedisUrl::Topology::cluster:
      if (!path.empty()) bad_url(url, "Redis Cluster has only database 0: no path after the seed nodes");
      break;
    case RedisUrl::Topology::single:
      break;
  }
  // The first node stands in for host and port where one address is wanted (messages).
  out.host = out.nodes.front().host;
  out.port = out.nodes.front().port;
  return out;
}

RedisUrl parse_unix(std::string_view url, std::string_view rest) {
  RedisUrl out;
  out.transport = RedisUrl::Transport::unix_socket;
  std::string_view path = rest;
  std::string_view query;
  if (const auto q = rest.find('?'); q != std::string_view::npos) {
    path = rest.substr(0, q);
    query = rest.substr(q + 1);
  }
  if (path.empty() || path.front() != '/') bad_url(url, "socket path must be absolute (unix:///path/to/socket)");
  // A socket address holds the path and its terminating NUL: a longer one cannot be connected to.
  if (constexpr std::size_t kMaxPath = sizeof(sockaddr_un::sun_path) - 1; path.size() > kMaxPath) {
    bad_url(url, "socket path is " + std::to_string(path.size()) +
                     " bytes long, and a unix socket address holds at "
                     "most " +
                     std::to_string(kMaxPath));
  }
  out.socket_path = std::string(path);
  for (int number = 1; !query.empty(); ++number) {
    const auto amp = query.find('&');
    const std::string_view param = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    const auto eq = param.find('=');
    const std::string_view name = param.substr(0, eq);
    const std::string_view value = eq == std::string_view::npos ? std::string_view() : param.substr(eq + 1);
    if (name == "db") {
      out.db = parse_number(url, value, "database", 0, kMaxDb);
    } else if (name == "user") {
      out.user = percent_decode(url, value, "user");
    } else if (name == "password") {
      out.password = percent_decode(url, value, "password");
    } else {
      // Not quoted: with an unencoded '&' in a password, the rest of the password reads as a name.
      bad_url(url, "query parameter " + std::to_string(number) + " is unknown (known: db, user, password; " +
                       "percent-encode '&' and '=' in a password)");
    }
  }
  return out;
}

constexpr std::string_view kExpectedSchemes =
    "(expected redis://, rediss://, unix://, redis-sentinel://, rediss-sentinel://, redlock://, redis-cluster:// or "
    "rediss-cluster://)";

RedisUrl parse_scheme(std::string_view url, std::string_view scheme, std::string_view rest) {
  if (scheme == "redis") return parse_tcp(url, rest);
  if (scheme == "unix") return parse_unix(url, rest);
  if (scheme == "redis-sentinel") return parse_multi(url, rest, RedisUrl::Topology::sentinel, scheme);
  if (scheme == "redlock") return parse_multi(url, rest, RedisUrl::Topology::redlock, scheme);
  if (scheme == "redis-cluster") return parse_multi(url, rest, RedisUrl::Topology::cluster, scheme);
  bad_url(url, "unknown scheme " + std::string(kExpectedSchemes));
}

}  // namespace

RedisUrl parse_redis_url(std::string_view url) {
  const auto scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) bad_url(url, "missing scheme " + std::string(kExpectedSchemes));
  const std::string_view scheme = url.substr(0, scheme_end);
  const std::string_view rest = url.substr(scheme_end + 3);
  // rediss, rediss-sentinel, rediss-cluster: the plain scheme's URL, over TLS.
  const bool tls = scheme == "rediss" || scheme.starts_with("rediss-");
  const std::string plain = tls ? "redis" + std::string(scheme.substr(6)) : std::string(scheme);
  if (tls && plain != "redis" && plain != "redis-sentinel" && plain != "redis-cluster") {
    bad_url(url, "unknown scheme " + std::string(kExpectedSchemes));
  }
  RedisUrl out = parse_scheme(url, plain, rest);
  out.tls = tls;
  return out;
}

RedisUrl RedisUrl::server(const Node& node) const {
  RedisUrl out;
  out.transport = Transport::tcp;
  out.host = node.host;
  out.port = node.port;
  out.user = user;
  out.password = password;
  out.db = db;
  out.tls = tls;
  return out;
}

std::string RedisUrl::redacted() const {
  std::string auth;
  if (transport == Transport::unix_socket) {
    std::string query;
    if (db != 0) query += "&db=" + std::to_string(db);
    if (user) query += "&user=" + *user;
    if (password) query += "&password=***";
    if (!query.empty()) query[0] = '?';
    return "unix://" + socket_path + query;
  }
  if (password) {
    auth = user.value_or("") + ":***@";
  } else if (user) {
    // "redis://s3cret@host" reads as a user named s3cret: it may be a password whose ':' was
    // forgotten, so a user without a password is hidden too.
    auth = "***@";
  }
  const auto address = [](const std::string& node_host, int node_port) {
    const bool v6 = node_host.find(':') != std::string::npos;
    return (v6 ? "[" + node_host + "]" : node_host) + ":" + std::to_string(node_port);
  };
  const std::string db_path = db != 0 ? "/" + std::to_string(db) : "";
  const std::string redis = tls ? "rediss" : "redis";
  if (topology == Topology::single) return redis + "://" + auth + address(host, port) + db_path;
  std::string list;
  for (const Node& node : nodes) list += (list.empty() ? "" : ",") + address(node.host, node.port);
  switch (topology) {
    case Topology::sentinel:
      return redis + "-sentinel://" + auth + list + "/" + master_name + db_path;
    case Topology::redlock:
      return "redlock://" + auth + list + db_path;
    case Topology::cluster:
    case Topology::single:
      break;
  }
  return redis + "-cluster://" + auth + list;
}

}  // namespace lockbridge
