// Recognising cluster redirects in error replies: "MOVED <slot> <host>:<port>" (the slot has a new
// master for good) and "ASK <slot> <host>:<port>" (ask that node once, during a migration).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "cluster/node_address.hpp"

namespace lockbridge::detail {

struct Redirect {
  enum class Kind { moved, ask };
  Kind kind;
  std::uint16_t slot;  // < 16384
  // The port follows the LAST colon, so IPv6 hosts need no brackets ("::1:7000"). An empty host
  // ("MOVED 1 :7000", Redis 7 with an unknown endpoint) means the node that sent the redirect.
  NodeAddress to;
};

// The redirect in an error reply's text (without the leading '-'); nullopt for any other error,
// and for MOVED/ASK text that is malformed (slot outside 0..16383, port outside 1..65535, missing
// or extra fields), which is then better reported as the error it is than followed.
std::optional<Redirect> parse_redirect(std::string_view error_text);

}  // namespace lockbridge::detail
