// A semaphore's operations (Redisson's RSemaphore, docs/design.md §4.4e), written once for both
// fronts as coroutines over Routes: Semaphore runs them in place on the blocking front's routes,
// EventSemaphore on the loop's pipelines. `routes` and `semaphore` outlive each task. Permit
// counts are checked first (Error{bad_option}): the peers read them as a Java int.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <stop_token>

#include "core/announced_key.hpp"
#include "core/routes.hpp"
#include "lockbridge/event_loop.hpp"
#include "lockbridge/semaphore.hpp"
#include "util/task.hpp"

namespace lockbridge::detail::semaphore_calls {

// The semaphore's key and channel on `client`, `options` checked; `front` names the object in
// errors. Throws Error{bad_option} as Semaphore's constructor says.
AnnouncedKey announced(const Client& client, std::string key, const SemaphoreOptions& options, std::string_view front);

// Sets the permits when none are set: true when set. `permits` >= 0.
Task<bool> try_set_permits(Routes& routes, const AnnouncedKey& semaphore, std::int64_t permits);
// Adds `permits` (negative: takes them away) and announces the new number, which it returns.
Task<std::int64_t> add_permits(Routes& routes, const AnnouncedKey& semaphore, std::int64_t permits);
Task<std::int64_t> available(Routes& routes, const AnnouncedKey& semaphore);
// Takes every available permit: how many.
Task<std::int64_t> drain(Routes& routes, const AnnouncedKey& semaphore);
// Takes `permits` (>= 1) at once or none: true when taken.
Task<bool> try_acquire(Routes& routes, const AnnouncedKey& semaphore, std::int64_t permits);
// Until `permits` are taken (true), `deadline` or `stop` (false). `loop` null: in place.
Task<bool> acquire(Routes& routes, const AnnouncedKey& semaphore, std::int64_t permits, std::shared_ptr<EventLoop> loop,
                   std::chrono::steady_clock::time_point deadline, std::stop_token stop,
                   std::chrono::milliseconds recheck);
// Gives back `permits` (>= 1), announced.
Task<void> release(Routes& routes, const AnnouncedKey& semaphore, std::int64_t permits);

}  // namespace lockbridge::detail::semaphore_calls
