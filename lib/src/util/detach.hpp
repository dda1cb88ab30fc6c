// Lets a Task go on by itself: it keeps its own frame until it ends, and what it throws is
// dropped. For best-effort work that nobody awaits (a waiter leaving its queue after giving up).
#pragma once

#include <memory>

#include "util/task.hpp"

namespace lockbridge::detail {

inline void detach(Task<void> task) noexcept {
  if (task.done()) {  // ended in place: nothing to keep
    try {
      task.result();
    } catch (...) {  // best effort
    }
    return;
  }
  try {
    auto kept = std::make_shared<Task<void>>(std::move(task));
    // The callback holds the task until it ends; then the callback, and with it the task, goes.
    kept->then([kept]() mutable {
      try {
        kept->result();
      } catch (...) {  // best effort
      }
      kept.reset();
    });
  } catch (...) {  // out of memory: the work is dropped, as best-effort work may be
  }
}

}  // namespace lockbridge::detail
