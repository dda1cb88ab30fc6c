#include "lockbridge/event_counters.hpp"

#include <utility>

#include "core/event_object.hpp"
#include "core/latch_calls.hpp"
#include "core/leased_calls.hpp"
#include "core/semaphore_calls.hpp"

namespace lockbridge {

namespace {

using detail::EventObject;
using detail::OperationStop;
using detail::run_operation;
using detail::Task;

// A callback without a value, for run_operation's.
std::function<void(std::error_code, bool)> without_value(EventCounter::Done done) {
  return [done = std::move(done)](std::error_code error, bool) { done(error); };
}

// A caller's stop already requested: told at once (on the loop, with no value), nothing sent.
template <class Value>
bool cancelled_before(const std::shared_ptr<EventObject>& object, const std::stop_token& stop,
                      const std::function<void(std::error_code, Value)>& done) {
  if (!stop.stop_requested()) return false;
  detail::tell(object, done, std::make_error_code(std::errc::operation_canceled), Value{});
  return true;
}

// Why an operation's wait ended: its own outcome, or a cancellation when the caller stopped it.
bool finished_or_cancelled(bool outcome, bool cancelled) {
  if (cancelled) throw std::system_error(std::make_error_code(std::errc::operation_canceled));
  return outcome;
}

}  // namespace

EventCounter::EventCounter(std::shared_ptr<detail::EventObject> object) : object_(std::move(object)) {}

EventCounter::~EventCounter() { object_->closing.request_stop(); }

const std::string& EventCounter::key() const noexcept { return object_->announced.key; }

EventLatch::EventLatch(EventClient& client, std::string key, LatchOptions options)
    : EventCounter(std::make_shared<EventObject>(EventObject{
          detail::latch_calls::announced(client.client(), std::move(key), options, "EventLatch"), client.routes_, {}})),
      options_(options) {}

void EventLatch::try_set_count(std::int64_t count, BoolDone done) {
  run_operation<bool>(
      object(),
      [count](EventObject& latch) { return detail::latch_calls::try_set_count(*latch.routes, latch.announced, count); },
      std::move(done));
}

void EventLatch::count_down(Done done) {
  run_operation<bool>(
      object(),
      [](EventObject& latch) -> Task<bool> {
        co_await detail::latch_calls::count_down(*latch.routes, latch.announced);
        co_return true;
      },
      without_value(std::move(done)));
}

void EventLatch::count(CountDone done) {
  run_operation<std::int64_t>(
      object(), [](EventObject& latch) { return detail::latch_calls::count(*latch.routes, latch.announced); },
      std::move(done));
}

void EventLatch::wait(Clock::time_point deadline, std::stop_token stop, BoolDone done) {
  if (cancelled_before(object(), stop, done)) return;
  const auto recheck = options_.recheck;
  run_operation<bool>(
      object(),
      [deadline, stop, recheck](EventObject& latch) -> Task<bool> {
        const OperationStop ends(stop, latch.closing.get_token());
        const bool open = co_await detail::latch_calls::wait(*latch.routes, latch.announced, latch.loop(), deadline,
                                                             ends.token(), recheck);
        co_return finished_or_cancelled(open, stop.stop_requested());
      },
      std::move(done));
}

EventSemaphore::EventSemaphore(EventClient& client, std::string key, SemaphoreOptions options)
    : EventCounter(std::make_shared<EventObject>(
          EventObject{detail::semaphore_calls::announced(client.client(), std::move(key), options, "EventSemaphore"),
                      client.routes_,
                      {}})),
      options_(options) {}

namespace calls = detail::semaphore_calls;

void EventSemaphore::try_set_permits(std::int64_t permits, BoolDone done) {
  run_operation<bool>(
      object(),
      [permits](EventObject& semaphore) {
        return calls::try_set_permits(*semaphore.routes, semaphore.announced, permits);
      },
      std::move(done));
}

void EventSemaphore::add_permits(std::int64_t permits, CountDone done) {
  run_operation<std::int64_t>(
      object(),
      [permits](EventObject& semaphore) { return calls::add_permits(*semaphore.routes, semaphore.announced, permits); },
      std::move(done));
}

void EventSemaphore::available(CountDone done) {
  run_operation<std::int64_t>(
      object(), [](EventObject& semaphore) { return calls::available(*semaphore.routes, semaphore.announced); },
      std::move(done));
}

void EventSemaphore::drain(CountDone done) {
  run_operation<std::int64_t>(
      object(), [](EventObject& semaphore) { return calls::drain(*semaphore.routes, semaphore.announced); },
      std::move(done));
}

void EventSemaphore::try_acquire(std::int64_t permits, BoolDone done) {
  run_operation<bool>(
      object(),
      [permits](EventObject& semaphore) { return calls::try_acquire(*semaphore.routes, semaphore.announced, permits); },
      std::move(done));
}

void EventSemaphore::acquire(std::int64_t permits, Clock::time_point deadline, std::stop_token stop, BoolDone done) {
  if (cancelled_before(object(), stop, done)) return;
  const auto recheck = options_.recheck;
  run_operation<bool>(
      object(),
      [permits, deadline, stop, recheck](EventObject& semaphore) -> Task<bool> {
        const OperationStop ends(stop, semaphore.closing.get_token());
        const bool taken = co_await calls::acquire(*semaphore.routes, semaphore.announced, permits, semaphore.loop(),
                                                   deadline, ends.token(), recheck);
        // Won by an attempt sent before the stop (the caller's, or the object going): given back,
        // so a cancelled acquire never keeps permits. The caller's stop is read once: it may come
        // from another thread between two reads.
        const bool cancelled = stop.stop_requested();
        if (taken && (cancelled || ends.token().stop_requested())) {
          co_await calls::release(*semaphore.routes, semaphore.announced, permits);
        }
        co_return finished_or_cancelled(taken, cancelled);
      },
      std::move(done));
}

void EventSemaphore::release(std::int64_t permits, Done done) {
  run_operation<bool>(
      object(),
      [permits](EventObject& semaphore) -> Task<bool> {
        co_await calls::release(*semaphore.routes, semaphore.announced, permits);
        co_return true;
      },
      without_value(std::move(done)));
}

EventLeasedSemaphore::EventLeasedSemaphore(EventClient& client, std::string key, LeasedSemaphoreOptions options)
    : EventCounter(std::make_shared<EventObject>(
          EventObject{detail::leased_calls::announced(client.client(), std::move(key), options, "EventLeasedSemaphore"),
                      client.routes_,
                      {}})),
      options_(options) {}

namespace leased = detail::leased_calls;

void EventLeasedSemaphore::try_set_permits(std::int64_t permits, BoolDone done) {
  run_operation<bool>(
      object(),
      [permits](EventObject& semaphore) {
        return leased::try_set_permits(*semaphore.routes, semaphore.announced, permits);
      },
      std::move(done));
}

void EventLeasedSemaphore::add_permits(std::int64_t permits, CountDone done) {
  run_operation<std::int64_t>(
      object(),
      [permits](EventObject& semaphore) {
        return leased::add_permits(*semaphore.routes, semaphore.announced, permits);
      },
      std::move(done));
}

void EventLeasedSemaphore::available(CountDone done) {
  run_operation<std::int64_t>(
      object(), [](EventObject& semaphore) { return leased::available(*semaphore.routes, semaphore.announced); },
      std::move(done));
}

void EventLeasedSemaphore::acquire(std::chrono::milliseconds lease, Clock::time_point deadline, std::stop_token stop,
                                   PermitDone done) {
  acquire(1, lease, deadline, std::move(stop),
          [done = std::move(done)](std::error_code error, std::vector<std::string> permits) {
            done(error, permits.empty() ? std::string() : std::move(permits.front()));
          });
}

void EventLeasedSemaphore::acquire(std::int64_t permits, std::chrono::milliseconds lease, Clock::time_point deadline,
                                   std::stop_token stop, PermitsDone done) {
  if (cancelled_before(object(), stop, done)) return;
  const auto ids = options_.ids;
  const auto recheck = options_.recheck;
  run_operation<std::vector<std::string>>(
      object(),
      [permits, lease, deadline, stop, ids, recheck](EventObject& semaphore) -> Task<std::vector<std::string>> {
        const OperationStop ends(stop, semaphore.closing.get_token());
        std::vector<std::string> taken = co_await leased::acquire(*semaphore.routes, semaphore.announced, ids, permits,
                                                                  lease, semaphore.loop(), deadline, ends.token(),
                                                                  recheck);
        // Won by an attempt sent before the stop: given back, so a cancelled acquire keeps none.
        const bool cancelled = stop.stop_requested();
        if (!taken.empty() && (cancelled || ends.token().stop_requested())) {
          // One permit by the single release (given back even if its lease just ended), several
          // all or none.
          if (taken.size() == 1) {
            (void)co_await leased::release(*semaphore.routes, semaphore.announced, ids, taken.front());
          } else {
            (void)co_await leased::release(*semaphore.routes, semaphore.announced, ids, taken);
          }
        }
        (void)finished_or_cancelled(!taken.empty(), cancelled);
        co_return taken;
      },
      std::move(done));
}

void EventLeasedSemaphore::release(std::string permit, BoolDone done) {
  const auto ids = options_.ids;
  run_operation<bool>(
      object(),
      [permit = std::move(permit), ids](EventObject& semaphore) {
        return leased::release(*semaphore.routes, semaphore.announced, ids, permit);
      },
      std::move(done));
}

void EventLeasedSemaphore::release(std::vector<std::string> permits, CountDone done) {
  const auto ids = options_.ids;
  run_operation<std::int64_t>(
      object(),
      [permits = std::move(permits), ids](EventObject& semaphore) {
        return leased::release(*semaphore.routes, semaphore.announced, ids, permits);
      },
      std::move(done));
}

void EventLeasedSemaphore::update_lease(std::string permit, std::chrono::milliseconds lease, BoolDone done) {
  const auto ids = options_.ids;
  run_operation<bool>(
      object(),
      [permit = std::move(permit), lease, ids](EventObject& semaphore) {
        return leased::update_lease(*semaphore.routes, semaphore.announced, ids, permit, lease);
      },
      std::move(done));
}

}  // namespace lockbridge
