#include "waiting/release_notifier.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <map>
#include <optional>

#include "cluster/key_slot.hpp"
#include "lockbridge/error.hpp"
#include "util/background_thread.hpp"
#include "util/poll_timeout.hpp"

namespace lockbridge::detail {

namespace {
// The waiter a release announcement is for: its payload up to the first space (a grant's terms
// follow it); empty for every waiter.
std::string_view payload_name(std::string_view payload) { return payload.substr(0, payload.find(' ')); }
}  // namespace

struct ReleaseNotifier::Channel {
  Channel(ReleaseNotifier& owner, const ReleaseChannel& spec)
      : notifier(owner), sharded(spec.sharded), payload_names_waiter(spec.payload_names_waiter) {}
  ReleaseNotifier& notifier;
  const bool sharded;               // SSUBSCRIBE, else SUBSCRIBE
  const bool payload_names_waiter;  // else every message is for every waiter
  int watchers = 0;
  bool confirmed = false;   // the server acknowledged the subscription on the current connection
  bool redirected = false;  // the server answered it MOVED: not subscribed again here
  // The server refused it: not asked again before `retry_at` (never on this connection for an ACL's
  // NOPERM; a second later for another error, such as LOADING while Redis starts).
  bool refused = false;
  Clock::time_point retry_at{};
  std::uint64_t generation = 0;  // one per announced release (or lost connection)
  // The payloads of the latest releases: (generation, payload); an empty payload is for everyone,
  // else it starts with the waiter it is for (payload_name), followed by a grant's terms when the
  // release granted that waiter the lock (docs/design.md §10.6).
  std::deque<std::pair<std::uint64_t, std::string>> recent;
  Clock::time_point idle_since{};       // when watchers last dropped to zero
  std::condition_variable_any changed;  // the _any kind: a waiter's stop request wakes it
  // Event-driven watchers (Watch::on_change), by the waiter each one is ("" for none): a release
  // that names a waiter tells that waiter's alone, so a handoff costs no work per waiter.
  std::multimap<std::string, std::function<void()>, std::less<>> listeners;

  static constexpr std::size_t kRecent = 32;
  void announce(std::string payload) {
    ++generation;
    recent.emplace_back(generation, std::move(payload));
    if (recent.size() > kRecent) recent.pop_front();
    const std::string_view named = payload_name(recent.back().second);
    if (named.empty()) {
      wake_all();
      return;
    }
    changed.notify_all();  // blocking waiters each ask heard() for themselves
    notifier.wake_reader();
    const auto [first, last] = listeners.equal_range(named);
    for (auto it = first; it != last; ++it) it->second();
  }
  // With the notifier's mutex held: a listener only posts to its loop.
  void wake_all() {
    changed.notify_all();
    notifier.wake_reader();
    for (const auto& [waiter, listener] : listeners) listener();
  }
};

ReleaseNotifier::ReleaseNotifier(std::shared_ptr<Endpoint> endpoint)
    : endpoint_(std::move(endpoint)), options_(endpoint_->options()) {
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  reader_wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0 || reader_wake_fd_ < 0) {
    if (wake_fd_ >= 0) close(wake_fd_);
    throw Error(Errc::io, "release notifier: cannot create an eventfd");
  }
}

ReleaseNotifier::~ReleaseNotifier() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_thread();
  if (thread_.joinable()) thread_.join();
  close(wake_fd_);
  close(reader_wake_fd_);
}

namespace {
void signal(int eventfd) noexcept {
  const std::uint64_t one = 1;
  [[maybe_unused]] const ssize_t written = write(eventfd, &one, sizeof one);  // EAGAIN: already signalled
}
void drain(int eventfd) noexcept {
  std::uint64_t count = 0;
  [[maybe_unused]] const ssize_t got = read(eventfd, &count, sizeof count);  // EAGAIN: nothing pending
}
}  // namespace

void ReleaseNotifier::wake_thread() noexcept { signal(wake_fd_); }

// With mutex_ held.
void ReleaseNotifier::need_reading() noexcept {
  if (!thread_reads_ && !borrowed_) wake_thread();
}

// With mutex_ held. The reader itself, delivering what it read, needs no wake-up: it asks heard()
// next.
void ReleaseNotifier::wake_reader() noexcept {
  if (borrowed_ && reader_ != std::this_thread::get_id()) signal(reader_wake_fd_);
}

