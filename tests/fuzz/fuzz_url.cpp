// Redis URLs of every scheme (redis, rediss, unix, redis-sentinel, redis-cluster, redis-redlock and
// their TLS forms), query options included: parse_redis_url() either gives a URL or throws
// lockbridge::Error, and what it gives can be printed without its password and split into servers.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "lockbridge/error.hpp"
#include "lockbridge/url.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const lockbridge::RedisUrl url = lockbridge::parse_redis_url(text);
    const std::string shown = url.redacted();
    // A password is never shown: what is printed does not depend on it. Checked where the password
    // occurs once, literally, in the text: the same URL with another password of the same length
    // must print the same.
    if (url.password && !url.password->empty() && text.find('%') == std::string_view::npos) {
      const std::size_t at = text.find(*url.password);
      if (at != std::string_view::npos && text.find(*url.password, at + 1) == std::string_view::npos) {
        std::string other(text);
        other.replace(at, url.password->size(), std::string(url.password->size(), 'x'));
        try {
          const lockbridge::RedisUrl same = lockbridge::parse_redis_url(other);
          if (same.password == std::string(url.password->size(), 'x') && same.redacted() != shown) std::abort();
        } catch (const lockbridge::Error&) {
          // The password held a character the URL's shape depends on: nothing to compare.
        }
      }
    }
    for (const lockbridge::RedisUrl::Node& node : url.nodes) (void)url.server(node).redacted();
  } catch (const lockbridge::Error&) {
    // Refused with a message: what bad input should get.
  }
  return 0;
}
