#include "cluster/redirect.hpp"

#include <charconv>
#include <string>
#include <system_error>

#include "cluster/key_slot.hpp"

namespace lockbridge::detail {
namespace {

// Decimal digits only, all of them used: from_chars alone would accept "12abc" as 12.
std::optional<long long> whole_number(std::string_view text) {
  long long value = 0;
  const auto* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || text.front() == '-' || error != std::errc{} || stop != end) return std::nullopt;
  return value;
}

}  // namespace

std::optional<Redirect> parse_redirect(std::string_view error_text) {
  Redirect redirect{};
  std::string_view rest;
  if (error_text.starts_with("MOVED ")) {
    redirect.kind = Redirect::Kind::moved;
    rest = error_text.substr(6);
  } else if (error_text.starts_with("ASK ")) {
    redirect.kind = Redirect::Kind::ask;
    rest = error_text.substr(4);
  } else {
    return std::nullopt;
  }

  // Exactly "<slot> <endpoint>": the server writes nothing else, so anything else is not a redirect.
  const auto space = rest.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  const auto endpoint = rest.substr(space + 1);
  if (endpoint.find(' ') != std::string_view::npos) return std::nullopt;

  const auto slot = whole_number(rest.substr(0, space));
  if (!slot || *slot >= static_cast<long long>(kSlotCount)) return std::nullopt;
  redirect.slot = static_cast<std::uint16_t>(*slot);

  // The LAST colon: an IPv6 host is written bare ("::1:7000"), its own colons before the port's.
  const auto colon = endpoint.rfind(':');
  if (colon == std::string_view::npos) return std::nullopt;
  const auto port = whole_number(endpoint.substr(colon + 1));
  if (!port || !valid_port(*port)) return std::nullopt;
  redirect.to = NodeAddress{.host = std::string(endpoint.substr(0, colon)), .port = static_cast<int>(*port)};
  return redirect;
}

}  // namespace lockbridge::detail