// ---- Watch -------------------------------------------------------------------------------------

std::unique_ptr<ReleaseNotifier::Watch> ReleaseNotifier::watch(const ReleaseChannel& channel, bool only_if_subscribed) {
  bool new_subscription = false;
  std::unique_ptr<Watch> watch;
  {
    std::lock_guard lock(mutex_);
    auto it = channels_.find(channel.name);
    if (it == channels_.end() || !it->second->confirmed) {
      if (only_if_subscribed) return nullptr;
      if (it == channels_.end()) {
        it = channels_.emplace(channel.name, std::make_unique<Channel>(*this, channel)).first;
        new_subscription = true;
      } else if (it->second->redirected) {  // the slot may have come back: ask again
        it->second->redirected = false;
        new_subscription = true;
      }
    }
    watch = std::make_unique<Watch>(*this, *it->second);
    if (!thread_.joinable()) thread_ = start_background_thread("lockbridge-wake", [this] { run(); });
  }
  if (new_subscription) wake_thread();
  return watch;
}

// With the notifier's mutex held.
ReleaseNotifier::Watch::Watch(ReleaseNotifier& notifier, Channel& channel)
    : notifier_(notifier), channel_(&channel), seen_(channel.generation) {
  ++channel_->watchers;
  ++notifier_.watches_;
}

ReleaseNotifier::Watch::~Watch() {
  // No wake-up to time the linger: the thread looks at least every kLinger while a channel is
  // watched (reconcile), and a wake-up here would cost every lock() that waited a thread switch.
  std::lock_guard lock(notifier_.mutex_);
  if (listener_) channel_->listeners.erase(*listener_);
  --notifier_.watches_;
  if (--channel_->watchers == 0) channel_->idle_since = Clock::now();
}

bool ReleaseNotifier::Watch::wait_subscribed(Clock::time_point until, const std::stop_token& stop) {
  std::unique_lock lock(notifier_.mutex_);
  notifier_.need_reading();
  channel_->changed.wait_until(lock, stop, until,
                               [&] { return channel_->confirmed || channel_->redirected || channel_->refused; });
  return channel_->confirmed;
}

bool ReleaseNotifier::Watch::redirected() const {
  std::lock_guard lock(notifier_.mutex_);
  return channel_->redirected;
}

bool ReleaseNotifier::Watch::refused() const {
  std::lock_guard lock(notifier_.mutex_);
  return channel_->refused;
}

void ReleaseNotifier::Watch::arm() {
  std::lock_guard lock(notifier_.mutex_);
  seen_ = channel_->generation;
}

bool ReleaseNotifier::Watch::heard(std::string_view me) const {
  if (channel_->generation == seen_) return false;
  // Older announcements than we keep: one of them may have been for us.
  if (channel_->recent.empty() || channel_->recent.front().first > seen_ + 1) return true;
  return std::any_of(channel_->recent.begin(), channel_->recent.end(), [&](const auto& entry) {
    return entry.first > seen_ && (entry.second.empty() || payload_name(entry.second) == me);
  });
}

std::optional<std::string> ReleaseNotifier::Watch::grant_heard(std::string_view me) const {
  std::lock_guard lock(notifier_.mutex_);
  for (auto it = channel_->recent.rbegin(); it != channel_->recent.rend() && it->first > seen_; ++it) {
    const std::string& payload = it->second;
    if (payload_name(payload) == me && payload.size() > me.size()) return payload.substr(me.size() + 1);
  }
  return std::nullopt;
}

void ReleaseNotifier::Watch::on_change(std::string_view me, std::function<void()> changed) {
  std::lock_guard lock(notifier_.mutex_);
  if (listener_) channel_->listeners.erase(*listener_);
  listener_.reset();
  if (changed) listener_ = channel_->listeners.emplace(std::string(me), std::move(changed));
  notifier_.need_reading();
}

bool ReleaseNotifier::Watch::heard_now(std::string_view me) const {
  std::lock_guard lock(notifier_.mutex_);
  return heard(me);
}

bool ReleaseNotifier::Watch::answered_now() const {
  std::lock_guard lock(notifier_.mutex_);
  return channel_->confirmed || channel_->redirected || channel_->refused;
}

bool ReleaseNotifier::Watch::confirmed_now() const {
  std::lock_guard lock(notifier_.mutex_);
  return channel_->confirmed;
}

