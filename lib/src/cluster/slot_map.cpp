#include "cluster/slot_map.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "cluster/key_slot.hpp"
#include "lockbridge/error.hpp"

namespace lockbridge::detail {
namespace {

// masters_ can never hold more than kSlotCount entries (each serves a slot), so 0xFFFF is free.
constexpr std::uint16_t kUnassigned = 0xFFFF;
static_assert(kSlotCount <= kUnassigned);

[[noreturn]] void malformed(std::size_t entry, const std::string& what) {
  throw Error(Errc::protocol, "CLUSTER SLOTS reply, entry " + std::to_string(entry) + ": " + what);
}

std::uint16_t slot_bound(const Reply& bound, std::size_t entry, const char* which) {
  if (bound.kind != Reply::Kind::integer) malformed(entry, std::string(which) + " slot is not an integer");
  if (bound.integer < 0 || bound.integer >= static_cast<std::int64_t>(kSlotCount))
    malformed(entry, std::string(which) + " slot " + std::to_string(bound.integer) + " is outside 0..16383");
  return static_cast<std::uint16_t>(bound.integer);
}

// The master is the entry's third element: [host, port, id?, metadata?]; only host and port matter.
NodeAddress master_address(const Reply& node, const NodeAddress& asked, std::size_t entry) {
  if (node.kind != Reply::Kind::array || node.elements.size() < 2) malformed(entry, "master is not [host, port, ...]");
  const Reply& host = node.elements[0];
  const Reply& port = node.elements[1];
  if (port.kind != Reply::Kind::integer) malformed(entry, "master port is not an integer");
  if (!valid_port(port.integer))
    malformed(entry, "master port " + std::to_string(port.integer) + " is outside 1..65535");
  NodeAddress address{.host = {}, .port = static_cast<int>(port.integer)};
  // Redis 7 sends nil for an unknown endpoint (cluster-preferred-endpoint-type unknown-endpoint,
  // nodes behind a load balancer) and "" when a node does not know its own IP (a one-node
  // cluster): both mean "the address you reached me at", with the port given here.
  if (host.kind == Reply::Kind::nil) {
    address.host = asked.host;
  } else if (host.kind == Reply::Kind::string) {
    if (host.str == "?")
      malformed(entry,
                "master endpoint is \"?\": the node announces no hostname but "
                "cluster-preferred-endpoint-type is hostname");
    address.host = host.str.empty() ? asked.host : host.str;
  } else {
    malformed(entry, "master host is not a string");
  }
  return address;
}

}  // namespace

SlotMap::SlotMap() : slots_(kSlotCount, kUnassigned) {}

SlotMap::SlotMap(const Reply& cluster_slots, const NodeAddress& asked) : SlotMap() {
  if (asked.host.empty()) throw Error(Errc::bad_option, "SlotMap: the asked node's host is empty");
  if (cluster_slots.kind == Reply::Kind::error) throw Error(Errc::server_reply, "CLUSTER SLOTS: " + cluster_slots.str);
  if (cluster_slots.kind != Reply::Kind::array) throw Error(Errc::protocol, "CLUSTER SLOTS reply is not an array");

  for (std::size_t i = 0; i < cluster_slots.elements.size(); ++i) {
    const Reply& entry = cluster_slots.elements[i];
    if (entry.kind != Reply::Kind::array || entry.elements.size() < 3)
      malformed(i, "not [first slot, last slot, master, replicas...]");
    const auto first = slot_bound(entry.elements[0], i, "first");
    const auto last = slot_bound(entry.elements[1], i, "last");
    if (first > last)
      malformed(i, "first slot " + std::to_string(first) + " is after last slot " + std::to_string(last));
    const auto master = index_of(master_address(entry.elements[2], asked, i));
    for (std::size_t slot = first; slot <= last; ++slot) {
      // One node's view gives each slot one owner; a slot twice means we misread the reply.
      if (slots_[slot] != kUnassigned) malformed(i, "slot " + std::to_string(slot) + " is listed twice");
      slots_[slot] = master;
      ++covered_;
    }
  }
}

std::optional<NodeAddress> SlotMap::master_of(std::uint16_t slot) const {
  if (slot >= kSlotCount || slots_[slot] == kUnassigned) return std::nullopt;
  return masters_[slots_[slot]];
}

void SlotMap::move(std::uint16_t slot, NodeAddress to) {
  if (slot >= kSlotCount)
    throw Error(Errc::bad_option, "SlotMap::move: slot " + std::to_string(slot) + " is outside 0..16383");
  // An empty host would be "whichever node we happen to ask next": wrong for every later key.
  if (to.host.empty()) throw Error(Errc::bad_option, "SlotMap::move: the new master's host is empty");
  if (!valid_port(to.port))
    throw Error(Errc::bad_option, "SlotMap::move: port " + std::to_string(to.port) + " is outside 1..65535");

  const auto next = index_of(to);  // first: if it throws, nothing has changed
  const auto previous = std::exchange(slots_[slot], next);
  if (previous == kUnassigned) {
    ++covered_;
  } else if (previous != next) {
    drop_if_unused(previous);
  }
}

bool SlotMap::complete() const noexcept { return covered_ == kSlotCount; }

std::uint16_t SlotMap::index_of(const NodeAddress& master) {
  // A linear search: a cluster has a handful of masters, and this runs per reply entry or MOVED.
  const auto found = std::find(masters_.begin(), masters_.end(), master);
  if (found != masters_.end()) return static_cast<std::uint16_t>(found - masters_.begin());
  masters_.push_back(master);
  return static_cast<std::uint16_t>(masters_.size() - 1);
}

// After a MOVED, the old master may serve nothing any more (its last slot migrated away); keep
// masters() to the nodes that serve slots. A full scan, but MOVED is rare: only after resharding.
void SlotMap::drop_if_unused(std::uint16_t index) {
  if (std::find(slots_.begin(), slots_.end(), index) != slots_.end()) return;
  masters_.erase(masters_.begin() + index);
  for (auto& slot : slots_)
    if (slot != kUnassigned && slot > index) --slot;
}

}  // namespace lockbridge::detail
