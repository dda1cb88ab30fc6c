#include "cluster/redirect_loop.hpp"

#include <algorithm>

#include "cluster/router.hpp"

namespace lockbridge::detail {

Task<void> follow_redirects(ClusterRouter& router, std::uint16_t slot, ClusterHops& hops,
                            ClusterHops::Clock::time_point deadline) {
  using Clock = ClusterHops::Clock;
  constexpr int kMaxRedirects = ClusterRouter::kMaxRedirects;
  std::optional<NodeAddress> asking;  // an ASK redirect's node, for the next try only
  for (int redirects = 0;; ++redirects) {
    // (Not a conditional expression: GCC 12 mishandles a co_await inside one.)
    NodeAddress node;
    if (asking) {
      node = *asking;
    } else {
      node = co_await hops.master_of(slot);
    }
    const std::optional<Error> unreached = co_await hops.reach(node);
    if (unreached) {
      router.schedule_refresh(node);  // the master may be gone, and a replica promoted in its place
      // Nothing was sent. When the refreshed map names another master for the slot (a replica
      // promoted while this Client was idle), the operation goes there instead of failing.
      if (asking || redirects >= kMaxRedirects) throw *unreached;
      const NodeAddress now_serving = co_await hops.master_of(slot);
      if (now_serving == node) throw *unreached;
      continue;
    }
    router.forget_unreachable(node);
    RedirectNote note;
    std::optional<Error> failure;
    try {
      co_await hops.run(asking.has_value(), note);
    } catch (const Error& error) {
      failure = error;
    }
    if (!failure) {
      // The operation succeeded; a redirect it read past (a pipelined reply it could do without)
      // still teaches the map. The operation is not repeated.
      if (note.redirect && note.redirect->kind == Redirect::Kind::moved) router.learn_moved(*note.redirect, node);
      co_return;
    }
    if (!note.redirect && note.try_again && redirects < kMaxRedirects) {
      // The slot's keys are moving in batches: wait for this batch (10, 20, 40 ... ms), then ask
      // the slot's owner again; never past the caller's deadline.
      const auto now = Clock::now();
      if (now >= deadline) {
        throw Error(failure->errc(),
                    message_of(*failure) + " (the caller's deadline came before the migration ended)");
      }
      const Clock::duration wait = std::chrono::milliseconds(10) * (1 << redirects);
      const Clock::duration pause = std::min(wait, deadline - now);  // named: no ?: inside a co_await (GCC 12)
      co_await hops.pause(pause);
      asking.reset();
      continue;
    }
    if (!note.redirect) {
      if (failure->errc() == Errc::io || failure->errc() == Errc::timeout) router.schedule_refresh(node);
      throw *failure;
    }
    if (redirects >= kMaxRedirects) {
      throw Error(Errc::protocol, message_of(*failure) + " (still redirected after " + std::to_string(kMaxRedirects) +
                                      " redirects; the cluster keeps moving the slot)");
    }
    if (note.redirect->kind == Redirect::Kind::ask) {
      asking = ClusterRouter::destination(*note.redirect, node);
    } else {
      asking.reset();
      router.learn_moved(*note.redirect, node);
    }
  }
}

}  // namespace lockbridge::detail