// A blocking waiter reads the connection itself when nobody else does, so the message it waits
// for wakes its own thread. Not on Redis Cluster: there a subscription's redirect calls back into
// the router (on_redirect), which only the thread may do.
bool ReleaseNotifier::Watch::wait_until(Clock::time_point until, std::string_view me, const std::stop_token& stop) {
  std::unique_lock lock(notifier_.mutex_);
  if (heard(me)) return true;
  if (!notifier_.borrowed_ && !notifier_.redirect_listener_) {
    notifier_.borrowed_ = true;
    notifier_.reader_ = std::this_thread::get_id();
    lock.unlock();
    const std::optional<bool> read = notifier_.wait_reading(*this, until, me, stop);
    lock.lock();
    notifier_.borrowed_ = false;
    notifier_.reader_ = {};
    // Other watchers (this one is still here) hear nothing until the thread reads again. Without
    // them, the input is left to the next waiter to read, so a handoff wakes no thread here.
    if (notifier_.watches_ > 1) notifier_.wake_thread();
    if (read) return *read;
  }
  notifier_.need_reading();
  return channel_->changed.wait_until(lock, stop, until, [&] { return heard(me); });
}

std::optional<bool> ReleaseNotifier::wait_reading(const Watch& watch, Clock::time_point until, std::string_view me,
                                                  const std::stop_token& stop) {
  int fd = -1;
  std::uint64_t serial = 0;
  {
    const std::lock_guard io(io_mutex_);
    if (!connection_ || broken_) return std::nullopt;
    fd = connection_->fd();
    serial = connection_serial_;
  }
  // The thread, if it polls the connection's input now, learns that it is ours when the next
  // message wakes it too (not before: a wake-up now would compete with the holder's work).
  drain(reader_wake_fd_);
  const std::stop_callback on_stop(stop, [this] {
    std::lock_guard lock(mutex_);
    wake_reader();
  });
  for (;;) {
    {
      std::lock_guard lock(mutex_);
      if (watch.heard(me)) return true;
    }
    const auto now = Clock::now();
    if (stop.stop_requested() || now >= until) return false;
    const auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(until - now);
    const timespec timeout{static_cast<time_t>(left.count() / 1'000'000'000), static_cast<long>(left.count() % 1'000'000'000)};
    std::array<pollfd, 2> fds{pollfd{fd, POLLIN, 0}, pollfd{reader_wake_fd_, POLLIN, 0}};
    if (ppoll(fds.data(), fds.size(), &timeout, nullptr) < 0) continue;  // EINTR
    if (fds[1].revents != 0) drain(reader_wake_fd_);
    if (fds[0].revents == 0) continue;
    const std::lock_guard io(io_mutex_);
    // The connection broke and the thread made another (announcing it, so heard() is true now):
    // the fd is not ours any more.
    if (!connection_ || broken_ || connection_serial_ != serial || !read_and_deliver()) return std::nullopt;
  }
}

// ---- the thread --------------------------------------------------------------------------------

void ReleaseNotifier::drain_wakes() noexcept { drain(wake_fd_); }

void ReleaseNotifier::sleep_or_wake(std::chrono::milliseconds duration) noexcept {
  pollfd wake{wake_fd_, POLLIN, 0};
  poll(&wake, 1, poll_timeout(duration));  // a longer backoff is cut short: the loop retries
  drain_wakes();
}

void ReleaseNotifier::resubscribe_on(std::unique_ptr<Connection> connection) {
  connection_ = std::move(connection);
  ++connection_serial_;
  connect_failures_ = 0;
  subscribed_.clear();
  unanswered_.clear();
  // Whatever was announced while we were not connected went unheard: wake every waiter once. A
  // subscription refused before is asked for again (the ACL may have changed).
  std::lock_guard lock(mutex_);
  for (auto& [name, channel] : channels_) {
    channel->refused = false;
    channel->announce("");
  }
}

void ReleaseNotifier::connection_lost() noexcept {
  broken_ = false;
  endpoint_->connection_broke(*connection_);
  connection_.reset();
  subscribed_.clear();
  unanswered_.clear();
  std::lock_guard lock(mutex_);
  for (auto& [name, channel] : channels_) {
    channel->confirmed = false;
    channel->announce("");  // a release may be lost: let the waiters try now
  }
}

