#include "lock_view.hpp"

#include "saturating.hpp"

namespace lockbridge::tools {

nlohmann::ordered_json holder_of(const audit::KeySample& sample, const audit::Classification& found) {
  switch (found.lock_class) {
    case audit::LockClass::legacy_uuid_ms:
      return sample.value.substr(0, sample.value.find(':'));
    case audit::LockClass::token:
    case audit::LockClass::python_redis_lock:
      return sample.type == "string" ? nlohmann::ordered_json(sample.value) : nlohmann::ordered_json(nullptr);
    case audit::LockClass::redisson: {
      nlohmann::ordered_json holders = nlohmann::ordered_json::array();
      for (const auto& [field, count] : sample.fields) holders.push_back({{"client_thread", field}, {"count", count}});
      return holders;
    }
    default:
      return nullptr;  // legacy timestamps carry no owner
  }
}

std::optional<std::int64_t> lease_end_of(const audit::KeySample& sample, const audit::Classification& found,
                                         std::int64_t server_now_ms) {
  if (found.expiry_ms) return found.expiry_ms;
  if (sample.pttl_ms >= 0) return add_saturating(server_now_ms, sample.pttl_ms);
  return std::nullopt;
}

}  // namespace lockbridge::tools
