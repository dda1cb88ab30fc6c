#include "lockbridge/identity.hpp"

#include <unistd.h>

#include <array>
#include <cstdint>
#include <mutex>

#include "lockbridge/error.hpp"
#include "util/hex.hpp"
#include "util/random_source.hpp"

namespace lockbridge {
namespace {

std::array<std::uint8_t, 16> random_bytes() {
  std::array<std::uint8_t, 16> bytes{};
  detail::fill_random(bytes);
  return bytes;
}

}  // namespace

std::string random_token() { return detail::lowercase_hex(random_bytes()); }

std::string random_uuid() {
  auto bytes = random_bytes();
  bytes[6] = static_cast<std::uint8_t>((bytes[6] & 0x0f) | 0x40);  // version 4
  bytes[8] = static_cast<std::uint8_t>((bytes[8] & 0x3f) | 0x80);  // RFC 4122 variant
  const std::string h = detail::lowercase_hex(bytes);
  return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) + "-" + h.substr(20);
}

std::string process_uuid() {
  // Keyed by the pid rather than reset in a pthread_atfork handler: a child may be forked by code
  // that is not ours, at any moment, and the next call here is the first that matters.
  static std::mutex mutex;
  static pid_t drawn_by = 0;
  static std::string uuid;
  const std::lock_guard lock(mutex);
  if (const pid_t me = getpid(); drawn_by != me) {
    uuid = random_uuid();
    drawn_by = me;
  }
  return uuid;
}

bool is_uuid(std::string_view text) noexcept {
  if (text.size() != 36) return false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? c != '-' : !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) return false;
  }
  return true;
}

std::string to_lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::int64_t wall_clock_ms(std::chrono::milliseconds offset) {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count() + offset.count();
}

}  // namespace lockbridge
