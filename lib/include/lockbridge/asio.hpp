// lockbridge on Asio: header-only, compiled in the program against the program's own Asio, so the
// library binary carries no Asio of its own.
//
// Standalone Asio (Debian's libasio-dev, 1.22 and later) by default; define
// LOCKBRIDGE_ASIO_USE_BOOST before including this header for Boost.Asio: 1.74 (Debian 12's
// default) and later work; per-operation cancellation (cancelling a waiting acquire through a
// cancellation slot, awaitable_operators, timeouts) needs 1.77 or later, and before it a
// cancellation is not seen: the acquire runs until it ends by itself, at its deadline at most.
// Asio 1.22 turns
// its own C++20 coroutine support (awaitable, use_awaitable) on for GCC only: with clang, define
// ASIO_HAS_CO_AWAIT=1 to use them (this header itself does not need them).
//
//   asio::io_context io;
//   lockbridge::AsyncClient redis(io.get_executor(), lockbridge::Client("redis://127.0.0.1:6379"));
//   lockbridge::AsyncMutex m(redis, "orders:42");
//   co_await m.async_lock(asio::use_awaitable);      // no thread waits meanwhile
//   ...
//   co_await m.async_unlock(asio::use_awaitable);
//
// AsyncMultiMutex takes a set of keys all at once or not at all, as MultiMutex does.
//
// Every operation takes a completion token (a callback, use_future, use_awaitable, deferred) and
// completes on the handler's associated executor (by default the client's), never inside the call
// that started it. A per-operation cancellation (Asio's cancellation slots, as
// asio::experimental::awaitable_operators and timeouts use) ends a waiting acquire at once with
// asio::error::operation_aborted; an attempt already sent that won the lock is released again.
//
// AsioEventLoop runs lockbridge's event-driven engine on an executor of the program's
// (lockbridge/event_loop.hpp): lockbridge's callbacks run one at a time on a strand of it, so an
// io_context run by several threads is fine. Destroy lockbridge's objects before the io_context,
// and let it run until it runs out of work first: what they leave to finish in the background (a
// waiter leaving its queue, a lock released as its AsyncMutex went) finishes there.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <system_error>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "lockbridge/deadline.hpp"
#include "lockbridge/event_counters.hpp"
#include "lockbridge/event_loop.hpp"
#include "lockbridge/event_mutex.hpp"

#if defined(LOCKBRIDGE_ASIO_USE_BOOST)
#include <boost/version.hpp>
// Per-operation cancellation came with Boost 1.77; before it, operations cannot be cancelled.
#if BOOST_VERSION >= 107700
#define LOCKBRIDGE_ASIO_CANCELLATION 1
#include <boost/asio/associated_cancellation_slot.hpp>
#else
#define LOCKBRIDGE_ASIO_CANCELLATION 0
#endif
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
namespace lockbridge::asio_impl {
namespace net = ::boost::asio;
using error_code = ::boost::system::error_code;
}  // namespace lockbridge::asio_impl
#else
#define LOCKBRIDGE_ASIO_CANCELLATION 1  // standalone Asio has had cancellation slots since 1.19
#include <asio/any_io_executor.hpp>
#include <asio/associated_cancellation_slot.hpp>
#include <asio/associated_executor.hpp>
#include <asio/async_result.hpp>
#include <asio/dispatch.hpp>
#include <asio/error.hpp>
#include <asio/executor_work_guard.hpp>
#include <asio/posix/stream_descriptor.hpp>
#include <asio/post.hpp>
#include <asio/steady_timer.hpp>
#include <asio/strand.hpp>
namespace lockbridge::asio_impl {
namespace net = ::asio;
using error_code = ::asio::error_code;
}  // namespace lockbridge::asio_impl
#endif

namespace lockbridge {

class AsioEventLoop final : public EventLoop {
 public:
  using Executor = asio_impl::net::any_io_executor;

  explicit AsioEventLoop(Executor executor) : strand_(asio_impl::net::make_strand(std::move(executor))) {}

  void post(std::function<void()> work) override { asio_impl::net::post(strand_, std::move(work)); }
  std::unique_ptr<Timer> timer() override { return std::make_unique<AsioTimer>(strand_); }
  std::unique_ptr<Descriptor> watch(int fd) override { return std::make_unique<AsioDescriptor>(strand_, fd); }

