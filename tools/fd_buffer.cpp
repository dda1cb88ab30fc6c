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

int write_all(int fd, std::string_view bytes, std::size_t& written) noexcept {
  written = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : EIO;
    written += static_cast<std::size_t>(n);
  }
  return 0;
}

bool FdBuffer::drain() noexcept {
  const std::string_view pending(pbase(), static_cast<std::size_t>(pptr() - pbase()));
  setp(data_.data(), data_.data() + data_.size());
  if (error_ != 0) return false;
  std::size_t written = 0;
  error_ = write_all(fd_, pending, written);
  written_ += written;
  return error_ == 0;
}

}  // namespace lockbridge::tools
