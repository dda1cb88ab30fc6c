#include "lockbridge/event_mutex.hpp"

#include <utility>

#include "core/key_set_target.hpp"
#include "core/lock_core.hpp"
#include "core/pipeline_routes.hpp"
#include "core/quorum_target.hpp"
#include "core/rwlock_sides.hpp"
#include "core/single_key_target.hpp"
#include "redis/client_state.hpp"
#include "util/detach.hpp"

namespace lockbridge {

namespace detail {

// An event-driven lock's state: its lock core (driven by events), and the operation running, if
// any. The operation's coroutine reaches this object by pointer; destroying it destroys the
// operation first.
class EventLockCore {
 public:
  // `options` are valid and suit `target`.
  EventLockCore(EventClient& client, std::unique_ptr<LockTarget> target, MutexOptions options, std::string_view front)
      : loop_(client.loop()),
        core_(std::make_unique<LockCore>(client.client().state(), std::move(target), std::move(options), front,
                                         shared_loop())) {}

  ~EventLockCore() {
    running_ = {};  // an operation still running is abandoned: nothing resumes it, nobody is told
    if (!core_->holds()) return;
    // Released in the background: the core goes with the release, which needs the loop.
    const auto release = [](std::unique_ptr<LockCore> core) -> Task<void> { co_await core->release_task(true); };
    detach(release(std::move(core_)));
  }

  LockCore& core() const noexcept { return *core_; }
  EventLoop& loop() const noexcept { return loop_; }

  void acquire(EventLock::Clock::time_point deadline, std::stop_token stop, EventLock::AcquireDone done) {
    if (!begin()) {
      loop_.post([done = std::move(done)] { done(busy(), false); });
      return;
    }
    if (stop.stop_requested()) {  // cancelled before anything was sent
      busy_ = false;
      loop_.post([done = std::move(done)] { done(std::make_error_code(std::errc::operation_canceled), false); });
      return;
    }
    run(acquiring(deadline, std::move(stop)), [this, done = std::move(done)] { done(error_, result_); });
  }

  void release(EventLock::Done done) {
    if (!begin()) {
      loop_.post([done = std::move(done)] { done(busy()); });
      return;
    }
    run(releasing(), [this, done = std::move(done)] { done(error_); });
  }

  void extend(std::chrono::milliseconds lease, EventLock::AcquireDone done) {
    if (!begin()) {
      loop_.post([done = std::move(done)] { done(busy(), false); });
      return;
    }
    run(extending(lease), [this, done = std::move(done)] { done(error_, result_); });
  }

 private:
  // One operation at a time: false (and the caller tells busy()) while one runs.
  bool begin() {
    if (busy_) return false;
    busy_ = true;
    error_.clear();
    result_ = false;
    return true;
  }
  static std::error_code busy() { return make_error_code(Errc::bad_option); }

  // Keeps `operation` until it ends; then tells `tell` (with error_ and result_ set), on the loop
  // and never inside the call that started it.
  template <class Tell>
  void run(Task<void> operation, Tell tell) {
    running_ = std::move(operation);
    starting_ = true;
    running_.then([this, tell = std::move(tell)]() mutable {
      // The frame goes after this callback (the caller may destroy the lock in `tell`).
      Task<void> ended = std::move(running_);
      busy_ = false;
      if (starting_) {
        loop_.post(std::move(tell));
      } else {
        tell();
      }
    });
    starting_ = false;
  }

  Task<void> acquiring(EventLock::Clock::time_point deadline, std::stop_token stop) {
    try {
      const bool acquired = co_await core_->acquire_on(shared_loop(), deadline, stop);
      if (stop.stop_requested()) {
        // Won by an attempt sent before the stop: given back, so a cancelled acquire never
        // leaves the lock held.
        if (acquired) co_await core_->release_task();
        error_ = std::make_error_code(std::errc::operation_canceled);
        co_return;
      }
      result_ = acquired;
    } catch (const Error& error) {
      error_ = error.code();
    } catch (const std::exception&) {
      error_ = make_error_code(Errc::io);
    }
  }

  Task<void> releasing() {
    co_await core_->release_task();
    error_ = core_->last_error();
  }

  Task<void> extending(std::chrono::milliseconds lease) {
    try {
      result_ = co_await core_->extend_task(lease);
    } catch (const Error& error) {
      error_ = error.code();
    }
  }

  // The loop, without owning it: the program's loop outlives its locks, and a last reference
  // dropped by a lock's frame must never be what destroys it.
  std::shared_ptr<EventLoop> shared_loop() const { return std::shared_ptr<EventLoop>(std::shared_ptr<void>(), &loop_); }