  const asio_impl::net::strand<Executor>& strand() const noexcept { return strand_; }

 private:
  using Strand = asio_impl::net::strand<Executor>;

  // Asio calls a cancelled wait's handler too (with operation_aborted), possibly after the object
  // that started it is gone: each handler keeps the state alive, and a generation number tells
  // it whether its wait is still the one wanted.
  class AsioTimer final : public Timer {
   public:
    explicit AsioTimer(const Strand& strand) : state_(std::make_shared<State>(strand)) {}
    ~AsioTimer() override { cancel(); }
    void expire_at(Clock::time_point when, std::function<void()> fire) override {
      const std::uint64_t generation = ++state_->generation;
      state_->timer.expires_at(when);
      state_->timer.async_wait(
          [state = state_, generation, fire = std::move(fire)](const asio_impl::error_code& error) {
            // Only the latest expiry, neither replaced nor cancelled since, is told.
            if (!error && generation == state->generation) fire();
          });
    }
    void cancel() noexcept override {
      ++state_->generation;
      state_->timer.cancel();
    }

   private:
    struct State {
      explicit State(const Strand& strand) : timer(strand) {}
      asio_impl::net::steady_timer timer;
      std::uint64_t generation = 0;
    };
    std::shared_ptr<State> state_;
  };

  class AsioDescriptor final : public Descriptor {
   public:
    AsioDescriptor(const Strand& strand, int fd) : state_(std::make_shared<State>(strand, fd)) {}
    ~AsioDescriptor() override {
      cancel();
      // lockbridge owns the descriptor and closes it: Asio lets go of it without closing it.
      try {
        state_->descriptor.release();
      } catch (...) {  // it reports nothing it can fail on; a destructor must not throw regardless
      }
    }
    void wait_readable(std::function<void()> ready) override { wait(false, std::move(ready)); }
    void wait_writable(std::function<void()> ready) override { wait(true, std::move(ready)); }
    void cancel() noexcept override {
      ++state_->read_generation;
      ++state_->write_generation;
      asio_impl::error_code ignored;
      state_->descriptor.cancel(ignored);
    }

   private:
    struct State {
      State(const Strand& strand, int fd) : descriptor(strand, fd) {}
      asio_impl::net::posix::stream_descriptor descriptor;
      std::uint64_t read_generation = 0;
      std::uint64_t write_generation = 0;
    };
    static std::uint64_t& generation_of(State& state, bool write) noexcept {
      return write ? state.write_generation : state.read_generation;
    }
    void wait(bool write, std::function<void()> ready) {
      const std::uint64_t generation = ++generation_of(*state_, write);
      state_->descriptor.async_wait(
          write ? asio_impl::net::posix::stream_descriptor::wait_write
                : asio_impl::net::posix::stream_descriptor::wait_read,
          [state = state_, write, generation, ready = std::move(ready)](const asio_impl::error_code& error) {
            // An error of the descriptor itself (hung up) is for lockbridge's read to find.
            if (generation == generation_of(*state, write) && error != asio_impl::net::error::operation_aborted)
              ready();
          });
    }
    std::shared_ptr<State> state_;
  };

  Strand strand_;
};

// A Client whose locks are driven by an Asio executor: every request of every AsyncMutex of it is
// pipelined on one connection per server (per master on Redis Cluster), on a strand of that executor.
class AsyncClient {
 public:
  using executor_type = asio_impl::net::any_io_executor;
  // Does no I/O.
  AsyncClient(executor_type executor, Client client)
      : executor_(executor), loop_(std::make_shared<AsioEventLoop>(executor)), engine_(std::move(client), loop_) {}

  executor_type get_executor() const noexcept { return executor_; }
  const Client& client() const noexcept { return engine_.client(); }
  EventClient& engine() noexcept { return engine_; }

