// lock_contender URL KEY CHECK_KEY STRATEGY PRESET ACQUISITIONS [LEASE_MS [STOP_KEY]]
// One process of the cross-process mutual-exclusion test: ACQUISITIONS times, lock KEY, INCR
// CHECK_KEY (must return 1: anything else means two holders at once), DECR it, unlock. STRATEGY
// rwlock is a SharedMutex (Redisson's read/write lock), PRESET read or write its side: a writer
// checks as above and that CHECK_KEY:readers is 0; a reader INCRs CHECK_KEY:readers and checks
// that CHECK_KEY is 0 (no writer beside it). STRATEGY semaphore is a Semaphore at KEY whose PRESET
// is its number of permits (set once, by whoever comes first): each holder INCRs CHECK_KEY, which
// must not exceed that number. STRATEGY leased takes one permit of a LeasedSemaphore at KEY for
// PRESET ms, prints its id, and sleeps two minutes (to be killed); STRATEGY leased_pool draws one
// permit of it at a time (LEASE_MS each), as semaphore does, from PRESET permits. STRATEGY latch
// waits once for the Latch at KEY to open (re-reading only once a minute, so it must be woken) and
// checks that CHECK_KEY, set just before the opening count-down, is there: a waiter that passed
// a closed latch would not see it. STRATEGY redisson takes PRESET
// fair (Redisson's RFairLock), fenced (RFencedLock: each holder also checks that its token is
// larger than CHECK_KEY:fence, the last holder's, and leaves its own there) or spin (RSpinLock:
// MutexOptions::redisson_spin_lock(), waiting as it does; LEASE_MS replaces its 30 s). With
// STOP_KEY it also stops, between acquisitions, once that key exists (so it can run for as long as
// something else does), and counts each acquisition in STOP_KEY:acquired, so that whoever runs it
// can tell when the processes have taken part. LEASE_MS: the lease (default 60000).
// Prints "acquisitions=N violations=V errors=E" and exits 0 unless something threw.
#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>

#include "lockbridge/lockbridge.hpp"

