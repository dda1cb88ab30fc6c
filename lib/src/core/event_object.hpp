// The event-driven front's objects that are not locks (EventLatch, EventSemaphore): what their
// operations share while they run, and how each runs: detached on the loop, holding that state
// (so an object may go while its operations finish what they must, a won permit given back), and
// telling its callback on the loop, never inside the call that started it, unless the object went
// first. Their steps are the blocking front's (core/latch_calls.hpp, core/semaphore_calls.hpp).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <system_error>
#include <utility>

#include "core/announced_key.hpp"
#include "core/pipeline_routes.hpp"
#include "lockbridge/error.hpp"
#include "util/detach.hpp"
#include "util/task.hpp"

namespace lockbridge::detail {

struct EventObject {
  AnnouncedKey announced;
  std::shared_ptr<PipelineRoutes> routes;
  std::stop_source closing;  // requested when the object goes: its waits end, nobody is told

  // The loop, without owning it: the program's loop outlives the objects on it.
  std::shared_ptr<EventLoop> loop() const {
    return std::shared_ptr<EventLoop>(std::shared_ptr<void>(), routes->loop().get());
  }
};

// A stop token that is requested when `caller`'s is or when the object goes. Lives in the
// operation's frame.
class OperationStop {
 public:
  OperationStop(const std::stop_token& caller, const std::stop_token& closing)
      : by_caller_(caller, Request{&source_}), by_closing_(closing, Request{&source_}) {}
  std::stop_token token() const noexcept { return source_.get_token(); }

 private:
  struct Request {
    std::stop_source* source;
    void operator()() const noexcept { source->request_stop(); }
  };
  std::stop_source source_;
  std::stop_callback<Request> by_caller_;
  std::stop_callback<Request> by_closing_;
};

// Tells `done` (error, value) on the loop, never inside the current call, and only if the object
// still exists by then.
template <class T>
void tell(const std::shared_ptr<EventObject>& object, std::function<void(std::error_code, T)> done,
          std::error_code error, T value) {
  if (object->closing.stop_requested()) return;
  object->loop()->post([object, done = std::move(done), error, value = std::move(value)] {
    if (!object->closing.stop_requested()) done(error, value);
  });
}

// run_operation's coroutine.
template <class T, class Body>
Task<void> operation_steps(std::shared_ptr<EventObject> object, Body body,
                           std::function<void(std::error_code, T)> done) {
  std::error_code error;
  T value{};
  try {
    value = co_await body(*object);
  } catch (const std::system_error& failure) {  // Error is one
    error = failure.code();
  } catch (const std::exception&) {
    error = make_error_code(Errc::io);
  }
  tell(object, std::move(done), error, std::move(value));
}

// Runs `body(object)` (a Task<T>) to its end; then, unless the object went, tells `done` its
// value or its error (an Error's code, or a std::system_error's: a cancellation; another
// exception as Errc::io), posted to the loop.
template <class T, class Body>
void run_operation(std::shared_ptr<EventObject> object, Body body, std::function<void(std::error_code, T)> done) {
  detach(operation_steps<T>(std::move(object), std::move(body), std::move(done)));
}

}  // namespace lockbridge::detail
