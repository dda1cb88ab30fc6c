#include "core/rwlock_sides.hpp"

#include <string>

#include "strategies/redisson.hpp"
#include "strategies/redisson_rwlock.hpp"

namespace lockbridge::detail {

RwLockSides rwlock_sides(ClientState& state, MutexOptions options, std::string_view front) {
  options.validate();
  const std::string who(front);
  if (options.strategy != StrategyKind::redisson) {
    throw Error(Errc::bad_option, who +
                                      " has Redisson's RReadWriteLock layout: options.strategy must be redisson "
                                      "(MutexOptions::redisson_lock())");
  }
  if (options.wait_mode == WaitMode::fair) {
    throw Error(Errc::bad_option, who + ": Redisson's read/write lock has no fair mode (wait_mode fair)");
  }
  if (options.token.fencing) {
    throw Error(Errc::bad_option, who + ": Redisson's read/write lock draws no fencing token (token.fencing)");
  }
  if (state.redlock()) throw Error(Errc::bad_option, who + " does not run on a Redlock Client");
  // A process-local line would make this process's readers take turns.
  options.local_queue = false;
  const bool on_cluster = state.cluster != nullptr;
  const std::string field = redisson_owner_field(options.redisson);
  RwLockSides sides{options, nullptr, nullptr};
  sides.writer = std::make_shared<RedissonWriteSide>(options, state.scripts, on_cluster, field);
  sides.reader = std::make_shared<RedissonReadSide>(options, state.scripts, on_cluster, field);
  return sides;
}

}  // namespace lockbridge::detail
