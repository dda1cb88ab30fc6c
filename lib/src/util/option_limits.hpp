// The one rule every duration option (ClientOptions, MutexOptions, extend's lease) is checked by.
#pragma once

#include <chrono>
#include <string_view>

#include "lockbridge/options.hpp"

namespace lockbridge::detail {

// The public limit (lockbridge/options.hpp), under the name the library's checks use.
inline constexpr std::chrono::milliseconds kMaxDuration = kMaxOptionDuration;

// Throws Error{bad_option} naming `name` unless min <= value <= 365 days.
void require_within(std::string_view name, std::chrono::milliseconds value, std::chrono::milliseconds min);

}  // namespace lockbridge::detail
