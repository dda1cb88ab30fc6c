// Whether a server may evict lock keys. Redis evicts keys once its memory reaches maxmemory, as its
// maxmemory-policy says, and a lock key evicted is a lock lost: another client takes it while its
// holder still works (two holders; RedLock.net #101, redis #9105). INFO tells it (maxmemory,
// maxmemory_policy, evicted_keys); CONFIG GET, which managed services rename or deny, is not used.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "lockbridge/client.hpp"
#include "lockbridge/name_table.hpp"

namespace lockbridge::tools::audit {

struct Eviction {
  // Which lock keys the policy may evict once memory is full.
  enum class Reach {
    none,      // noeviction, or no maxmemory (0: no limit)
    with_ttl,  // volatile-*: keys with a TTL, which is every lock but faithful legacy stamps
    any,       // allkeys-*: every key
    unknown,   // INFO was refused (an ACL) or did not say
  };

  std::string server;  // the master's URL, password hidden
  std::string policy;  // maxmemory_policy, or "" when unknown
  std::optional<std::int64_t> maxmemory;     // bytes; 0: no limit
  std::optional<std::int64_t> evicted_keys;  // since the server started
  std::string error;                          // why it is unknown

  Reach reach() const noexcept;
};

// Reads INFO memory and INFO stats of one server. An error reply (an ACL's NOPERM) is kept in
// Eviction::error, not thrown: the audit of the keys goes on. Throws Error for transport failures.
Eviction read_eviction(const Client& master);

// Parses INFO's "field:value" lines (CRLF or LF) into the three fields above; others are ignored.
void parse_info_into(std::string_view info, Eviction& out);

// JSON's may_evict: none, keys_with_ttl, any_key, unknown.
inline constexpr NameTable<Eviction::Reach, 4> kReachNames{{{
    {Eviction::Reach::none, "none"},
    {Eviction::Reach::with_ttl, "keys_with_ttl"},
    {Eviction::Reach::any, "any_key"},
    {Eviction::Reach::unknown, "unknown"},
}}};
std::string_view to_string(Eviction::Reach reach) noexcept;
// Whether any of `servers` is not known to keep its lock keys: it may evict them (reach with_ttl or
// any), or could not say (unknown). --fail-on eviction fails closed: a gate is no gate if an ACL
// that denies INFO, or a policy newer than this code, lets it pass.
bool any_not_known_safe(const std::vector<Eviction>& servers) noexcept;

// [{"server", "maxmemory_policy", "maxmemory", "evicted_keys", "may_evict", "error"?}, ...]
nlohmann::ordered_json to_json(const std::vector<Eviction>& servers);
// One line per server: "eviction on redis://...: allkeys-lru, maxmemory 1048576: may evict any lock
// key (a lock evicted is lost); 12 keys evicted since the server started".
void print(std::ostream& out, const std::vector<Eviction>& servers);

}  // namespace lockbridge::tools::audit
