// lockbridge on Asio: header-only, compiled in the program against the program's own Asio, so the
// library binary carries no Asio of its own.
//
// Standalone Asio (Debian's libasio-dev, 1.22 and later) by default; define
// LOCKBRIDGE_ASIO_USE_BOOST before including this header for Boost.Asio (Boost 1.80 and later,
// the first with Asio 1.22's per-operation cancellation).
//
// AsioEventLoop runs lockbridge's event-driven engine on an executor of the program's
// (lockbridge/event_loop.hpp): lockbridge's callbacks run one at a time on a strand of it, so an
// io_context run by several threads is fine.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>

#include "lockbridge/event_loop.hpp"

#if defined(LOCKBRIDGE_ASIO_USE_BOOST)
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
namespace lockbridge::asio_impl {
namespace net = ::boost::asio;
using error_code = ::boost::system::error_code;
}  // namespace lockbridge::asio_impl
#else
#include <asio/any_io_executor.hpp>
#include <asio/error.hpp>
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

}  // namespace lockbridge
