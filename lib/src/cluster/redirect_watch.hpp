// The redirect state of one routed operation (ClusterRouter::route): set on the connection for the
// span of the operation, it sends ASKING before each command when the operation follows an ASK
// redirect (so the node importing a slot serves it), and notes what the replies said about where
// the keys are: the first MOVED or ASK redirect, and whether a TRYAGAIN came back (a multi-key
// command on a slot being migrated, its keys split between the two nodes: it did not run).
#pragma once

#include <optional>
#include <string_view>

#include "cluster/redirect.hpp"
#include "redis/connection.hpp"

namespace lockbridge::detail {

class RedirectWatch final : public CommandHook {
 public:
  // Sets itself as `connection`'s hook; `asking`: send ASKING before each command.
  RedirectWatch(Connection& connection, bool asking) noexcept;
  // Takes itself off the connection, which goes back to its pool with no hook.
  ~RedirectWatch();
  RedirectWatch(const RedirectWatch&) = delete;
  RedirectWatch& operator=(const RedirectWatch&) = delete;

  std::string_view preamble() const noexcept override { return asking_ ? "ASKING" : ""; }
  void on_error_reply(std::string_view text) override;

  // The first MOVED or ASK redirect a reply carried (the reply itself went to the operation as the
  // error it is).
  const std::optional<Redirect>& redirect() const noexcept { return redirect_; }
  bool try_again() const noexcept { return try_again_; }

 private:
  Connection& connection_;
  const bool asking_;
  std::optional<Redirect> redirect_;
  bool try_again_ = false;
};

}  // namespace lockbridge::detail
