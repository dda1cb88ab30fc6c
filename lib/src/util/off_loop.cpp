#include "util/off_loop.hpp"

#include <utility>

#include "util/background_thread.hpp"

namespace lockbridge::detail {

OffLoop::~OffLoop() {
  std::lock_guard lock(alive_->mutex);
  alive_->alive = false;
}

void OffLoop::run(const char* name, std::function<std::function<void()>()> work) {
  start_background_thread(name, [alive = alive_, loop = &loop_, work = std::move(work)] {
    std::function<void()> found = work();
    std::lock_guard lock(alive->mutex);
    if (alive->alive) loop->post(std::move(found));
  }).detach();
}

}  // namespace lockbridge::detail