  EventLoop& loop_;
  std::unique_ptr<LockCore> core_;
  Task<void> running_;
  bool busy_ = false;
  bool starting_ = false;
  std::error_code error_;
  bool result_ = false;
};

}  // namespace detail

EventClient::EventClient(Client client, std::shared_ptr<EventLoop> loop)
    : client_(std::move(client)),
      loop_(std::move(loop)),
      routes_(detail::PipelineRoutes::make(client_.state(), loop_)) {}

EventClient::~EventClient() = default;

EventLock::EventLock(std::unique_ptr<detail::EventLockCore> core) : core_(std::move(core)) {}
EventLock::~EventLock() = default;

void EventLock::acquire(Clock::time_point deadline, std::stop_token stop, AcquireDone done) {
  if (const std::error_code refusal = refused()) {
    core_->loop().post([done = std::move(done), refusal] { done(refusal, false); });
    return;
  }
  core_->acquire(deadline, std::move(stop), std::move(done));
}
void EventLock::release(Done done) { core_->release(std::move(done)); }
void EventLock::extend(std::chrono::milliseconds lease, AcquireDone done) { core_->extend(lease, std::move(done)); }

bool EventLock::owns_lock() const noexcept { return core_->core().holds(); }
std::chrono::milliseconds EventLock::valid_for() const noexcept { return core_->core().valid_for(); }
std::string EventLock::value() const { return core_->core().value(); }
std::optional<std::uint64_t> EventLock::fence() const noexcept { return core_->core().fence(); }
const MutexOptions& EventLock::options() const noexcept { return core_->core().options(); }

void EventLock::on_lease_lost(std::function<void(const Error&)> handler) {
  // Told on the renewal thread: posted to the loop, which outlives this lock.
  EventLoop* loop = &core_->loop();
  core_->core().on_lease_lost(
      [loop, handler = std::move(handler)](const Error& why) { loop->post([handler, why] { handler(why); }); });
}

namespace {
std::unique_ptr<detail::EventLockCore> key_core(EventClient& client, std::shared_ptr<detail::PipelineRoutes> routes,
                                                std::string key, MutexOptions options) {
  options.validate();
  if (key.empty()) throw Error(Errc::bad_option, "lock key must not be empty");
  std::unique_ptr<detail::LockTarget> target;
  if (client.client().state()->redlock()) {
    target = std::make_unique<detail::QuorumTarget>(client.client().state(), std::move(key), options,
                                                    routes->quorum_rounds());
  } else {
    target = std::make_unique<detail::SingleKeyTarget>(client.client().state(), std::move(key), options,
                                                       std::move(routes));
  }
  return std::make_unique<detail::EventLockCore>(client, std::move(target), std::move(options), "EventMutex");
}

std::unique_ptr<detail::EventLockCore> key_set_core(EventClient& client, std::shared_ptr<detail::PipelineRoutes> routes,
                                                    std::vector<std::string> keys, MutexOptions options) {
  options.validate();
  auto target = detail::make_key_set_target(client.client().state(), std::move(keys), options, std::move(routes));
  return std::make_unique<detail::EventLockCore>(client, std::move(target), std::move(options), "EventMultiMutex");
}
}  // namespace

EventMutex::EventMutex(EventClient& client, std::string key, MutexOptions options)
    : EventLock(key_core(client, client.routes_, std::move(key), std::move(options))) {}

const std::string& EventMutex::key() const noexcept { return core().core().target().key(); }

namespace {
// A side of a read/write lock; the write side refuses to start while the read side holds.
class EventRwSide final : public EventLock {
 public:
  EventRwSide(std::unique_ptr<detail::EventLockCore> core, const EventLock* reader)
      : EventLock(std::move(core)), reader_(reader) {}

 private:
  std::error_code refused() const noexcept override {
    if (reader_ != nullptr && reader_->owns_lock()) return make_error_code(Errc::bad_option);
    return {};
  }
  const EventLock* reader_;  // the same holder's read side, for the write side; null for the read side
};
}  // namespace

EventSharedMutex::EventSharedMutex(EventClient& client, std::string key, MutexOptions options) {
  if (key.empty()) throw Error(Errc::bad_option, "lock key must not be empty");
  const std::shared_ptr<detail::ClientState>& state = client.client().state();
  detail::RwLockSides sides = detail::rwlock_sides(*state, std::move(options), "EventSharedMutex");
  const auto side_core = [&](std::shared_ptr<detail::LockStrategy> strategy) {
    auto target = std::make_unique<detail::SingleKeyTarget>(state, key, sides.options, std::move(strategy), client.routes_);
    return std::make_unique<detail::EventLockCore>(client, std::move(target), sides.options, "EventSharedMutex");
  };
  shared = std::make_unique<EventRwSide>(side_core(std::move(sides.reader)), nullptr);
  exclusive = std::make_unique<EventRwSide>(side_core(std::move(sides.writer)), shared.get());
}

EventMultiMutex::EventMultiMutex(EventClient& client, std::vector<std::string> keys, MutexOptions options)
    : EventLock(key_set_core(client, client.routes_, std::move(keys), std::move(options))) {}

const std::vector<std::string>& EventMultiMutex::keys() const noexcept {
  // An EventMultiMutex's target is always one.
  return static_cast<const detail::KeySetTarget&>(core().core().target()).keys();
}

}  // namespace lockbridge
