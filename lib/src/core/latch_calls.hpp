// A latch's operations (Redisson's RCountDownLatch, docs/design.md §4.4e), written once for both
// fronts as coroutines over Routes: Latch runs them in place on the blocking front's routes,
// EventLatch on the loop's pipelines. `routes` and `latch` outlive each task.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <stop_token>

#include "core/announced_key.hpp"
#include "core/routes.hpp"
#include "lockbridge/event_loop.hpp"
#include "lockbridge/latch.hpp"
#include "util/task.hpp"

namespace lockbridge::detail::latch_calls {

// The latch's key and channel on `client`, `options` checked; `front` names the object in errors.
// Throws Error{bad_option} as Latch's constructor says.
AnnouncedKey announced(const Client& client, std::string key, const LatchOptions& options, std::string_view front);

// Sets the count when the latch is open: true when set. Throws Error (bad_option: a count that is
// not positive or not exact as a Lua double).
Task<bool> try_set_count(Routes& routes, const AnnouncedKey& latch, std::int64_t count);
Task<void> count_down(Routes& routes, const AnnouncedKey& latch);
// 0 when open; no route's wait (a full pool, a sentinel, a TRYAGAIN) past `deadline`.
Task<std::int64_t> count(Routes& routes, const AnnouncedKey& latch,
                         Routes::Clock::time_point deadline = Routes::Clock::time_point::max());
// Until the latch opens (true), `deadline` or `stop` (false). `loop` null: in place.
Task<bool> wait(Routes& routes, const AnnouncedKey& latch, std::shared_ptr<EventLoop> loop,
                std::chrono::steady_clock::time_point deadline, std::stop_token stop,
                std::chrono::milliseconds recheck);

}  // namespace lockbridge::detail::latch_calls
