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
// One permit for `lease`: its id, or nullopt when `deadline` passed or `stop` was requested
// first. A deadline already past: one attempt. `loop` null: in place.
Task<std::optional<std::string>> acquire(Routes& routes, const AnnouncedKey& semaphore, PermitIds ids,
                                         std::chrono::milliseconds lease, std::shared_ptr<EventLoop> loop,
                                         std::chrono::steady_clock::time_point deadline, std::stop_token stop,
                                         std::chrono::milliseconds recheck);
// true when the permit was held within its lease (given back either way, as Redisson does).
Task<bool> release(Routes& routes, const AnnouncedKey& semaphore, PermitIds ids, std::string permit);
// false when the id holds no permit (any more).
Task<bool> update_lease(Routes& routes, const AnnouncedKey& semaphore, PermitIds ids, std::string permit,
                        std::chrono::milliseconds lease);

}  // namespace lockbridge::detail::leased_calls
