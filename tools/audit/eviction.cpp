#include "eviction.hpp"

#include <ostream>

#include "cli_common.hpp"
#include "lockbridge/error.hpp"
#include "lockbridge/name_table.hpp"
#include "replies.hpp"

namespace lockbridge::tools::audit {
namespace {

// A count or a size from INFO: a whole number, not negative.
std::optional<std::int64_t> amount(std::string_view text) {
  const std::optional<std::int64_t> value = whole_number(text);
  return value && *value >= 0 ? value : std::nullopt;
}

// What each reach means, for the text summary.
constexpr NameTable<Eviction::Reach, 3> kReachTexts{{{
    {Eviction::Reach::none, "evicts no key"},
    {Eviction::Reach::with_ttl,
     "may evict lock keys with a TTL (every lock but faithful legacy stamps); a lock evicted is lost"},
    {Eviction::Reach::any, "may evict any lock key; a lock evicted is lost"},
}}};

}  // namespace

Eviction::Reach Eviction::reach() const noexcept {
  if (!error.empty() || policy.empty() || !maxmemory) return Reach::unknown;
  if (*maxmemory == 0 || policy == "noeviction") return Reach::none;
  if (policy.starts_with("volatile-")) return Reach::with_ttl;
  if (policy.starts_with("allkeys-")) return Reach::any;
  return Reach::unknown;  // a policy this version does not know: not called safe
}

void parse_info_into(std::string_view info, Eviction& out) {
  for_each_info_field(info, [&out](std::string_view field, std::string_view value) {
    if (field == "maxmemory_policy") out.policy = std::string(value);
    if (field == "maxmemory") out.maxmemory = amount(value);
    if (field == "evicted_keys") out.evicted_keys = amount(value);
  });
}

Eviction read_eviction(const Client& master) {
  Eviction out;
  out.server = master.url().redacted();
  try {
    parse_info_into(string_reply(master.command({"INFO", "memory"}), {"INFO"}), out);
  } catch (const Error& error) {
    if (error.errc() != Errc::server_reply) throw;
    out.error = error.what();
    return out;
  }
  try {
    // Only evicted_keys: an ACL that allows INFO memory alone leaves the count unknown, not the policy.
    parse_info_into(string_reply(master.command({"INFO", "stats"}), {"INFO"}), out);
  } catch (const Error& error) {
    if (error.errc() != Errc::server_reply) throw;
  }
  if (out.error.empty() && out.reach() == Eviction::Reach::unknown) {
    out.error = out.policy.empty() || !out.maxmemory ? "INFO memory has no maxmemory or maxmemory_policy"
                                                      : "unknown maxmemory-policy '" + out.policy + "'";
  }
  return out;
}

std::string_view to_string(Eviction::Reach reach) noexcept { return kReachNames.name(reach); }

bool any_not_known_safe(const std::vector<Eviction>& servers) noexcept {
  for (const Eviction& server : servers) {
    if (server.reach() != Eviction::Reach::none) return true;
  }
  return false;
}

nlohmann::ordered_json to_json(const std::vector<Eviction>& servers) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const Eviction& server : servers) {
    nlohmann::ordered_json line;
    line["server"] = server.server;
    line["maxmemory_policy"] =
        server.policy.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(server.policy);
    line["maxmemory"] = server.maxmemory ? nlohmann::ordered_json(*server.maxmemory) : nlohmann::ordered_json(nullptr);
    line["evicted_keys"] =
        server.evicted_keys ? nlohmann::ordered_json(*server.evicted_keys) : nlohmann::ordered_json(nullptr);
    line["may_evict"] = to_string(server.reach());
    if (!server.error.empty()) line["error"] = server.error;
    out.push_back(std::move(line));
  }
  return out;
}

void print(std::ostream& out, const std::vector<Eviction>& servers) {
  for (const Eviction& server : servers) {
    out << "eviction on " << server.server << ": ";
    if (server.reach() == Eviction::Reach::unknown) {
      out << "unknown (" << server.error << ")\n";
      continue;
    }
    out << server.policy << ", maxmemory " << *server.maxmemory << (*server.maxmemory == 0 ? " (no limit)" : "")
        << ": " << kReachTexts.name(server.reach());
    if (server.evicted_keys) out << "; " << *server.evicted_keys << " keys evicted since the server started";
    out << "\n";
  }
}

}  // namespace lockbridge::tools::audit