 private:
  executor_type executor_;
  std::shared_ptr<AsioEventLoop> loop_;
  EventClient engine_;
};

namespace asio_impl {

// A handler, kept until it is called once on its associated executor (`fallback`, the client's,
// by default); Asio's handlers may be move-only, so it is shared by the callbacks that reach it.
// `before` runs there first (an operation clears its cancellation slot, which must not outlive it).
template <class Handler, class Before = void (*)()>
auto complete_with(
    const net::any_io_executor& fallback, Handler handler, Before before = [] {}) {
  auto executor = net::get_associated_executor(handler, fallback);
  auto kept = std::make_shared<Handler>(std::move(handler));
  auto work = std::make_shared<net::executor_work_guard<decltype(executor)>>(executor);
  return [kept, work, before](auto... results) {
    auto ex = work->get_executor();
    net::dispatch(ex, [kept, work, before, results...]() mutable {
      work->reset();
      before();
      std::move (*kept)(results...);
    });
  };
}

// std::errc::operation_canceled, as the engine says it, is Asio's operation_aborted here.
inline std::error_code in_asio_terms(std::error_code error) {
  // Under Boost, its error_code converted to std::error_code: it still compares equal to
  // std::errc::operation_canceled.
  if (error == std::errc::operation_canceled) return error_code(net::error::operation_aborted);
  return error;
}

// Starts an operation that a stop request ends: `start(completion, stop)`, where the handler's
// cancellation slot, if it has one, requests `stop` (a shared std::stop_source the operation keeps
// until it completes).
template <class Handler, class Start>
void start_cancellable(const net::any_io_executor& fallback, Handler handler, Start start) {
  auto stop = std::make_shared<std::stop_source>();
#if LOCKBRIDGE_ASIO_CANCELLATION
  auto slot = net::get_associated_cancellation_slot(handler);
  if (slot.is_connected()) slot.assign([stop](net::cancellation_type) { stop->request_stop(); });
  auto completion = complete_with(fallback, std::move(handler), [slot]() mutable {
    if (slot.is_connected()) slot.clear();
  });
#else
  auto completion = complete_with(fallback, std::move(handler));
#endif
  start(std::move(completion), std::move(stop));
}

}  // namespace asio_impl

// One lock holder (as Mutex and MultiMutex are), its operations taking Asio completion tokens:
// what AsyncMutex (one key) and AsyncMultiMutex (a set of keys) share. Use it from the client's
// executor; one operation at a time (a second one while one runs completes with
// Errc::bad_option). Destroying it releases a held lock in the background.
class AsyncLock {
 public:
  using Clock = std::chrono::steady_clock;

  // Waits until acquired, for at most options().acquire_timeout: void(std::error_code), with
  // Errc::timeout when it gave up.
  template <class CompletionToken>
  auto async_lock(CompletionToken&& token) {
    const auto timeout = lock_->options().acquire_timeout;
    return acquire<void(std::error_code)>(Clock::now() + timeout, std::forward<CompletionToken>(token),
                                          [](std::error_code error, bool acquired) -> std::error_code {
                                            if (!error && !acquired) return make_error_code(Errc::timeout);
                                            return error;
                                          });
  }
  // One attempt: void(std::error_code, bool acquired).
  template <class CompletionToken>
  auto async_try_lock(CompletionToken&& token) {
    return async_try_lock_until(Clock::now(), std::forward<CompletionToken>(token));
  }
  // Waits by the retry policy until acquired or it gives up at the deadline: void(std::error_code, bool).
  template <class Rep, class Period, class CompletionToken>
  auto async_try_lock_for(std::chrono::duration<Rep, Period> wait, CompletionToken&& token) {
    return async_try_lock_until(lockbridge::deadline_after(wait), std::forward<CompletionToken>(token));
  }
  template <class CompletionToken>
  auto async_try_lock_until(Clock::time_point deadline, CompletionToken&& token) {
    return acquire<void(std::error_code, bool)>(
        deadline, std::forward<CompletionToken>(token),
        [](std::error_code error, bool acquired) { return std::make_tuple(error, acquired); });
  }
  // Releases: void(std::error_code); lease_lost when the key no longer held our value.
  template <class CompletionToken>
  auto async_unlock(CompletionToken&& token) {
    return asio_impl::net::async_initiate<CompletionToken, void(std::error_code)>(
        [this](auto handler) {
          auto completion = complete_with(std::move(handler));
          lock_->release([completion](std::error_code error) { completion(error); });
        },
        token);
  }
  // Resets the lease of the held lock: void(std::error_code, bool), false when it is no longer ours.
  template <class CompletionToken>
  auto async_extend(std::chrono::milliseconds lease, CompletionToken&& token) {
    return asio_impl::net::async_initiate<CompletionToken, void(std::error_code, bool)>(
        [this, lease](auto handler) {
          auto completion = complete_with(std::move(handler));
          lock_->extend(lease, [completion](std::error_code error, bool held) { completion(error, held); });
        },
        token);
  }

