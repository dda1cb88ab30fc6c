// A stream buffer that writes to a file descriptor and keeps the first write error (errno), so a
// full disk, a file-size limit or a closed pipe is reported with its cause: std::ofstream and
// std::cout only know that something failed. Output files (output_file.hpp) and standard output
// (guarded() in cli_common.hpp) write through it.
#pragma once

#include <array>
#include <cstddef>
#include <streambuf>
#include <string_view>

namespace lockbridge::tools {

// Writes all of `bytes` to `fd`, again after EINTR and short writes. Returns 0, or the errno of the
// write that failed (EIO for one that wrote nothing); `written` counts the bytes that got through.
int write_all(int fd, std::string_view bytes, std::size_t& written) noexcept;

class FdBuffer : public std::streambuf {
 public:
  // `owned`: close the descriptor with close() or on destruction.
  FdBuffer(int fd, bool owned) : fd_(fd), owned_(owned) { setp(data_.data(), data_.data() + data_.size()); }
  ~FdBuffer() override;  // bytes not flushed are dropped: flush (or commit) first
  FdBuffer(const FdBuffer&) = delete;
  FdBuffer& operator=(const FdBuffer&) = delete;

  int fd() const noexcept { return fd_; }
  // The errno of the first write that failed; 0 while every write succeeded. After a failure the
  // file already misses bytes, so nothing more is written.
  int error() const noexcept { return error_; }
  // How many bytes have reached the descriptor so far (not those still buffered).
  unsigned long long written() const noexcept { return written_; }
  // Closes an owned descriptor; false (errno set) when close reports a failed write.
  bool close() noexcept;

 protected:
  int_type overflow(int_type c) override;
  int sync() override;

 private:
  bool drain() noexcept;

  int fd_;
  bool owned_;
  int error_ = 0;
  unsigned long long written_ = 0;
  std::array<char, 1 << 16> data_{};
};

}  // namespace lockbridge::tools
