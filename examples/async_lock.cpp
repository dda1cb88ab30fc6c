// An Asio program that shares a lock among coroutines without a thread per waiter: each of
// `workers` coroutines takes the lock, holds it briefly, and lets it go, all on one thread. The
// waiters are woken by the holder's release (notify mode), not by polling.
//
//   async_lock_example [URL] [WORKERS]     default: redis://127.0.0.1:6379, 20 workers
//
// Exit status 0 when every worker held the lock once and no two held it at once.
#include <unistd.h>

// Standalone Asio, or Boost.Asio when built with LOCKBRIDGE_ASIO_USE_BOOST (as lockbridge/asio.hpp is).
#if defined(LOCKBRIDGE_ASIO_USE_BOOST)
#include <utility>  // before Boost 1.74's awaitable.hpp, which uses std::exchange without it

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
namespace net = boost::asio;
#else
#include <asio/co_spawn.hpp>
#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>
namespace net = asio;
#endif

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <lockbridge/asio.hpp>
#include <lockbridge/lockbridge.hpp>

namespace {

struct Tally {
  int holding = 0;  // workers in the critical section now
  int most = 0;     // the most at once: 1 when the lock works
  int done = 0;     // workers that held it and let it go
  bool failed = false;
};

net::awaitable<void> worker(lockbridge::AsyncMutex& mutex, int id, Tally& tally) {
  co_await mutex.async_lock(net::use_awaitable);  // waits without a thread of its own
  tally.most = std::max(tally.most, ++tally.holding);
  net::steady_timer work(co_await net::this_coro::executor, std::chrono::milliseconds(2));
  co_await work.async_wait(net::use_awaitable);  // the critical section
  --tally.holding;
  co_await mutex.async_unlock(net::use_awaitable);
  ++tally.done;
  std::cout << "worker " << id << " held " << mutex.key() << '\n';
}

}  // namespace

int main(int argc, char** argv) {
  const std::string url = argc > 1 ? argv[1] : "redis://127.0.0.1:6379";
  const int workers = argc > 2 ? std::atoi(argv[2]) : 20;
  try {
    net::io_context io;
    lockbridge::AsyncClient redis(io.get_executor(), lockbridge::Client(url));
    lockbridge::MutexOptions options;
    options.acquire_timeout = std::chrono::seconds(30);
    const std::string key = "lockbridge:example:" + std::to_string(::getpid());
    std::vector<std::unique_ptr<lockbridge::AsyncMutex>> mutexes;  // one lock holder per worker
    Tally tally;
    for (int i = 0; i < workers; ++i) {
      mutexes.push_back(std::make_unique<lockbridge::AsyncMutex>(redis, key, options));
      net::co_spawn(io, worker(*mutexes.back(), i, tally), [&](std::exception_ptr error) {
        if (!error) return;
        tally.failed = true;
        try {
          std::rethrow_exception(error);
        } catch (const std::exception& e) {
          std::cerr << "worker failed: " << e.what() << '\n';
        }
      });
    }
    io.run();  // one thread: every worker, waiting or not
    std::cout << tally.done << " of " << workers << " workers held the lock, at most " << tally.most << " at once\n";
    return !tally.failed && tally.done == workers && tally.most == 1 ? 0 : 1;
  } catch (const std::exception& error) {
    std::cerr << "async_lock_example: " << error.what() << '\n';
    return 2;
  }
}
