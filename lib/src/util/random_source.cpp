#include "util/random_source.hpp"

#include <sys/mman.h>
#include <sys/random.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include "lockbridge/error.hpp"

namespace lockbridge::detail {
namespace {

void draw_from_kernel(std::span<unsigned char> out) {
  std::size_t filled = 0;
  while (filled < out.size()) {
    const ssize_t n = getrandom(out.data() + filled, out.size() - filled, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error(Errc::io, std::string("getrandom failed: ") + std::strerror(errno));
    }
    filled += static_cast<std::size_t>(n);
  }
}

constexpr std::size_t kPage = 4096;

// One page: how many unused bytes are left, then the bytes. A fork zeroes the whole page in the
// child, `left` included, so the child's first draw refills it from the kernel.
struct RandomPage {
  std::uint32_t left;
  unsigned char bytes[kPage - sizeof(std::uint32_t)];
};
static_assert(sizeof(RandomPage) == kPage);

class ThreadPage {
 public:
  ThreadPage() {
    void* mapped = mmap(nullptr, kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapped == MAP_FAILED) return;
    // Without the wipe (a kernel before 4.14), buffered bytes could reach a child: draw directly.
    if (madvise(mapped, kPage, MADV_WIPEONFORK) != 0) {
      munmap(mapped, kPage);
      return;
    }
    page_ = static_cast<RandomPage*>(mapped);
  }
  ~ThreadPage() {
    if (page_ != nullptr) munmap(page_, kPage);  // the kernel zeroes a page before anyone reuses it
  }
  ThreadPage(const ThreadPage&) = delete;
  ThreadPage& operator=(const ThreadPage&) = delete;

  void fill(std::span<unsigned char> out) {
    if (page_ == nullptr) return draw_from_kernel(out);
    if (page_->left < out.size()) {
      draw_from_kernel(page_->bytes);
      page_->left = sizeof page_->bytes;
    }
    unsigned char* from = page_->bytes + (sizeof page_->bytes - page_->left);
    std::memcpy(out.data(), from, out.size());
    std::memset(from, 0, out.size());  // handed out once: a later reader of the page sees zeros
    page_->left -= static_cast<std::uint32_t>(out.size());
  }

 private:
  RandomPage* page_ = nullptr;
};

}  // namespace

void fill_random(std::span<unsigned char> out) {
  constexpr std::size_t kMaxDraw = 64;
  if (out.size() > kMaxDraw) return draw_from_kernel(out);
  thread_local ThreadPage page;
  page.fill(out);
}

}  // namespace lockbridge::detail
