// What a lock key says of its holder and its lease, from one read of it (audit's KeySample and
// Classification): shared by `inspect` (one key) and `watch` (every key matching a pattern).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>

#include "audit/classify.hpp"

namespace lockbridge::tools {

// Sets out["holder"] to who holds it, where the format says: a UUID (legacy_uuid_ms), the value
// (token, python-redis-lock), Redisson's [{client_thread, count}]; null for legacy timestamps, which
// carry no owner. Bytes that are not UTF-8 are written as put_key writes a key: "holder_base64"
// (or "client_thread_base64", "count_base64") beside the escaped text holds them exactly.
void put_holder(nlohmann::ordered_json& out, const audit::KeySample& sample, const audit::Classification& found);

// When the lease ends (epoch ms by `server_now_ms`'s clock): the value's expiry for timestamp
// locks, else the key's TTL; nullopt when it has neither.
std::optional<std::int64_t> lease_end_of(const audit::KeySample& sample, const audit::Classification& found,
                                         std::int64_t server_now_ms);

}  // namespace lockbridge::tools
