// Legacy lock values in every encoding (epoch ms, epoch seconds with an optional fraction,
// <uuid>:<epoch ms>): parse_legacy_value() reads what a Java or Python peer would read, or nothing.
// A stamp it reads and lockbridge writes back in the same format reads back as the same expiry.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "lockbridge/legacy_value.hpp"

namespace {

constexpr lockbridge::LegacyFormat kFormats[] = {
    lockbridge::LegacyFormat::epoch_ms, lockbridge::LegacyFormat::epoch_seconds, lockbridge::LegacyFormat::uuid_ms};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view value(reinterpret_cast<const char*>(data), size);
  for (const lockbridge::LegacyFormat format : kFormats) {
    const auto stamp = lockbridge::parse_legacy_value(value, format);
    (void)lockbridge::jedis_lock_master_may_take(value, "0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9", 1700000000000);
    if (!stamp || stamp->forever || !lockbridge::is_plausible(*stamp, format)) continue;
    const std::string owner = format == lockbridge::LegacyFormat::uuid_ms ? "0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9" : "";
    const std::string written = lockbridge::format_legacy_value(format, stamp->expiry_ms, owner);
    const auto again = lockbridge::parse_legacy_value(written, format);
    if (!again) std::abort();  // lockbridge cannot read its own stamp
    // Seconds are written rounded up to whole seconds; ms and uuid_ms exactly.
    if (format != lockbridge::LegacyFormat::epoch_seconds && again->expiry_ms != stamp->expiry_ms) std::abort();
    if (format == lockbridge::LegacyFormat::epoch_seconds && again->expiry_ms < stamp->expiry_ms) std::abort();
  }
  return 0;
}