int ReleaseNotifier::reconcile() {
  std::vector<std::pair<std::string, bool>> subscribe;  // (name, sharded)
  std::vector<std::pair<std::string, bool>> unsubscribe;
  int poll_ms = -1;
  {
    std::lock_guard lock(mutex_);
    const auto now = Clock::now();
    for (auto it = channels_.begin(); it != channels_.end();) {
      Channel& channel = *it->second;
      if (channel.watchers == 0 && now - channel.idle_since >= kLinger) {
        if (subscribed_.erase(it->first) > 0) unsubscribe.emplace_back(it->first, channel.sharded);
        it = channels_.erase(it);
        continue;
      }
      const auto wake_by = [&](Clock::time_point at) {
        const auto left =
            std::max(std::chrono::ceil<std::chrono::milliseconds>(at - now), std::chrono::milliseconds(0));
        poll_ms = poll_ms < 0 ? static_cast<int>(left.count()) : std::min(poll_ms, static_cast<int>(left.count()));
      };
      wake_by(channel.watchers == 0 ? channel.idle_since + kLinger : now + kLinger);
      if (channel.refused && channel.retry_at != Clock::time_point::max()) {
        if (now < channel.retry_at) wake_by(channel.retry_at);
      }
      const bool refused_now = channel.refused && now < channel.retry_at;
      if (!subscribed_.contains(it->first) && !channel.redirected && !refused_now) {
        channel.refused = false;
        subscribe.emplace_back(it->first, channel.sharded);
      }
      ++it;
    }
  }
  for (const auto& [name, sharded] : subscribe) {
    connection_->send({sharded ? "SSUBSCRIBE" : "SUBSCRIBE", name});
    subscribed_.insert(name);
    unanswered_.push_back({name, true});
  }
  for (const auto& [name, sharded] : unsubscribe) {
    connection_->send({sharded ? "SUNSUBSCRIBE" : "UNSUBSCRIBE", name});
    unanswered_.push_back({name, false});
  }
  return poll_ms;
}

void ReleaseNotifier::redirected(const Redirect& redirect) {
  {
    std::lock_guard lock(mutex_);
    // The error names the slot, not the channel: it answers the pending sharded subscription(s)
    // of that slot.
    for (auto& [name, channel] : channels_) {
      if (!channel->sharded || channel->confirmed || !subscribed_.contains(name) || key_slot(name) != redirect.slot)
        continue;
      channel->redirected = true;
      subscribed_.erase(name);
      channel->announce("");  // its waiters try again now, and subscribe where the slot is
    }
  }
  if (redirect.kind == Redirect::Kind::moved && redirect_listener_) redirect_listener_(redirect);
}

void ReleaseNotifier::refused(const std::string& name, std::string_view why) {
  const bool denied = why.starts_with("NOPERM");
  subscribed_.erase(name);  // never unsubscribed: it is not subscribed
  {
    std::lock_guard lock(mutex_);
    const auto it = channels_.find(name);
    if (it == channels_.end()) return;
    it->second->refused = true;
    it->second->retry_at = denied ? Clock::time_point::max() : Clock::now() + kRetryRefused;
    it->second->wake_all();  // its waiters stop waiting for a confirmation
  }
  if (!denied || told_refusal_ || !options_.on_notice) return;
  told_refusal_ = true;
  try {
    options_.on_notice("the server refused the subscription to release announcements (" + std::string(why) +
                       "): waiters poll by their retry policy instead of hearing releases");
  } catch (...) {  // a notice is never worth a lock
  }
}