  bool owns_lock() const noexcept { return lock_->owns_lock(); }
  std::chrono::milliseconds valid_for() const noexcept { return lock_->valid_for(); }
  std::string value() const { return lock_->value(); }
  std::optional<std::uint64_t> fence() const noexcept { return lock_->fence(); }
  const MutexOptions& options() const noexcept { return lock_->options(); }
  // The loss notice, called on the client's strand (lockbridge's own renewals stay on its
  // renewal thread, so a busy program loop cannot lose a lease). Set before acquiring.
  void on_lease_lost(std::function<void(const Error&)> handler) { lock_->on_lease_lost(std::move(handler)); }

 protected:
  AsyncLock(AsyncClient& client, std::unique_ptr<EventLock> lock) : client_(client), lock_(std::move(lock)) {}
  ~AsyncLock() = default;  // not deleted through a base pointer
  const EventLock& engine() const noexcept { return *lock_; }

 private:
  template <class Handler>
  auto complete_with(Handler handler) {
    return asio_impl::complete_with(client_.get_executor(), std::move(handler));
  }

  template <class Signature, class CompletionToken, class Results>
  auto acquire(Clock::time_point deadline, CompletionToken&& token, Results results) {
    return asio_impl::net::async_initiate<CompletionToken, Signature>(
        [this, deadline, results](auto handler) {
          asio_impl::start_cancellable(
              client_.get_executor(), std::move(handler), [this, deadline, results](auto completion, auto stop) {
                lock_->acquire(deadline, stop->get_token(),
                               [completion, results, stop](std::error_code error, bool acquired) {
                                 std::apply(completion, as_tuple(results(asio_impl::in_asio_terms(error), acquired)));
                               });
              });
        },
        token);
  }
  template <class... Values>
  static std::tuple<Values...> as_tuple(std::tuple<Values...> values) {
    return values;
  }
  static std::tuple<std::error_code> as_tuple(std::error_code error) { return std::make_tuple(error); }

  AsyncClient& client_;
  std::unique_ptr<EventLock> lock_;
};

// A lock on one key, as Mutex.
class AsyncMutex final : public AsyncLock {
 public:
  // Throws Error{bad_option} for an empty key or invalid options. Does no I/O.
  AsyncMutex(AsyncClient& client, std::string key, MutexOptions options = {})
      : AsyncLock(client, std::make_unique<EventMutex>(client.engine(), std::move(key), std::move(options))) {}
  const std::string& key() const noexcept { return static_cast<const EventMutex&>(engine()).key(); }
};

// A lock on several keys, taken all at once or not at all, as MultiMutex (its rules: token
// strategy; no watchdog, fair mode, fencing, reentry or async_extend yet).
class AsyncMultiMutex final : public AsyncLock {
 public:
  // Throws Error{bad_option} as MultiMutex's constructor does. Does no I/O.
  AsyncMultiMutex(AsyncClient& client, std::vector<std::string> keys, MutexOptions options = {})
      : AsyncLock(client, std::make_unique<EventMultiMutex>(client.engine(), std::move(keys), std::move(options))) {}
  // The keys, deduplicated and sorted.
  const std::vector<std::string>& keys() const noexcept { return static_cast<const EventMultiMutex&>(engine()).keys(); }
};

// Redisson's read/write lock on one key, as SharedMutex: its two sides, each an AsyncLock of the
// same holder (EventSharedMutex's rules).
//
//   lockbridge::AsyncSharedMutex config(client, "config");
//   co_await config.shared().async_lock(asio::use_awaitable);     // with any number of readers
//   co_await config.shared().async_unlock(asio::use_awaitable);
//   co_await config.exclusive().async_lock(asio::use_awaitable);  // alone
class AsyncSharedMutex {
 public:
  // Throws Error{bad_option} as SharedMutex's constructor does. Does no I/O.
  AsyncSharedMutex(AsyncClient& client, std::string key, MutexOptions options = MutexOptions::redisson_lock())
      : AsyncSharedMutex(client, EventSharedMutex(client.engine(), std::move(key), std::move(options))) {}

