#include "lockbridge/url.hpp"

#include <charconv>

#include "lockbridge/error.hpp"

namespace lockbridge {
namespace {

[[noreturn]] void bad_url(std::string_view url, const std::string& why) {
  // Never echo a password back: show only the scheme and the complaint.
  const auto scheme_end = url.find("://");
  const std::string scheme = scheme_end == std::string_view::npos ? std::string() : std::string(url.substr(0, scheme_end));
  throw Error(Errc::bad_option, "invalid Redis URL" + (scheme.empty() ? std::string() : " (" + scheme + "://...)") + ": " + why);
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
    bad_url(url, std::string(part) + " '" + std::string(text) + "' is not a number in [" + std::to_string(min) + ", " +
                     std::to_string(max) + "]");
  }
  return value;
}

constexpr int kMaxDb = 1 << 20;

RedisUrl parse_tcp(std::string_view url, std::string_view rest) {
  RedisUrl out;
  out.transport = RedisUrl::Transport::tcp;
  if (const auto q = rest.find_first_of("?#"); q != std::string_view::npos) {
    bad_url(url, "query parameters and fragments are not supported in redis:// URLs");
  }
  // The user info ends at the last '@' (a host never contains one), so a password with an
  // unencoded '/' still parses instead of being read as host and port, and echoed in an error.
  std::string_view userinfo;
  bool has_userinfo = false;
  if (const auto at = rest.rfind('@'); at != std::string_view::npos) {
    userinfo = rest.substr(0, at);
    rest = rest.substr(at + 1);
    has_userinfo = true;
  }
  std::string_view authority = rest;
  std::string_view path;
  if (const auto slash = rest.find('/'); slash != std::string_view::npos) {
    authority = rest.substr(0, slash);
    path = rest.substr(slash + 1);
  }
  if (has_userinfo) {
    const auto colon = userinfo.find(':');
    const std::string_view user = userinfo.substr(0, colon);
    if (!user.empty()) out.user = percent_decode(url, user, "user");
    if (colon != std::string_view::npos) {
      out.password = percent_decode(url, userinfo.substr(colon + 1), "password");
    } else if (!out.user) {
      bad_url(url, "empty user info before '@'");
    }
  }
  std::string_view host = authority;
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {
    const auto close = authority.find(']');
    if (close == std::string_view::npos) bad_url(url, "IPv6 host is missing its closing ']'");
    host = authority.substr(1, close - 1);
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') bad_url(url, "unexpected text after the IPv6 host");
      port = after.substr(1);
      if (port.empty()) bad_url(url, "empty port");
    }
  } else if (const auto colon = authority.find(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
    if (port.empty()) bad_url(url, "empty port");
  }
  if (host.empty()) bad_url(url, "missing host");
  for (const char c : host) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '-' || c == '_' || c == ':';
    if (!ok) bad_url(url, "host contains an invalid character");
  }
  out.host = std::string(host);
  if (!port.empty()) out.port = parse_number(url, port, "port", 1, 65535);
  if (!path.empty()) out.db = parse_number(url, path, "database", 0, kMaxDb);
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
  out.socket_path = std::string(path);
  while (!query.empty()) {
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
      bad_url(url, "unknown query parameter '" + std::string(name) + "' (known: db, user, password)");
    }
  }
  return out;
}

}  // namespace

RedisUrl parse_redis_url(std::string_view url) {
  const auto scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) bad_url(url, "missing scheme (expected redis:// or unix://)");
  const std::string_view scheme = url.substr(0, scheme_end);
  const std::string_view rest = url.substr(scheme_end + 3);
  if (scheme == "redis") return parse_tcp(url, rest);
  if (scheme == "unix") return parse_unix(url, rest);
  if (scheme == "rediss") bad_url(url, "TLS (rediss://) is not supported yet");
  bad_url(url, "unknown scheme '" + std::string(scheme) + "' (expected redis:// or unix://)");
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
  if (user || password) {
    auth = user.value_or("");
    if (password) auth += ":***";
    auth += "@";
  }
  const bool v6 = host.find(':') != std::string::npos;
  return "redis://" + auth + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port) +
         (db != 0 ? "/" + std::to_string(db) : "");
}

}  // namespace lockbridge
