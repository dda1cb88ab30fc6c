#include "util/option_limits.hpp"

#include <string>

#include "lockbridge/error.hpp"

namespace lockbridge::detail {

void require_within(std::string_view name, std::chrono::milliseconds value, std::chrono::milliseconds min) {
  if (value >= min && value <= kMaxDuration) return;
  throw Error(Errc::bad_option, std::string(name) + " must be between " + std::to_string(min.count()) +
                                    " ms and 365 days, got " + std::to_string(value.count()) + " ms");
}

}  // namespace lockbridge::detail
