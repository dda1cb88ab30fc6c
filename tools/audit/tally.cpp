#include "tally.hpp"

#include <iomanip>
#include <ostream>

#include "../key_text.hpp"

namespace lockbridge::tools::audit {

namespace {
std::size_t flag_index(Flag flag) {
  for (std::size_t i = 0; i < kFlagNames.entries().size(); ++i) {
    if (kFlagNames.entries()[i].first == flag) return i;
  }
  return 0;
}

nlohmann::ordered_json extreme_json(const std::optional<Tally::Extreme>& extreme, const char* field) {
  if (!extreme) return nullptr;
  nlohmann::ordered_json out;
  put_key(out, extreme->key);
  out[field] = extreme->ms;
  return out;
}
}  // namespace

void Tally::add(const KeySample& sample, const Classification& found, std::int64_t server_now_ms) {
  ++total_;
  ++by_class_[static_cast<std::size_t>(found.lock_class)];
  for (const auto& [flag, name] : kFlagNames.entries()) {
    if (found.has(flag)) ++by_flag_[flag_index(flag)];
  }
  if (found.lock_class == LockClass::other) return;
  std::optional<std::int64_t> left;
  if (found.expiry_ms) {
    left = *found.expiry_ms - server_now_ms;
  } else if (sample.pttl_ms >= 0) {
    left = sample.pttl_ms;
  }
  if (!left) return;
  if (*left < 0 && (!oldest_stale_ || -*left > oldest_stale_->ms)) oldest_stale_ = Extreme{sample.key, -*left};
  if (*left >= 0 && (!longest_lease_ || *left > longest_lease_->ms)) longest_lease_ = Extreme{sample.key, *left};
}

std::uint64_t Tally::count(Flag flag) const noexcept { return by_flag_[flag_index(flag)]; }

bool Tally::any(unsigned flags) const noexcept {
  for (const auto& [flag, name] : kFlagNames.entries()) {
    if ((flags & static_cast<unsigned>(flag)) != 0 && count(flag) > 0) return true;
  }
  return false;
}

nlohmann::ordered_json Tally::to_json(double seconds) const {
  nlohmann::ordered_json by_class = nlohmann::ordered_json::object();
  for (const auto& [lock_class, name] : kLockClassNames.entries()) by_class[std::string(name)] = count(lock_class);
  nlohmann::ordered_json by_flag = nlohmann::ordered_json::object();
  for (const auto& [flag, name] : kFlagNames.entries()) by_flag[std::string(name)] = count(flag);
  return {{"total", total_},
          {"by_class", by_class},
          {"by_flag", by_flag},
          {"scanned_per_s", seconds > 0 ? static_cast<double>(total_) / seconds : 0.0},
          {"seconds", seconds},
          {"oldest_stale", extreme_json(oldest_stale_, "expired_ms_ago")},
          {"longest_lease", extreme_json(longest_lease_, "remaining_ms")}};
}

void Tally::print(std::ostream& out, double seconds) const {
  out << "keys scanned: " << total_ << " in " << std::fixed << std::setprecision(2) << seconds << " s";
  if (seconds > 0) out << " (" << std::setprecision(0) << static_cast<double>(total_) / seconds << " keys/s)";
  out << "\n\nclass                  keys\n";
  for (const auto& [lock_class, name] : kLockClassNames.entries()) {
    out << std::left << std::setw(20) << name << std::right << std::setw(8) << count(lock_class) << "\n";
  }
  out << "\nflag                   keys\n";
  for (const auto& [flag, name] : kFlagNames.entries()) {
    out << std::left << std::setw(20) << name << std::right << std::setw(8) << count(flag) << "\n";
  }
  const auto line = [&](const char* label, const std::optional<Extreme>& extreme, const char* unit) {
    out << "\n" << label << ": ";
    if (!extreme) {
      out << "none";
      return;
    }
    out << quoted_key(extreme->key) << " (" << extreme->ms << " ms " << unit << ")";
  };
  line("oldest stale lock", oldest_stale_, "past its expiry");
  line("longest remaining lease", longest_lease_, "left");
  out << "\n";
}

nlohmann::ordered_json details_line(const KeySample& sample, const Classification& found) {
  nlohmann::ordered_json out;
  put_key(out, sample.key);
  out["class"] = audit::to_string(found.lock_class);
  nlohmann::ordered_json flags = nlohmann::ordered_json::array();
  for (const auto& [flag, name] : kFlagNames.entries()) {
    if (found.has(flag)) flags.push_back(name);
  }
  out["flags"] = flags;
  out["type"] = sample.type;
  if (sample.type == "string") {
    put_key(out, sample.value, "value");
    if (sample.truncated) out["value_truncated"] = true;
  } else {
    out["value"] = nullptr;
  }
  out["pttl_ms"] = sample.pttl_ms;
  out["expiry_ms"] = found.expiry_ms ? nlohmann::ordered_json(*found.expiry_ms) : nlohmann::ordered_json(nullptr);
  return out;
}

}  // namespace lockbridge::tools::audit
