// The slot map from CLUSTER NODES, the form that carries each master's config epoch: right after
// a failover two masters can claim a slot in one node's view (the dead one and the replica that
// replaced it), and the higher epoch is the current owner. CLUSTER SLOTS shows no epochs.
#pragma once

#include <string_view>

#include "cluster/node_address.hpp"
#include "cluster/slot_map.hpp"

namespace lockbridge::detail {

// Reads every "master" line's slot ranges ("0-5460", "42"; migrating and importing entries in
// brackets are ignored) and gives each slot to the claiming master with the highest config
// epoch. Masters flagged "noaddr" or "handshake" are skipped. An empty host (a node that does not
// know its own IP) means `asked`. Throws Error{protocol} for a malformed line.
SlotMap slot_map_from_cluster_nodes(std::string_view text, const NodeAddress& asked);

}  // namespace lockbridge::detail
