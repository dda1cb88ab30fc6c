// token: SET key <128-bit random token> NX PX lease; release and extend are owner-checked Lua.
#pragma once

#include "../strategy.hpp"

namespace lockbridge::detail {

class TokenStrategy final : public LockStrategy {
 public:
  explicit TokenStrategy(ScriptCache& scripts) : scripts_(scripts) {}

  AcquireAttempt try_acquire(Connection& connection, std::string_view key, std::chrono::milliseconds lease, bool learn_remaining) override;
  ReleaseOutcome release(Connection& connection, std::string_view key, std::string_view value,
                         std::string_view release_channel) override;
  std::optional<std::string> extend(Connection& connection, std::string_view key, std::string_view value,
                                    std::chrono::milliseconds lease) override;
  LockInfo inspect(Connection& connection, std::string_view key, std::string_view my_value) override;
  void abandon_attempt(Connection& connection, std::string_view key) noexcept override;

 private:
  AcquireAttempt acquire_by_script(Connection& connection, std::string_view key, const std::string& lease_ms);

  ScriptCache& scripts_;
  std::string last_token_;  // of the last attempt, for abandon_attempt
  bool set_nx_get_ = true;  // false once the server refused SET ... NX GET (Redis < 7.0)
};

}  // namespace lockbridge::detail
