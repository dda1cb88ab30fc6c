#include "transport/tls_files.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "util/poll_timeout.hpp"

namespace lockbridge::detail {
namespace {

struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

// Waits until `fd` is readable (or hung up) by `deadline`: 0, or ETIMEDOUT when the deadline
// passed first, or poll's errno. A signal (the CLI's Ctrl-C handler) only shortens one poll: the
// deadline still bounds the wait.
int readable_by(int fd, Deadline deadline) {
  for (;;) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd file{fd, POLLIN, 0};
    const int ready = ::poll(&file, 1, poll_timeout(std::max(left, std::chrono::milliseconds::zero())));
    if (ready > 0) return 0;
    if (ready < 0 && errno != EINTR) return errno;
    if (left.count() <= 0) return ETIMEDOUT;
  }
}

// Hash-directory names: eight hex digits, a dot, a number (CRLs, HHHHHHHH.rN, are not loaded).
bool is_hashed_name(std::string_view name) {
  const auto dot = name.find('.');
  return dot == 8 && name.substr(0, 8).find_first_not_of("0123456789abcdef") == std::string_view::npos &&
         name.size() > 9 && name.substr(9).find_first_not_of("0123456789") == std::string_view::npos;
}

}  // namespace

void tls_file_failure(const TlsInput& input, const std::string& path, const std::string& reason) {
  throw TransportError(Errc::tls, "cannot use " + std::string(input.what) + " '" + path + "' (" +
                                      std::string(input.option) + "): " + reason);
}

TlsFile read_tls_file(const TlsInput& input, const std::string& path, Deadline deadline) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, outside any deadline.
  const FdCloser file{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)};
  if (file.fd < 0) tls_file_failure(input, path, std::strerror(errno));
  struct stat status {};
  if (::fstat(file.fd, &status) != 0) tls_file_failure(input, path, std::strerror(errno));
  if (S_ISDIR(status.st_mode)) {
    tls_file_failure(input, path,
                     input.option == kCaFile.option ? "it is a directory (a directory of hashed CAs is --cacertdir)"
                                                    : "it is a directory");
  }
  TlsFile read{path, {}, S_ISREG(status.st_mode)};
  if (read.regular && static_cast<std::uint64_t>(status.st_size) > kMaxTlsFileSize) {
    tls_file_failure(input, path, "it is larger than 4 MiB, which no PEM file of certificates or a key is");
  }
  char buffer[16 * 1024];
  for (;;) {
    const ssize_t got = ::read(file.fd, buffer, sizeof buffer);
    if (got == 0) break;
    if (got > 0) {
      if (read.bytes.size() + static_cast<std::size_t>(got) > kMaxTlsFileSize) {
        tls_file_failure(input, path, "more than 4 MiB came, which no PEM file of certificates or a key holds");
      }
      read.bytes.append(buffer, static_cast<std::size_t>(got));
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (const int waited = readable_by(file.fd, deadline); waited == ETIMEDOUT) {
        tls_file_failure(input, path,
                         "it did not end within the connect timeout (a FIFO or device that nobody writes to?)");
      } else if (waited != 0) {
        tls_file_failure(input, path, std::strerror(waited));
      }
    } else if (errno != EINTR) {
      tls_file_failure(input, path, std::strerror(errno));
    }
  }
  if (read.bytes.empty())
    tls_file_failure(input, path, read.regular ? "it is empty" : "nothing came (a FIFO with no writer?)");
  return read;
}

std::vector<TlsFile> read_ca_directory(const std::string& path, Deadline deadline) {
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0) tls_file_failure(kCaDirectory, path, std::strerror(errno));
  if (!S_ISDIR(status.st_mode)) tls_file_failure(kCaDirectory, path, "it is not a directory (a CA bundle is --cacert)");
  const std::unique_ptr<DIR, int (*)(DIR*)> directory(::opendir(path.c_str()), ::closedir);
  if (!directory) tls_file_failure(kCaDirectory, path, std::strerror(errno));
  std::vector<std::string> names;
  errno = 0;
  while (const dirent* entry = ::readdir(directory.get())) {
    if (is_hashed_name(entry->d_name)) names.emplace_back(entry->d_name);
  }
  if (errno != 0) tls_file_failure(kCaDirectory, path, std::strerror(errno));
  if (names.empty()) {
    tls_file_failure(kCaDirectory, path,
                     "it holds no certificate named by its hash (HHHHHHHH.0): run 'openssl rehash' on it, or "
                     "give a PEM bundle with --cacert");
  }
  std::sort(names.begin(), names.end());
  std::vector<TlsFile> files;
  for (const std::string& name : names) files.push_back(read_tls_file(kCaDirectory, path + "/" + name, deadline));
  return files;
}

}  // namespace lockbridge::detail