  AsyncLock& shared() noexcept { return shared_; }
  AsyncLock& exclusive() noexcept { return exclusive_; }

 private:
  class Side final : public AsyncLock {
   public:
    Side(AsyncClient& client, std::unique_ptr<EventLock> lock) : AsyncLock(client, std::move(lock)) {}
  };
  AsyncSharedMutex(AsyncClient& client, EventSharedMutex sides)
      : shared_(client, std::move(sides.shared)), exclusive_(client, std::move(sides.exclusive)) {}

  Side shared_;
  Side exclusive_;  // declared last: destroyed first (a downgrade's reads stay)
};

// What AsyncLatch and AsyncSemaphore share: their operations' initiation on the client's executor.
class AsyncCounter {
 protected:
  explicit AsyncCounter(AsyncClient& client) : client_(client) {}
  ~AsyncCounter() = default;  // not deleted through a base pointer

  // `start(completion)`, completing with the engine's results (an error in Asio's terms first).
  template <class Signature, class CompletionToken, class Start>
  auto initiate(CompletionToken&& token, Start start) {
    return asio_impl::net::async_initiate<CompletionToken, Signature>(
        [this, start](auto handler) { start(asio_impl::complete_with(client_.get_executor(), std::move(handler))); },
        token);
  }
  // The same for an operation a cancellation ends: `start(completion, stop)`.
  template <class Signature, class CompletionToken, class Start>
  auto initiate_cancellable(CompletionToken&& token, Start start) {
    return asio_impl::net::async_initiate<CompletionToken, Signature>(
        [this, start](auto handler) {
          asio_impl::start_cancellable(client_.get_executor(), std::move(handler), start);
        },
        token);
  }
  // An engine callback that completes with (error, value).
  template <class Completion>
  static auto with_value(Completion completion) {
    return [completion](std::error_code error, auto value) { completion(asio_impl::in_asio_terms(error), value); };
  }
  template <class Completion>
  static auto without_value(Completion completion) {
    return [completion](std::error_code error) { completion(asio_impl::in_asio_terms(error)); };
  }

 private:
  AsyncClient& client_;
};

// Redisson's count-down latch, as Latch (EventLatch's rules: several operations may run at once;
// destroying it ends them, uncalled).
//
//   lockbridge::AsyncLatch ready(client, "jobs:ready");
//   co_await ready.async_wait(asio::use_awaitable);   // until the count is 0; no thread waits
class AsyncLatch final : public AsyncCounter {
 public:
  using Clock = std::chrono::steady_clock;
  // Throws Error{bad_option} as Latch's constructor does. Does no I/O.
  AsyncLatch(AsyncClient& client, std::string key, LatchOptions options = {})
      : AsyncCounter(client), latch_(client.engine(), std::move(key), options) {}

  // void(std::error_code, bool set)
  template <class CompletionToken>
  auto async_try_set_count(std::int64_t count, CompletionToken&& token) {
    return initiate<void(std::error_code, bool)>(
        token, [this, count](auto completion) { latch_.try_set_count(count, with_value(completion)); });
  }
  // void(std::error_code)
  template <class CompletionToken>
  auto async_count_down(CompletionToken&& token) {
    return initiate<void(std::error_code)>(token,
                                           [this](auto completion) { latch_.count_down(without_value(completion)); });
  }
  // void(std::error_code, std::int64_t count)
  template <class CompletionToken>
  auto async_count(CompletionToken&& token) {
    return initiate<void(std::error_code, std::int64_t)>(
        token, [this](auto completion) { latch_.count(with_value(completion)); });
  }
  // Until the latch opens: void(std::error_code). A cancellation ends it with operation_aborted.
  template <class CompletionToken>
  auto async_wait(CompletionToken&& token) {
    return initiate_cancellable<void(std::error_code)>(token, [this](auto completion, auto stop) {
      latch_.wait(Clock::time_point::max(), stop->get_token(),
                  [completion, stop](std::error_code error, bool) { completion(asio_impl::in_asio_terms(error)); });
    });
  }
  // Until the latch opens (true) or the wait ends (false): void(std::error_code, bool).
  template <class Rep, class Period, class CompletionToken>
  auto async_wait_for(std::chrono::duration<Rep, Period> wait, CompletionToken&& token) {
    return async_wait_until(lockbridge::deadline_after(wait), std::forward<CompletionToken>(token));
  }
  template <class CompletionToken>
  auto async_wait_until(Clock::time_point deadline, CompletionToken&& token) {
    return initiate_cancellable<void(std::error_code, bool)>(token, [this, deadline](auto completion, auto stop) {
      latch_.wait(deadline, stop->get_token(), [completion, stop](std::error_code error, bool open) {
        completion(asio_impl::in_asio_terms(error), open);
      });
    });
  }

