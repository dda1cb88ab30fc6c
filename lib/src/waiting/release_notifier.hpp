// One subscriber connection per Client, shared by all of its waiters. A waiter watches a lock's
// release channel (lockbridge::detail::release_channel); the first watcher of a channel subscribes
// (SSUBSCRIBE, sharded pub/sub, so Redis Cluster routes it to the lock's shard), and the channel is
// unsubscribed once its last watcher has been gone for kLinger, so a busy key is not unsubscribed
// and subscribed again between every two waits. One thread owns the connection: it connects,
// subscribes, reads messages and wakes the waiters of the channel a message came on.
//
// Except while a blocking waiter reads it (Watch::wait_until): then that waiter's own thread reads
// and delivers the messages, and the thread leaves the connection's input alone. A message that
// grants the lock (docs/design.md §10.6) then wakes the thread that returns from lock(), not a
// thread that must wake it: one thread wake-up less on every handoff, a quarter of its cost.
//
// A message only brings the next attempt forward; waiters never depend on one. When the
// connection drops, every channel counts as released (a message may have been missed), waiters
// fall back to their retry policy, and the thread reconnects and subscribes again.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "cluster/redirect.hpp"
#include "redis/connection.hpp"
#include "redis/endpoint.hpp"
#include "waiting/release_channel.hpp"

namespace lockbridge::detail {

class ReleaseNotifier {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::milliseconds kLinger{250};
  // A subscription refused for another reason than the ACL's (LOADING, say) is asked for again after this.
  static constexpr std::chrono::milliseconds kRetryRefused{1000};

  // Does no I/O: the thread and its connection start with the first watcher.
  ReleaseNotifier(std::shared_ptr<Endpoint> endpoint);
  ~ReleaseNotifier();
  ReleaseNotifier(const ReleaseNotifier&) = delete;
  ReleaseNotifier& operator=(const ReleaseNotifier&) = delete;

  struct Channel;
  class Watch;

  // Watches `channel`, subscribing if needed (the thread sends SSUBSCRIBE, or SUBSCRIBE for a
  // channel that is not sharded; see Watch::wait_subscribed). With `only_if_subscribed` it does no I/O and returns null
  // unless the channel is already subscribed and confirmed (e.g. lingering after an earlier wait).
  std::unique_ptr<Watch> watch(const ReleaseChannel& channel, bool only_if_subscribed = false);

  // Redis Cluster: called on the notifier's thread when a subscription is answered MOVED (this
  // node no longer serves the channel's slot), so the router learns of the move. Set before the
  // first watch().
  void on_redirect(std::function<void(const Redirect&)> listener) { redirect_listener_ = std::move(listener); }

  // One waiter's interest in one channel.
  class Watch {
   public:
    Watch(ReleaseNotifier& notifier, Channel& channel);  // use ReleaseNotifier::watch()
    ~Watch();
    Watch(const Watch&) = delete;
    Watch& operator=(const Watch&) = delete;

    // Waits until the server has confirmed the subscription (or refused it), or `until`. true
    // when confirmed: from then on every release is heard.
    bool wait_subscribed(Clock::time_point until, const std::stop_token& stop = {});
    // Whether the server refused the subscription with a redirect (Redis Cluster: the slot has
    // another master); the channel then hears nothing here, and a waiter subscribes elsewhere.
    bool redirected() const;
    // Whether the server refused the subscription otherwise (an ACL's NOPERM): nothing is heard,
    // and a waiter polls by its retry policy.
    bool refused() const;
    // Call before each attempt: the next wait_until() returns at once if a release was announced
    // after this point.
    void arm();
    // Sleeps until a release announced after arm() that is addressed to `me` or to every waiter
    // (an empty payload), or until `until`. true when a release woke it.
    bool wait_until(Clock::time_point until, std::string_view me = {}, const std::stop_token& stop = {});
    // The terms of the latest grant to `me` announced after arm() (docs/design.md §10.6: "<tag>
    // <fence> <value>"), or nullopt. A grant older than the announcements kept is not seen here;
    // the waiter's next attempt finds it.
    std::optional<std::string> grant_heard(std::string_view me) const;

