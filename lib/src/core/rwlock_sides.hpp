// The two sides of Redisson's read/write lock on one key (docs/design.md §4.4d), for both fronts
// (SharedMutex, EventSharedMutex): the options' checks, and the two strategies of one holder (one
// field in Redis; the writer's is the reader's + ":write").
#pragma once

#include <memory>
#include <string_view>

#include "lockbridge/options.hpp"
#include "redis/client_state.hpp"
#include "strategies/strategy.hpp"

namespace lockbridge::detail {

struct RwLockSides {
  MutexOptions options;  // as given, checked, with local_queue off (a process's readers hold together)
  std::shared_ptr<LockStrategy> writer;
  std::shared_ptr<LockStrategy> reader;
};

// Throws Error{bad_option} (naming `front`) for invalid options, another strategy than redisson,
// fair mode, fencing, and a Redlock Client. Does no I/O.
RwLockSides rwlock_sides(ClientState& state, MutexOptions options, std::string_view front);

}  // namespace lockbridge::detail
