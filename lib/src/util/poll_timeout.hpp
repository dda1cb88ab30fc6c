// poll(2) takes its timeout as an int of milliseconds, while lockbridge's waits may be as long as
// 365 days (ClientOptions::command_timeout, reconnect_backoff x 16): a plain cast would wrap, and a
// negative timeout waits for ever.
#pragma once

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>

namespace lockbridge::detail {

// `wait` for poll(2): at least 0, and at most INT_MAX ms (24.8 days); a caller that waits longer
// polls again.
inline int poll_timeout(std::chrono::milliseconds wait) noexcept {
  return static_cast<int>(std::clamp<std::int64_t>(wait.count(), 0, INT_MAX));
}

}  // namespace lockbridge::detail
