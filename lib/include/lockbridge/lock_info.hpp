// lockbridge: what a lock key holds right now (Mutex::inspect()).
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "lockbridge/export.hpp"
#include "lockbridge/legacy_value.hpp"

namespace lockbridge {

// What a key holds right now, read without acquiring (one round trip).
struct LOCKBRIDGE_API LockInfo {
  bool exists = false;
  std::string value;                             // empty when the key does not exist
  std::optional<std::chrono::milliseconds> ttl;  // Redis TTL; nullopt when the key has none
  std::optional<LegacyStamp> stamp;              // legacy strategy: the parsed value, if it parses
  bool held_by_me = false;                       // the value is the one this Mutex wrote
};

}  // namespace lockbridge
