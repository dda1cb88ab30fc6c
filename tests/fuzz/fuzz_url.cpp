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
    // A password is never shown: checked where it can only have come from the userinfo (it occurs
    // once in the text, nothing was percent-decoded into another part, and it is too long to be
    // part of what the printed form adds: a default port, "***").
    if (url.password && url.password->size() >= 8 && text.find('%') == std::string_view::npos) {
      const std::size_t first = text.find(*url.password);
      const bool once =
          first != std::string_view::npos && text.find(*url.password, first + 1) == std::string_view::npos;
      if (once && shown.find(*url.password) != std::string::npos) std::abort();
    }
    for (const lockbridge::RedisUrl::Node& node : url.nodes) (void)url.server(node).redacted();
  } catch (const lockbridge::Error&) {
    // Refused with a message: what bad input should get.
  }
  return 0;
}
