// Which master serves each of the 16384 hash slots, from CLUSTER NODES (cluster_nodes.hpp) or a
// CLUSTER SLOTS reply, kept up to date between refreshes by MOVED redirects. No network.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "cluster/node_address.hpp"
#include "lockbridge/client.hpp"

namespace lockbridge::detail {

class SlotMap {
 public:
  // No slot covered.
  SlotMap();

  // Reads the masters of a CLUSTER SLOTS reply (replicas and node ids are ignored). A master
  // whose endpoint is empty or nil means `asked`, the node the command was sent to, at the port
  // in the reply. Throws Error{bad_option} when asked.host is empty; Error{server_reply} when the
  // reply is an error; Error{protocol} when it is malformed: wrong shapes, slots outside
  // 0..16383 or listed twice, ports outside 1..65535, or the endpoint "?" (a node configured to
  // announce a hostname that has none: it cannot be reached).
  SlotMap(const Reply& cluster_slots, const NodeAddress& asked);

  // The master serving `slot`; nullopt when no master does (or slot >= 16384).
  std::optional<NodeAddress> master_of(std::uint16_t slot) const;

  // Applies a MOVED redirect: `slot` is served by `to` from now on. `to` must be a full address
  // (a redirect's empty host resolved to the node that sent it). Throws Error{bad_option} for a
  // slot >= 16384, an empty host or a port outside 1..65535; the map is then unchanged.
  void move(std::uint16_t slot, NodeAddress to);

  // The distinct masters serving at least one slot, in the order they first appeared.
  const std::vector<NodeAddress>& masters() const noexcept { return masters_; }

  // True when every one of the 16384 slots has a master.
  bool complete() const noexcept;

 private:
  std::uint16_t index_of(const NodeAddress& master);
  void drop_if_unused(std::uint16_t index);

  std::vector<NodeAddress> masters_;
  // One index into masters_ per slot (32 KiB), kUnassigned when no master serves the slot.
  std::vector<std::uint16_t> slots_;
  std::size_t covered_ = 0;
};

}  // namespace lockbridge::detail
