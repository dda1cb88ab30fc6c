// What audit found: counts per class and flag, the oldest stale lock and the longest remaining
// lease, kept as it streams (memory does not grow with the keyspace), and how it prints.
#pragma once

#include <array>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "classify.hpp"

namespace lockbridge::tools::audit {

class Tally {
 public:
  struct Extreme {
    std::string key;
    std::int64_t ms = 0;
  };

  void add(const KeySample& sample, const Classification& found, std::int64_t server_now_ms);

  std::uint64_t total() const noexcept { return total_; }
  std::uint64_t count(LockClass lock_class) const noexcept { return by_class_[static_cast<std::size_t>(lock_class)]; }
  std::uint64_t count(Flag flag) const noexcept;
  // Whether any key carries one of `flags` (Flag bits).
  bool any(unsigned flags) const noexcept;

  // One summary object: total, by_class, by_flag, scanned_per_s, oldest_stale, longest_lease.
  nlohmann::ordered_json to_json(double seconds) const;
  void print(std::ostream& out, double seconds) const;

 private:
  std::uint64_t total_ = 0;
  std::array<std::uint64_t, kLockClassNames.entries().size()> by_class_{};
  std::array<std::uint64_t, kFlagNames.entries().size()> by_flag_{};
  std::optional<Extreme> oldest_stale_;   // ms since its expiry
  std::optional<Extreme> longest_lease_;  // ms left
};

// One --details line for a lock key: key (escaped, see key_text.hpp), class, flags, value, pttl_ms,
// expiry_ms.
nlohmann::ordered_json details_line(const KeySample& sample, const Classification& found);

}  // namespace lockbridge::tools::audit
