// A permit-expirable semaphore's operations (Redisson's RPermitExpirableSemaphore, docs/design.md
// §4.4f), written once for both fronts as coroutines over Routes: LeasedSemaphore runs them in
// place on the blocking front's routes, EventLeasedSemaphore on the loop's pipelines. `routes` and
// `semaphore` outlive each task. Permit ids travel as 32 hex digits, as Java hands them out, and
// are kept in Redis as `ids` says.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "core/announced_key.hpp"
#include "core/routes.hpp"
#include "lockbridge/event_loop.hpp"
#include "lockbridge/leased_semaphore.hpp"
#include "util/task.hpp"

namespace lockbridge::detail::leased_calls {

// The semaphore's key and channel on `client`, `options` checked; `front` names the object in
// errors. Throws Error{bad_option} as LeasedSemaphore's constructor says.
AnnouncedKey announced(const Client& client, std::string key, const LeasedSemaphoreOptions& options,
                       std::string_view front);
// Refuses (bad_option) a lease that is neither 1 ms to 365 days nor kNoLease, before any I/O.
void require_lease(std::chrono::milliseconds lease);

Task<bool> try_set_permits(Routes& routes, const AnnouncedKey& semaphore, std::int64_t permits);
Task<std::int64_t> add_permits(Routes& routes, const AnnouncedKey& semaphore, std::int64_t permits);
// After giving back the permits whose lease ended.
Task<std::int64_t> available(Routes& routes, const AnnouncedKey& semaphore);
// Refuses (bad_option) a number of permits at once outside 1 to LeasedSemaphore::kMostPermitsAtOnce.
void require_permits(std::int64_t permits);
// `permits` permits for `lease`, all or none: their ids, or none when `deadline` passed or `stop`
// was requested first. A deadline already past: one attempt. `loop` null: in place.
Task<std::vector<std::string>> acquire(Routes& routes, const AnnouncedKey& semaphore, PermitIds ids,
                                       std::int64_t permits, std::chrono::milliseconds lease,
                                       std::shared_ptr<EventLoop> loop, std::chrono::steady_clock::time_point deadline,
                                       std::stop_token stop, std::chrono::milliseconds recheck);
// true when the permit was held within its lease (given back either way, as Redisson does).
Task<bool> release(Routes& routes, const AnnouncedKey& semaphore, PermitIds ids, std::string permit);
// All the permits or none: how many were given back, 0 when any id held no permit within its
// lease (then none is). Malformed or repeated ids: Error{bad_option}, before any I/O.
Task<std::int64_t> release(Routes& routes, const AnnouncedKey& semaphore, PermitIds ids,
                           std::vector<std::string> permits);
// false when the id holds no permit (any more).
Task<bool> update_lease(Routes& routes, const AnnouncedKey& semaphore, PermitIds ids, std::string permit,
                        std::chrono::milliseconds lease);

}  // namespace lockbridge::detail::leased_calls
