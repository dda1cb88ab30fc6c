// One script call, or one read of an integer, on the server that serves its key, for the objects
// that are not locks (Latch, Semaphore, LeasedSemaphore) on either front: written once as
// coroutines over Routes (the blocking front's borrow a pooled connection and run in place; the
// event-driven front's pipeline on the loop), with the lock's routing (on Redis Cluster the slot's
// master, redirects followed), its EVALSHA-then-EVAL rule and its errors, which name the key.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/routes.hpp"
#include "redis/client_state.hpp"
#include "redis/reply.hpp"
#include "redis/script_runner.hpp"
#include "util/task.hpp"

namespace lockbridge::detail {

// The reply of `call` (keys[0] routes it), no route's wait past `deadline`. Throws Error: the
// script's error replies as throw_if_script_error maps them (wrong_type, bad_value), and the
// connection's failures, each naming `operation` and the key. `sent`, when given, is set once a
// connection was had for the call: a failure before that (a pool busy until the deadline, no
// server reached) cannot have run the script.
Task<ReplyPtr> call_on_key(Routes& routes, ScriptCache& scripts, const ScriptCall& call, std::string_view operation,
                           Routes::Clock::time_point deadline = Routes::Clock::time_point::max(),
                           bool* sent = nullptr);
// The same, on the blocking front, in place.
ReplyPtr run_on_key(ClientState& state, const ScriptCall& call, std::string_view operation);

// The integer `key` holds (GET), 0 when absent, no route's wait past `deadline`. Throws Error:
// bad_value for a value that is no integer, wrong_type, and the connection's failures, naming
// `operation` and the key.
Task<std::int64_t> read_integer(Routes& routes, std::string key, std::string_view operation,
                                Routes::Clock::time_point deadline = Routes::Clock::time_point::max());

// Permits and counts the Java peers read as an int (Redisson's semaphores): refused (bad_option,
// naming `what`) below `least` or above kJavaIntMax.
inline constexpr std::int64_t kJavaIntMax = 2147483647;
void require_java_int(std::string_view what, std::int64_t value, std::int64_t least);

// The integer a reply holds, for scripts that answer one. Throws Error{protocol} otherwise.
std::int64_t integer_of(const redisReply& reply, std::string_view operation, std::string_view key);

}  // namespace lockbridge::detail
