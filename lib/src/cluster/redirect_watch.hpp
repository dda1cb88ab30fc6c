// What the replies of one routed operation (cluster/redirect_loop.hpp) said about where its keys
// are, and how it sends ASKING before each command when it follows an ASK redirect (so the node
// importing a slot serves it). The note is the same for both fronts; the blocking front sets a
// RedirectWatch on its pooled connection for the span of the operation, the event-driven front
// wraps its pipelined link in a RedirectLink.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "cluster/redirect.hpp"
#include "redis/connection.hpp"
#include "redis/link.hpp"

namespace lockbridge::detail {

struct RedirectNote {
  // The first MOVED or ASK redirect a reply carried (the reply itself went to the operation as
  // the error it is).
  std::optional<Redirect> redirect;
  // Whether a TRYAGAIN came back: a multi-key command on a slot being migrated, its keys split
  // between the two nodes. It did not run.
  bool try_again = false;
  void saw_error(std::string_view text);
};

class RedirectWatch final : public CommandHook {
 public:
  // Sets itself as `connection`'s hook; `asking`: send ASKING before each command.
  RedirectWatch(Connection& connection, bool asking, RedirectNote& note) noexcept;
  // Takes itself off the connection, which goes back to its pool with no hook.
  ~RedirectWatch();
  RedirectWatch(const RedirectWatch&) = delete;
  RedirectWatch& operator=(const RedirectWatch&) = delete;

  std::string_view preamble() const noexcept override { return asking_ ? "ASKING" : ""; }
  void on_error_reply(std::string_view text) override { note_.saw_error(text); }

 private:
  Connection& connection_;
  const bool asking_;
  RedirectNote& note_;
};

// A Link that does for its inner link what RedirectWatch does for a connection.
class RedirectLink final : public Link {
 public:
  RedirectLink(Link& inner, bool asking, RedirectNote& note) noexcept : inner_(inner), asking_(asking), note_(note) {}
  // The same, owning its inner link.
  RedirectLink(std::unique_ptr<Link> inner, bool asking, RedirectNote& note) noexcept
      : owned_(std::move(inner)), inner_(*owned_), asking_(asking), note_(note) {}
  using Link::run;
  Task<ReplyPtr> run(Args args) override;
  Task<std::vector<ReplyPtr>> pipeline(std::span<const std::vector<std::string_view>> commands) override;
  Task<ReplyPtr> run_held(Args args, std::chrono::milliseconds server_wait) override;
  bool exclusive() const noexcept override { return inner_.exclusive(); }
  Task<std::unique_ptr<Link>> exclusive_link() override;

 private:
  void note(const std::vector<ReplyPtr>& replies);
  std::unique_ptr<Link> owned_;  // before inner_, which may refer to it
  Link& inner_;
  const bool asking_;
  RedirectNote& note_;
};

}  // namespace lockbridge::detail