  const std::string& key() const noexcept { return latch_.key(); }

 private:
  EventLatch latch_;
};

// What AsyncSemaphore and AsyncLeasedSemaphore share: a pool of permits on `Engine` (the
// event-driven semaphore under it), set, added to and read the same way.
template <class Engine>
class AsyncPermits : public AsyncCounter {
 public:
  using Clock = std::chrono::steady_clock;
  using Options = std::remove_cvref_t<decltype(std::declval<const Engine&>().options())>;

  // void(std::error_code, bool set)
  template <class CompletionToken>
  auto async_try_set_permits(std::int64_t permits, CompletionToken&& token) {
    return initiate<void(std::error_code, bool)>(
        token, [this, permits](auto completion) { semaphore_.try_set_permits(permits, with_value(completion)); });
  }
  // void(std::error_code, std::int64_t now_available)
  template <class CompletionToken>
  auto async_add_permits(std::int64_t permits, CompletionToken&& token) {
    return initiate<void(std::error_code, std::int64_t)>(
        token, [this, permits](auto completion) { semaphore_.add_permits(permits, with_value(completion)); });
  }
  // void(std::error_code, std::int64_t)
  template <class CompletionToken>
  auto async_available(CompletionToken&& token) {
    return initiate<void(std::error_code, std::int64_t)>(
        token, [this](auto completion) { semaphore_.available(with_value(completion)); });
  }

  const std::string& key() const noexcept { return semaphore_.key(); }
  const Options& options() const noexcept { return semaphore_.options(); }

 protected:
  AsyncPermits(AsyncClient& client, std::string key, const Options& options)
      : AsyncCounter(client), semaphore_(client.engine(), std::move(key), options) {}
  ~AsyncPermits() = default;  // not deleted through a base pointer

  Engine semaphore_;
};

// Redisson's semaphore, as Semaphore (EventSemaphore's rules: several operations may run at once;
// destroying it ends them, uncalled, and gives back what a running acquire had won).
//
//   lockbridge::AsyncSemaphore slots(client, "uploads");
//   co_await slots.async_acquire(1, asio::use_awaitable);   // no thread waits
//   ...
//   co_await slots.async_release(1, asio::use_awaitable);
class AsyncSemaphore final : public AsyncPermits<EventSemaphore> {
 public:
  // Throws Error{bad_option} as Semaphore's constructor does. Does no I/O.
  AsyncSemaphore(AsyncClient& client, std::string key, SemaphoreOptions options = {})
      : AsyncPermits(client, std::move(key), options) {}