    // For an event-driven waiter, which must not sleep: `changed` is called when something it may
    // wait for happened: a release addressed to `me` (the waiter's id; empty: none) or to every
    // waiter, the subscription answered, the connection lost. It runs on the thread that read the
    // news (the notifier's, or a blocking waiter's that reads) with the notifier's mutexes held,
    // so it must only post to the waiter's loop, which then asks the checks below. Replaces an earlier one; empty: none. Removed with the Watch.
    void on_change(std::string_view me, std::function<void()> changed);
    // Without waiting: what wait_until() would wake for now.
    bool heard_now(std::string_view me) const;
    // Without waiting: whether the server has answered the subscription (confirmed, redirected or
    // refused), and whether it confirmed it.
    bool answered_now() const;
    bool confirmed_now() const;

   private:
    friend class ReleaseNotifier;
    bool heard(std::string_view me) const;  // with the notifier's mutex held

    ReleaseNotifier& notifier_;
    Channel* channel_;
    std::uint64_t seen_ = 0;
    // on_change's, in the channel
    std::optional<std::multimap<std::string, std::function<void()>, std::less<>>::iterator> listener_;
  };

 private:
  void wake_thread() noexcept;
  void wake_reader() noexcept;  // the blocking waiter reading the connection, if one is
  // Someone waits for what the connection brings: the thread reads it unless a waiter does.
  void need_reading() noexcept;
  void drain_wakes() noexcept;
  // Watch::wait_until's own reading: until a release addressed to `me` (or to all) was heard,
  // `until`, or a stop request. nullopt when it cannot read (no connection, or a new one since it
  // began): the caller then waits for the thread's delivery instead.
  std::optional<bool> wait_reading(const Watch& watch, Clock::time_point until, std::string_view me,
                                   const std::stop_token& stop);
  // Reads what the connection has and delivers it. false when the connection broke: it is marked
  // broken_, and the thread, woken, gives it up and reconnects. With io_mutex_ held, by the thread
  // or the reading waiter.
  bool read_and_deliver();
  void run() noexcept;
  // Takes `connection` (just made) as the connection, and subscribes again what is wanted.
  void resubscribe_on(std::unique_ptr<Connection> connection);
  // Sends the subscriptions that are wanted and not yet sent, and the unsubscriptions whose
  // linger has passed; returns how long poll may sleep before the next linger ends (-1: no limit).
  int reconcile();
  void deliver(const redisReply& reply);
  // A subscription answered with a redirect: the pending sharded subscriptions of its slot are
  // given up here, and the listener hears of a MOVED.
  void redirected(const Redirect& redirect);
  // A subscription refused with another error: its waiters stop waiting for a confirmation and
  // poll. An ACL's NOPERM holds until a reconnect, and ClientOptions::on_notice hears of it once;
  // any other error is asked again after kRetryRefused.
  void refused(const std::string& name, std::string_view why);
  void connection_lost() noexcept;
  void sleep_or_wake(std::chrono::milliseconds duration) noexcept;

  const std::shared_ptr<Endpoint> endpoint_;
  const ClientOptions& options_;  // the endpoint's
  std::function<void(const Redirect&)> redirect_listener_;
  int wake_fd_ = -1;  // eventfd: tells the thread there is work (or that it must stop)

  std::mutex mutex_;
  std::map<std::string, std::unique_ptr<Channel>, std::less<>> channels_;
  bool stopping_ = false;
  std::thread thread_;
  // A blocking waiter reads the connection (one at a time; the thread then polls only wake_fd_),
  // on thread `reader_`; reader_wake_fd_ (eventfd) wakes it for what the thread or a stop request
  // has to tell it.
  bool borrowed_ = false;
  std::thread::id reader_;
  int reader_wake_fd_ = -1;
  bool thread_reads_ = false;  // the thread's poll includes the connection's input
  int watches_ = 0;            // Watches alive, on every channel

  // Locked before mutex_, never after. Guards what follows: the thread's, and the reading waiter's
  // while it reads.
  std::mutex io_mutex_;
  std::uint64_t connection_serial_ = 0;  // one per connection made
  bool broken_ = false;                  // a read failed: the thread gives the connection up
  std::unique_ptr<Connection> connection_;
  std::set<std::string, std::less<>> subscribed_;  // subscriptions sent on the current connection
  // The (un)subscriptions sent and not answered yet, in order: an error reply names no channel,
  // and answers the oldest of them.
  struct Request {
    std::string name;
    bool subscribe;
  };
  std::deque<Request> unanswered_;
  bool told_refusal_ = false;  // on_notice heard of a refused subscription
  unsigned connect_failures_ = 0;
};

}  // namespace lockbridge::detail
