// The files a TLS context is built from (the CA bundle, a hashed CA directory, the client
// certificate and its key), read with a bound on time and size: a FIFO nobody writes, a terminal or
// a device that never ends must not hold a connect past its deadline, nor fill memory. What is not
// a regular file (a pipe, bash's <(...)) can be read only once; TlsFile::regular says so.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "transport/transport_error.hpp"

namespace lockbridge::detail {

// Which file, in the words of an error message: "the CA file" and the CLI option that names it.
struct TlsInput {
  std::string_view what;
  std::string_view option;
};
inline constexpr TlsInput kCaFile{"the CA file", "--cacert"};
inline constexpr TlsInput kCaDirectory{"the CA directory", "--cacertdir"};
inline constexpr TlsInput kCertificate{"the client certificate", "--cert"};
inline constexpr TlsInput kKey{"the client key", "--key; PEM, not encrypted"};

// Far above any PEM bundle of CAs (a system's whole store is a few hundred KiB).
inline constexpr std::size_t kMaxTlsFileSize = std::size_t{4} << 20;

struct TlsFile {
  std::string path;
  std::string bytes;
  bool regular = true;  // false: a pipe or device, which cannot be read again
};

// The error for `input` at `path`: TransportError(tls), "cannot use the CA file '/x' (--cacert): <reason>".
[[noreturn]] void tls_file_failure(const TlsInput& input, const std::string& path, const std::string& reason);

// The whole of `path`, read by `deadline`. Throws tls_file_failure's error: it cannot be opened or
// read, is a directory, is larger than kMaxTlsFileSize, or does not end by the deadline.
TlsFile read_tls_file(const TlsInput& input, const std::string& path, Deadline deadline);

// The certificates of a hashed CA directory, as `openssl rehash` (or c_rehash) names them:
// HHHHHHHH.N, each read as above. Throws when the directory cannot be read, is not one, or holds
// no such file: OpenSSL would look it up only at verification, and call the server's CA unknown.
std::vector<TlsFile> read_ca_directory(const std::string& path, Deadline deadline);

}  // namespace lockbridge::detail
