// One script call on the server that serves its first key, from the blocking front: the objects
// that are not locks (Latch, Semaphore) run their scripts through it, with the lock's routing
// (the pool's connection, or on Redis Cluster the slot's master, redirects followed), its
// EVALSHA-then-EVAL rule and its errors, which name the key.
#pragma once

#include <string_view>

#include "redis/client_state.hpp"
#include "redis/reply.hpp"
#include "redis/script_runner.hpp"

namespace lockbridge::detail {

// The reply of `call` (keys[0] routes it). Throws Error: the script's error replies as
// throw_if_script_error maps them (wrong_type, bad_value), and the connection's failures, each
// naming `operation` and the key.
ReplyPtr run_on_key(ClientState& state, const ScriptCall& call, std::string_view operation);

// Permits and counts the Java peers read as an int (Redisson's semaphores): refused (bad_option,
// naming `what`) below `least` or above kJavaIntMax.
inline constexpr std::int64_t kJavaIntMax = 2147483647;
void require_java_int(std::string_view what, std::int64_t value, std::int64_t least);

// The integer a reply holds, for scripts that answer one. Throws Error{protocol} otherwise.
std::int64_t integer_of(const redisReply& reply, std::string_view operation, std::string_view key);

}  // namespace lockbridge::detail
