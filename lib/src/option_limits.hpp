// The one rule every duration option (ClientOptions, MutexOptions, extend's lease) is checked by.
#pragma once

#include <chrono>
#include <string_view>

namespace lockbridge::detail {

// Longer leases, timeouts and waits are mistakes, and would overflow steady_clock arithmetic
// (now + duration, in nanoseconds) near max().
inline constexpr std::chrono::milliseconds kMaxDuration{365LL * 24 * 3600 * 1000};

// Throws Error{bad_option} naming `name` unless min <= value <= 365 days.
void require_within(std::string_view name, std::chrono::milliseconds value, std::chrono::milliseconds min);

}  // namespace lockbridge::detail
