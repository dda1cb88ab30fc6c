#include "bench_lock.hpp"

#include <asio/bind_cancellation_slot.hpp>
#include <asio/cancellation_signal.hpp>
#include <asio/io_context.hpp>
#include <asio/post.hpp>

#include <cstdint>
#include <random>
#include <optional>
#include <utility>

#include "lockbridge/asio.hpp"
#include "lockbridge/shared_mutex.hpp"

namespace lockbridge::tools::bench {
namespace {

class BlockingBenchLock final : public BenchLock {
 public:
  BlockingBenchLock(const Client& client, const std::string& key, const MutexOptions& options)
      : mutex_(client, key, options) {}
  bool try_lock() override { return mutex_.try_lock(); }
  bool try_lock_for(std::chrono::nanoseconds wait, std::stop_token stop) override {
    return mutex_.try_lock_for(wait, std::move(stop));
  }
  void unlock() override { mutex_.unlock(); }
  std::error_code last_error() const override { return mutex_.last_error(); }
  std::optional<std::uint64_t> fence() const override { return mutex_.fence(); }

 private:
  Mutex mutex_;
};

// Each acquisition draws its side: the read side with probability read_share percent.
class ReadWriteBenchLock final : public BenchLock {
 public:
  ReadWriteBenchLock(const Client& client, const std::string& key, const MutexOptions& options, int read_share)
      : rw_(client, key, options), read_share_(read_share), draw_(std::random_device{}()) {}
  bool try_lock() override {
    reading_ = draws_read();
    return reading_ ? rw_.try_lock_shared() : rw_.try_lock();
  }
  bool try_lock_for(std::chrono::nanoseconds wait, std::stop_token stop) override {
    reading_ = draws_read();
    return reading_ ? rw_.try_lock_shared_for(wait, std::move(stop)) : rw_.try_lock_for(wait, std::move(stop));
  }
  void unlock() override { reading_ ? rw_.unlock_shared() : rw_.unlock(); }
  std::error_code last_error() const override { return rw_.last_error(); }
  std::optional<std::uint64_t> fence() const override { return std::nullopt; }
  bool shared_layout() const override { return true; }
  bool reading() const override { return reading_; }

 private:
  bool draws_read() { return static_cast<int>(draw_() % 100) < read_share_; }
  SharedMutex rw_;
  const int read_share_;
  std::minstd_rand draw_;
  bool reading_ = false;
};

class AsyncBenchLock final : public BenchLock {
 public:
  AsyncBenchLock(const Client& client, const std::string& key, const MutexOptions& options) {
    client_.emplace(io_.get_executor(), client);
    mutex_.emplace(*client_, key, options);
  }
  ~AsyncBenchLock() override {
    // As asio.hpp asks: lockbridge's objects go first, and the loop runs until the work they left
    // (a held lock's release, a waiter leaving its queue) has finished, before the io_context goes.
    mutex_.reset();
    client_.reset();
    io_.restart();
    io_.run();
  }

  bool try_lock() override { return try_lock_for(std::chrono::nanoseconds(0), {}); }
  bool try_lock_for(std::chrono::nanoseconds wait, std::stop_token stop) override {
    std::optional<std::pair<std::error_code, bool>> outcome;
    const std::uint64_t attempt = ++attempts_;
    mutex_->async_try_lock_for(wait, asio::bind_cancellation_slot(cancel_.slot(), [&](std::error_code error, bool got) {
                                 outcome.emplace(error, got);
                               }));
    // A stop requested from another thread cancels the wait on the loop (Asio's per-operation
    // cancellation), as Mutex's stop_token ends its wait. The posted cancel may run after this
    // call returned (in a later call's, or the destructor's, run of the loop): it then finds another
    // attempt current and does nothing.
    const std::stop_callback on_stop(std::move(stop), [this, attempt] {
      asio::post(io_, [this, attempt] {
        if (attempt == attempts_ && !idle_) cancel_.emit(asio::cancellation_type::all);
      });
    });
    idle_ = false;
    run_until([&] { return outcome.has_value(); });
    idle_ = true;
    const auto [error, acquired] = *outcome;
    if (error == std::errc::operation_canceled || error == asio::error::operation_aborted) return false;
    if (error) throw as_error(error);
    return acquired;
  }
  void unlock() override {
    std::optional<std::error_code> released;
    mutex_->async_unlock([&](std::error_code error) { released = error; });
    run_until([&] { return released.has_value(); });
    last_error_ = *released;
  }
  std::error_code last_error() const override { return last_error_; }
  std::optional<std::uint64_t> fence() const override { return mutex_->fence(); }

 private:
  template <class Done>
  void run_until(Done&& done) {
    io_.restart();
    while (!done()) io_.run_one();
  }
  static Error as_error(std::error_code error) {
    if (error.category() == make_error_code(Errc::io).category()) {
      return Error(static_cast<Errc>(error.value()), "async front: " + error.message());
    }
    return Error(Errc::io, "async front: " + error.message());
  }

  asio::io_context io_;
  std::optional<AsyncClient> client_;
  std::optional<AsyncMutex> mutex_;
  asio::cancellation_signal cancel_;  // of the current acquire
  std::uint64_t attempts_ = 0;        // the current acquire's number
  bool idle_ = true;                  // no acquire under way
  std::error_code last_error_;
};

}  // namespace

std::unique_ptr<BenchLock> make_bench_lock(Front front, const Client& client, const std::string& key,
                                           const MutexOptions& options, std::optional<int> read_share) {
  if (read_share) return std::make_unique<ReadWriteBenchLock>(client, key, options, *read_share);
  if (front == Front::async) return std::make_unique<AsyncBenchLock>(client, key, options);
  return std::make_unique<BlockingBenchLock>(client, key, options);
}

}  // namespace lockbridge::tools::bench