  // void(std::error_code, std::int64_t drained)
  template <class CompletionToken>
  auto async_drain(CompletionToken&& token) {
    return initiate<void(std::error_code, std::int64_t)>(
        token, [this](auto completion) { semaphore_.drain(with_value(completion)); });
  }
  // One attempt: void(std::error_code, bool taken).
  template <class CompletionToken>
  auto async_try_acquire(std::int64_t permits, CompletionToken&& token) {
    return initiate<void(std::error_code, bool)>(
        token, [this, permits](auto completion) { semaphore_.try_acquire(permits, with_value(completion)); });
  }
  // Until taken, for at most options().acquire_timeout: void(std::error_code), Errc::timeout when
  // it gave up. A cancellation ends it with operation_aborted, having given back what it won.
  template <class CompletionToken>
  auto async_acquire(std::int64_t permits, CompletionToken&& token) {
    const auto deadline = lockbridge::deadline_after(semaphore_.options().acquire_timeout);
    return initiate_cancellable<void(std::error_code)>(token, [this, permits, deadline](auto completion, auto stop) {
      semaphore_.acquire(permits, deadline, stop->get_token(), [completion, stop](std::error_code error, bool taken) {
        if (!error && !taken) error = make_error_code(Errc::timeout);
        completion(asio_impl::in_asio_terms(error));
      });
    });
  }
  // Until taken (true) or the wait ends (false): void(std::error_code, bool).
  template <class Rep, class Period, class CompletionToken>
  auto async_try_acquire_for(std::chrono::duration<Rep, Period> wait, std::int64_t permits, CompletionToken&& token) {
    return async_try_acquire_until(lockbridge::deadline_after(wait), permits, std::forward<CompletionToken>(token));
  }
  template <class CompletionToken>
  auto async_try_acquire_until(Clock::time_point deadline, std::int64_t permits, CompletionToken&& token) {
    return initiate_cancellable<void(std::error_code, bool)>(token, [this, permits, deadline](auto completion,
                                                                                              auto stop) {
      semaphore_.acquire(permits, deadline, stop->get_token(), [completion, stop](std::error_code error, bool taken) {
        completion(asio_impl::in_asio_terms(error), taken);
      });
    });
  }
  // void(std::error_code)
  template <class CompletionToken>
  auto async_release(std::int64_t permits, CompletionToken&& token) {
    return initiate<void(std::error_code)>(
        token, [this, permits](auto completion) { semaphore_.release(permits, without_value(completion)); });
  }
};

// Redisson's permit-expirable semaphore, as LeasedSemaphore (EventLeasedSemaphore's rules).
//
//   lockbridge::AsyncLeasedSemaphore workers(client, "workers");
//   std::string permit = co_await workers.async_acquire(std::chrono::seconds(30), asio::use_awaitable);
//   ...
//   co_await workers.async_release(permit, asio::use_awaitable);
class AsyncLeasedSemaphore final : public AsyncPermits<EventLeasedSemaphore> {
 public:
  // Throws Error{bad_option} as LeasedSemaphore's constructor does. Does no I/O.
  AsyncLeasedSemaphore(AsyncClient& client, std::string key, LeasedSemaphoreOptions options = {})
      : AsyncPermits(client, std::move(key), options) {}

