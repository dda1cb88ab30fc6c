#include "cluster/cluster_nodes.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <string>
#include <vector>

#include "cluster/key_slot.hpp"
#include "lockbridge/error.hpp"

namespace lockbridge::detail {

namespace {
[[noreturn]] void malformed(std::string_view line, const std::string& what) {
  throw Error(Errc::protocol, "CLUSTER NODES line '" + std::string(line.substr(0, 120)) + "': " + what);
}

std::vector<std::string_view> fields_of(std::string_view line) {
  std::vector<std::string_view> fields;
  while (!line.empty()) {
    const auto space = line.find(' ');
    if (space != 0) fields.push_back(line.substr(0, space));
    if (space == std::string_view::npos) break;
    line.remove_prefix(space + 1);
  }
  return fields;
}

template <class Number>
Number number(std::string_view line, std::string_view text, const char* what) {
  Number value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    malformed(line, std::string("bad ") + what);
  return value;
}

bool has_flag(std::string_view flags, std::string_view flag) {
  while (!flags.empty()) {
    const auto comma = flags.find(',');
    if (flags.substr(0, comma) == flag) return true;
    if (comma == std::string_view::npos) break;
    flags.remove_prefix(comma + 1);
  }
  return false;
}

struct Claim {
  std::uint64_t epoch;
  NodeAddress master;
  std::uint16_t first;
  std::uint16_t last;
};
}  // namespace

SlotMap slot_map_from_cluster_nodes(std::string_view text, const NodeAddress& asked) {
  std::vector<Claim> claims;
  while (!text.empty()) {
    const auto newline = text.find('\n');
    const std::string_view line = text.substr(0, newline);
    text = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
    const std::vector<std::string_view> fields = fields_of(line);
    if (fields.empty()) continue;
    // <id> <ip:port@cport[,hostname]> <flags> <master> <ping> <pong> <epoch> <link> <slot>...
    if (fields.size() < 8) malformed(line, "fewer than 8 fields");
    const std::string_view flags = fields[2];
    if (!has_flag(flags, "master") || has_flag(flags, "noaddr") || has_flag(flags, "handshake")) continue;
    const std::string_view endpoint = fields[1].substr(0, fields[1].find('@'));
    const auto colon = endpoint.rfind(':');
    if (colon == std::string_view::npos) malformed(line, "no port in the address");
    NodeAddress master{std::string(endpoint.substr(0, colon)), number<int>(line, endpoint.substr(colon + 1), "port")};
    if (!valid_port(master.port)) malformed(line, "port outside 1..65535");
    if (master.host.empty()) master.host = asked.host;
    const auto epoch = number<std::uint64_t>(line, fields[6], "config epoch");
    for (std::size_t i = 8; i < fields.size(); ++i) {
      const std::string_view range = fields[i];
      if (range.front() == '[') continue;  // a slot being migrated or imported: still its owner's
      const auto dash = range.find('-');
      const auto first = number<unsigned>(line, range.substr(0, dash), "slot");
      const auto last = dash == std::string_view::npos ? first : number<unsigned>(line, range.substr(dash + 1), "slot");
      if (first > last || last >= kSlotCount) malformed(line, "slot range outside 0..16383");
      claims.push_back({epoch, master, static_cast<std::uint16_t>(first), static_cast<std::uint16_t>(last)});
    }
  }
  // Lower epochs first, so a newer claim on the same slot overwrites an older one.
  std::stable_sort(claims.begin(), claims.end(), [](const Claim& a, const Claim& b) { return a.epoch < b.epoch; });
  SlotMap map;
  for (const Claim& claim : claims) {
    for (unsigned slot = claim.first; slot <= claim.last; ++slot)
      map.move(static_cast<std::uint16_t>(slot), claim.master);
  }
  return map;
}

}  // namespace lockbridge::detail