void ReleaseNotifier::deliver(const redisReply& reply) {
  // A subscription the node refuses comes back as an error: MOVED on Redis Cluster when the map
  // that chose this node missed a move.
  if (reply.type == REDIS_REPLY_ERROR) {
    // It answers the oldest request not answered yet (Redis answers in order).
    std::optional<Request> oldest;
    if (!unanswered_.empty()) {
      oldest = std::move(unanswered_.front());
      unanswered_.pop_front();
    }
    if (const auto redirect = parse_redirect(as_view(reply))) {
      redirected(*redirect);
    } else if (oldest && oldest->subscribe) {
      refused(oldest->name, as_view(reply));
    }
    return;
  }
  // Pushes in subscribe mode are arrays: {"smessage"|"message", channel, payload} or
  // {"ssubscribe"|"subscribe"|"sunsubscribe"|"unsubscribe", channel, count}.
  if (reply.type != REDIS_REPLY_ARRAY || reply.elements < 3 || reply.element[0]->type != REDIS_REPLY_STRING ||
      reply.element[1]->type != REDIS_REPLY_STRING) {
    return;
  }
  const std::string_view kind = as_view(*reply.element[0]);
  const std::string_view name = as_view(*reply.element[1]);
  // A confirmation answers its request (an unsubscription's too, whose channel may be gone).
  const bool subscribed = kind == "ssubscribe" || kind == "subscribe";
  if (subscribed || kind == "sunsubscribe" || kind == "unsubscribe") {
    const auto sent = std::find_if(unanswered_.begin(), unanswered_.end(), [&](const Request& request) {
      return request.name == name && request.subscribe == subscribed;
    });
    if (sent != unanswered_.end()) unanswered_.erase(sent);
  }
  std::lock_guard lock(mutex_);
  const auto it = channels_.find(name);
  if (it == channels_.end()) return;
  Channel& channel = *it->second;
  if (kind == (channel.sharded ? "smessage" : "message")) {
    const bool named = channel.payload_names_waiter && reply.element[2]->type == REDIS_REPLY_STRING;
    channel.announce(named ? std::string(as_view(*reply.element[2])) : std::string());
  } else if (kind == (channel.sharded ? "ssubscribe" : "subscribe") && subscribed_.contains(name)) {
    channel.confirmed = true;
    channel.wake_all();
  } else if (kind == "sunsubscribe" && channel.sharded && channel.confirmed) {
    // Not asked for: Redis Cluster drops the subscriptions of a slot that moved to another node.
    // Releases are announced there now: wake the waiters (a release may have gone unheard) and
    // subscribe again, which this node answers MOVED, so the router learns of the move.
    channel.confirmed = false;
    if (const auto sent = subscribed_.find(name); sent != subscribed_.end()) subscribed_.erase(sent);
    channel.announce("");
  }
}

bool ReleaseNotifier::read_and_deliver() {
  try {
    for (const ReplyPtr& reply : connection_->read_available()) deliver(*reply);
    return true;
  } catch (...) {
    // The thread gives it up (and reconnects at once), not a waiter that reads: the endpoint may
    // look for a new address then (Sentinel), for as long as that takes, which is no waiter's
    // deadline's business.
    broken_ = true;
    wake_thread();
    return false;
  }
}

void ReleaseNotifier::run() noexcept {
  for (;;) {
    bool borrowed = false;
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
      borrowed = borrowed_;
      thread_reads_ = !borrowed;
    }
    std::unique_lock io(io_mutex_);
    try {
      if (connection_ && broken_) connection_lost();
      if (!connection_) {
        // Connecting may take up to the connect timeout: not with io_mutex_ held, which a waiter
        // that reads takes only for short, non-blocking steps. Nobody else makes a connection.
        io.unlock();
        std::unique_ptr<Connection> connection = endpoint_->connect();
        io.lock();
        resubscribe_on(std::move(connection));
      }
      const int poll_ms = reconcile();
      // While a waiter reads the connection, its input is the waiter's (a negative fd: ignored).
      std::array<pollfd, 2> fds{pollfd{borrowed ? -1 : connection_->fd(), POLLIN, 0}, pollfd{wake_fd_, POLLIN, 0}};
      io.unlock();
      if (poll(fds.data(), fds.size(), poll_ms) < 0) continue;  // EINTR
      if (fds[1].revents != 0) drain_wakes();
      if (fds[0].revents == 0) continue;
      {
        // A waiter began reading meanwhile: the message is its to deliver.
        std::lock_guard lock(mutex_);
        if (borrowed_) continue;
      }
      io.lock();
      if (connection_ && !broken_) read_and_deliver();
    } catch (...) {
      if (!io.owns_lock()) io.lock();
      if (connection_) {
        connection_lost();  // the first reconnect is at once
      } else {
        // Reconnect with the pool's backoff, doubling per failure up to 16x.
        connect_failures_ = std::min(connect_failures_ + 1, 5U);
        io.unlock();
        sleep_or_wake(options_.reconnect_backoff * (1U << (connect_failures_ - 1)));
      }
    }
  }
}

}  // namespace lockbridge::detail