  // One attempt: void(std::error_code, std::string permit), empty when none was free.
  template <class CompletionToken>
  auto async_try_acquire(std::chrono::milliseconds lease, CompletionToken&& token) {
    return async_try_acquire_until(Clock::time_point::min(), lease, std::forward<CompletionToken>(token));
  }
  // Until a permit is taken, for at most options().acquire_timeout: void(std::error_code,
  // std::string permit), Errc::timeout when it gave up. A cancellation ends it with
  // operation_aborted, having given back what it won.
  template <class CompletionToken>
  auto async_acquire(std::chrono::milliseconds lease, CompletionToken&& token) {
    const auto deadline = lockbridge::deadline_after(semaphore_.options().acquire_timeout);
    return initiate_cancellable<void(std::error_code, std::string)>(
        token, [this, lease, deadline](auto completion, auto stop) {
          semaphore_.acquire(lease, deadline, stop->get_token(),
                             [completion, stop](std::error_code error, std::string permit) {
                               if (!error && permit.empty()) error = make_error_code(Errc::timeout);
                               completion(asio_impl::in_asio_terms(error), std::move(permit));
                             });
        });
  }
  // Until a permit is taken or the wait ends: void(std::error_code, std::string permit), empty
  // when none was taken.
  template <class Rep, class Period, class CompletionToken>
  auto async_try_acquire_for(std::chrono::duration<Rep, Period> wait, std::chrono::milliseconds lease,
                             CompletionToken&& token) {
    return async_try_acquire_until(lockbridge::deadline_after(wait), lease, std::forward<CompletionToken>(token));
  }
  template <class CompletionToken>
  auto async_try_acquire_until(Clock::time_point deadline, std::chrono::milliseconds lease, CompletionToken&& token) {
    return initiate_cancellable<void(std::error_code, std::string)>(
        token, [this, lease, deadline](auto completion, auto stop) {
          semaphore_.acquire(lease, deadline, stop->get_token(),
                             [completion, stop](std::error_code error, std::string permit) {
                               completion(asio_impl::in_asio_terms(error), std::move(permit));
                             });
        });
  }
  // One attempt at `permits` permits at once, all or none: void(std::error_code,
  // std::vector<std::string> permits), none when they were not free.
  template <class CompletionToken>
  auto async_try_acquire(std::int64_t permits, std::chrono::milliseconds lease, CompletionToken&& token) {
    return async_try_acquire_until(Clock::time_point::min(), permits, lease, std::forward<CompletionToken>(token));
  }
  // `permits` permits at once, all or none (LeasedSemaphore's rules), for at most
  // options().acquire_timeout: void(std::error_code, std::vector<std::string> permits),
  // Errc::timeout when it gave up. A cancellation ends it with operation_aborted, having given
  // back what it won.
  template <class CompletionToken>
  auto async_acquire(std::int64_t permits, std::chrono::milliseconds lease, CompletionToken&& token) {
    const auto deadline = lockbridge::deadline_after(semaphore_.options().acquire_timeout);
    return initiate_cancellable<void(std::error_code, std::vector<std::string>)>(
        token, [this, permits, lease, deadline](auto completion, auto stop) {
          semaphore_.acquire(permits, lease, deadline, stop->get_token(),
                             [completion, stop](std::error_code error, std::vector<std::string> taken) {
                               if (!error && taken.empty()) error = make_error_code(Errc::timeout);
                               completion(asio_impl::in_asio_terms(error), std::move(taken));
                             });
        });
  }
  // Until `permits` are taken together or the wait ends: void(std::error_code,
  // std::vector<std::string> permits), none when they were not taken. One attempt when the
  // deadline has passed.
  template <class CompletionToken>
  auto async_try_acquire_until(Clock::time_point deadline, std::int64_t permits, std::chrono::milliseconds lease,
                               CompletionToken&& token) {
    return initiate_cancellable<void(std::error_code, std::vector<std::string>)>(
        token, [this, permits, lease, deadline](auto completion, auto stop) {
          semaphore_.acquire(permits, lease, deadline, stop->get_token(),
                             [completion, stop](std::error_code error, std::vector<std::string> taken) {
                               completion(asio_impl::in_asio_terms(error), std::move(taken));
                             });
        });
  }
  template <class Rep, class Period, class CompletionToken>
  auto async_try_acquire_for(std::chrono::duration<Rep, Period> wait, std::int64_t permits,
                             std::chrono::milliseconds lease, CompletionToken&& token) {
    return async_try_acquire_until(lockbridge::deadline_after(wait), permits, lease,
                                   std::forward<CompletionToken>(token));
  }
  // All the permits or none: void(std::error_code, std::int64_t given_back), 0 when any id held
  // no permit within its lease (then none was given back).
  template <class CompletionToken>
  auto async_release(std::vector<std::string> permits, CompletionToken&& token) {
    return initiate<void(std::error_code, std::int64_t)>(token, [this, permits = std::move(permits)](auto completion) {
      semaphore_.release(permits, with_value(completion));
    });
  }
  // void(std::error_code, bool held): false when its lease had ended (given back all the same).
  template <class CompletionToken>
  auto async_release(std::string permit, CompletionToken&& token) {
    return initiate<void(std::error_code, bool)>(token, [this, permit = std::move(permit)](auto completion) {
      semaphore_.release(permit, with_value(completion));
    });
  }
  // void(std::error_code, bool): false when the id holds no permit (any more).
  template <class CompletionToken>
  auto async_update_lease(std::string permit, std::chrono::milliseconds lease, CompletionToken&& token) {
    return initiate<void(std::error_code, bool)>(token, [this, permit = std::move(permit), lease](auto completion) {
      semaphore_.update_lease(permit, lease, with_value(completion));
    });
  }
};

}  // namespace lockbridge
