#include "lock_view.hpp"

#include "cli_common.hpp"
#include "key_text.hpp"
#include "saturating.hpp"

namespace lockbridge::tools {

void put_holder(nlohmann::ordered_json& out, const audit::KeySample& sample, const audit::Classification& found) {
  // A holder is bytes from Redis, as a key is (a type hint names any value a token): put_key keeps
  // them exact and the JSON valid.
  switch (found.lock_class) {
    case audit::LockClass::legacy_uuid_ms:
      put_key(out, std::string_view(sample.value).substr(0, sample.value.find(':')), "holder");
      return;
    case audit::LockClass::token:
    case audit::LockClass::python_redis_lock:
      if (sample.type == "string") {
        put_key(out, sample.value, "holder");
      } else {
        out["holder"] = nullptr;
      }
      return;
    case audit::LockClass::redisson:
    case audit::LockClass::redisson_rwlock: {
      nlohmann::ordered_json holders = nlohmann::ordered_json::array();
      for (const auto& [field, count] : sample.fields) {
        if (field == "mode" && sample.mode) continue;
        nlohmann::ordered_json holder;
        put_key(holder, field, "client_thread");
        // Redisson writes its re-entry count as an integer: a number, as every count is here.
        if (const auto number = whole_number(count)) {
          holder["count"] = *number;
        } else {
          put_key(holder, count, "count");
        }
        holders.push_back(std::move(holder));
      }
      out["holder"] = sample.type == "hash" ? std::move(holders) : nlohmann::ordered_json(nullptr);
      // A read/write lock: who holds it how (a writer's field ends in ":write").
      if (sample.mode) put_key(out, *sample.mode, "mode");
      return;
    }
    case audit::LockClass::redisson_fair_queue:
      out["holder"] = nullptr;
      out["waiters"] = sample.size >= 0 ? nlohmann::ordered_json(sample.size) : nlohmann::ordered_json(nullptr);
      return;
    case audit::LockClass::redisson_semaphore:
    case audit::LockClass::redisson_latch: {
      out["holder"] = nullptr;
      // The permits available, the latch's count; a permit-expirable semaphore's leases: how many are held.
      const char* name = found.lock_class == audit::LockClass::redisson_latch ? "count"
                         : sample.type == "zset"                              ? "permits_held"
                                                                             : "permits";
      const std::optional<std::int64_t> number =
          sample.type == "zset" ? (sample.size >= 0 ? std::optional<std::int64_t>(sample.size) : std::nullopt)
                                : whole_number(sample.value);
      out[name] = number ? nlohmann::ordered_json(*number) : nlohmann::ordered_json(nullptr);
      return;
    }
    default:
      out["holder"] = nullptr;  // legacy timestamps carry no owner
  }
}

std::optional<std::int64_t> lease_end_of(const audit::KeySample& sample, const audit::Classification& found,
                                         std::int64_t server_now_ms) {
  if (found.expiry_ms) return found.expiry_ms;
  if (sample.pttl_ms >= 0) return add_saturating(server_now_ms, sample.pttl_ms);
  return std::nullopt;
}

}  // namespace lockbridge::tools
