#include "fd_buffer.hpp"

#include <unistd.h>

#include <cerrno>

namespace lockbridge::tools {

FdBuffer::~FdBuffer() { close(); }

bool FdBuffer::close() noexcept {
  if (!owned_ || fd_ < 0) return true;
  const bool closed = ::close(fd_) == 0;
  fd_ = -1;
  return closed;
}

FdBuffer::int_type FdBuffer::overflow(int_type c) {
  if (!drain()) return traits_type::eof();
  if (!traits_type::eq_int_type(c, traits_type::eof())) {
    *pptr() = traits_type::to_char_type(c);
    pbump(1);
  }
  return traits_type::not_eof(c);
}

int FdBuffer::sync() { return drain() ? 0 : -1; }

bool FdBuffer::drain() noexcept {
  const char* from = pbase();
  const char* const end = pptr();
  setp(data_.data(), data_.data() + data_.size());
  if (error_ != 0) return false;
  while (from < end) {
    const ssize_t written = ::write(fd_, from, static_cast<std::size_t>(end - from));
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) {
      error_ = written < 0 ? errno : EIO;
      return false;
    }
    from += written;
    written_ += static_cast<unsigned long long>(written);
  }
  return true;
}

}  // namespace lockbridge::tools