int main(int argc, char** argv) {
  if (argc < 7 || argc > 9) {
    std::cerr << "usage: lock_contender URL KEY CHECK_KEY token|legacy|redisson|rwlock|semaphore|leased|leased_pool|latch "
                 "faithful|hardened|none|fair|fenced|spin|read|write|PERMITS "
                 "ACQUISITIONS "
                 "[LEASE_MS [STOP_KEY]]\n";
    return 2;
  }
  try {
    const lockbridge::Client client(argv[1]);
    const std::string key = argv[2];
    const std::string check_key = argv[3];
    const std::string strategy = argv[4];
    const std::string preset = argv[5];
    const bool spin = strategy == "redisson" && preset == "spin";
    lockbridge::MutexOptions options =
        spin ? lockbridge::MutexOptions::redisson_spin_lock() : lockbridge::MutexOptions{};
    options.strategy = strategy == "legacy"                                ? lockbridge::StrategyKind::legacy
                       : strategy == "redisson" || strategy == "rwlock" ? lockbridge::StrategyKind::redisson
                                                                           : lockbridge::StrategyKind::token;
    options.legacy.preset =
        preset == "faithful" ? lockbridge::LegacyPreset::faithful : lockbridge::LegacyPreset::hardened;
    if (preset == "fair") options.wait_mode = lockbridge::WaitMode::fair;
    options.token.fencing = preset == "fenced";
    options.lease = std::chrono::milliseconds(argc > 7 ? std::strtol(argv[7], nullptr, 10) : 60000);
    const std::string stop_key = argc > 8 ? argv[8] : "";
    options.acquire_timeout = std::chrono::seconds(120);
    if (!spin) {
      options.retry =
          lockbridge::RetryPolicy::backoff_with_jitter(std::chrono::milliseconds(1), std::chrono::milliseconds(2));
    }
    const long acquisitions = std::strtol(argv[6], nullptr, 10);

    long violations = 0;
    long errors = 0;
    long done = 0;
    // One holder's check: INCR `mine` (more than `most` holders, when most > 0, is a violation),
    // nobody on `others`' side, DECR.
    const auto count = [&](const std::string& mine, const std::string& others, long long most) {
      const long long held = client.command({"INCR", mine}).integer;
      const std::string beside = others.empty() ? "" : client.command({"GET", others}).str;
      if ((most > 0 && held > most) || (!beside.empty() && beside != "0")) ++violations;
      client.command({"DECR", mine});
      // Counted for whoever runs the fleet; the count lasts ten minutes, whoever forgets it.
      if (!stop_key.empty() && client.command({"INCR", stop_key + ":acquired"}).integer == 1) {
        client.command({"PEXPIRE", stop_key + ":acquired", "600000"});
      }
    };
    const auto stop_now = [&] { return !stop_key.empty() && client.command({"EXISTS", stop_key}).integer == 1; };
    const std::string readers_key = check_key + ":readers";
    if (strategy == "leased") {
      lockbridge::LeasedSemaphore permits(client, key);
      std::cout << permits.acquire(std::chrono::milliseconds(std::strtoll(argv[5], nullptr, 10))) << std::endl;
      std::this_thread::sleep_for(std::chrono::minutes(2));
      return 0;
    }
    if (strategy == "latch") {
      const lockbridge::Latch latch(client, key, {.recheck = std::chrono::minutes(1)});
      if (!latch.try_wait_for(std::chrono::seconds(100))) ++errors;
      else if (client.command({"EXISTS", check_key}).integer != 1) ++violations;
      done = 1;
    } else if (strategy == "leased_pool") {
      lockbridge::LeasedSemaphore permits(client, key, {.acquire_timeout = std::chrono::seconds(120)});
      const long long most = std::strtoll(argv[5], nullptr, 10);
      (void)permits.try_set_permits(most);
      for (; done < acquisitions && !stop_now(); ++done) {
        const std::string permit = permits.acquire(options.lease);
        count(check_key, "", most);
        if (!permits.release(permit)) ++errors;  // its lease ended while held
      }
    } else if (strategy == "semaphore") {
      lockbridge::Semaphore permits(client, key, {.acquire_timeout = std::chrono::seconds(120)});
      const long long most = std::strtoll(argv[5], nullptr, 10);
      (void)permits.try_set_permits(most);
      for (; done < acquisitions && !stop_now(); ++done) {
        permits.acquire();
        count(check_key, "", most);
        permits.release();
      }
    } else if (strategy == "rwlock") {
      lockbridge::SharedMutex rw(client, key, options);
      const bool reader = std::string(argv[5]) == "read";
      for (; done < acquisitions && !stop_now(); ++done) {
        if (reader) {
          rw.lock_shared();
          count(readers_key, check_key, 0);
          rw.unlock_shared();
        } else {
          rw.lock();
          count(check_key, readers_key, 1);
          rw.unlock();
        }
        if (rw.last_error()) ++errors;
      }
    } else {
      lockbridge::Mutex mutex(client, key, options);
      const std::string fence_key = check_key + ":fence";
      for (; done < acquisitions && !stop_now(); ++done) {
        mutex.lock();
        count(check_key, "", 1);
        if (options.token.fencing) {
          const auto last = client.command({"GET", fence_key});
          const auto fence = mutex.fence();
          if (!fence || (!last.is_nil() && *fence <= std::stoull(last.str))) ++violations;
          if (fence) client.command({"SET", fence_key, std::to_string(*fence)});
        }
        mutex.unlock();
        if (mutex.last_error()) ++errors;
      }
    }
    std::cout << "acquisitions=" << done << " violations=" << violations << " errors=" << errors << std::endl;
    return 0;
  } catch (const std::exception& error) {
    std::cerr << "lock_contender: " << error.what() << "\n";
    return 3;
  }
}
